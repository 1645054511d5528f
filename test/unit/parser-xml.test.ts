import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { XmlToolCallParser, coalesce, parseXmlToolCalls, unescapeXml, type ParseEvent } from '../../src/parser/xml-stream.js';

const TOOLS = ['read_file', 'write_to_file', 'execute_command', 'replace_in_file', 'attempt_completion'];

function parseChunks(chunks: readonly string[], tools: readonly string[] = TOOLS): ParseEvent[] {
  const p = new XmlToolCallParser(tools);
  const out: ParseEvent[] = [];
  for (const c of chunks) out.push(...p.push(c));
  out.push(...p.end());
  return out;
}

function parseWhole(input: string): ParseEvent[] {
  return coalesce(parseChunks([input]));
}

function splitBySizes(input: string, sizes: readonly number[]): string[] {
  const chunks: string[] = [];
  let i = 0;
  let k = 0;
  while (i < input.length) {
    const n = sizes.length ? sizes[k++ % sizes.length]! : 1;
    chunks.push(input.slice(i, i + n));
    i += n;
  }
  return chunks;
}

function splitAt(input: string, cuts: readonly number[]): string[] {
  const points = [...new Set(cuts.map((c) => c % (input.length + 1)))].sort((a, b) => a - b);
  const chunks: string[] = [];
  let prev = 0;
  for (const p of points) {
    chunks.push(input.slice(prev, p));
    prev = p;
  }
  chunks.push(input.slice(prev));
  return chunks;
}

// ---- Generators for the model-based property -------------------------------------------------
// Each segment knows the events it must produce. Tokens are chosen so that no concatenation of
// segments forms a tag by accident (no lone '>' token after a partial tag, no 'ing>' after
// '</think', …), so the expected events are exactly the concatenation of the segments' events.

type Seg = { raw: string; events: ParseEvent[] };

const textToken = fc.constantFrom(
  'Hello',
  ' ',
  '\n',
  'I will read the file.',
  'a < b',
  '1<2',
  'x <= y && y >= z',
  '<',
  '<<',
  '</',
  '<read',
  '<read_fil',
  '<write_to_file',
  '<thinking',
  '<thinkin',
  '</thinking>',
  '</read_file>',
  '<read_file ',
  '<read_file attr="1">',
  '<Read_File>',
  '<readerx>',
  '<path>p</path>',
  '<b>bold</b>',
  '&lt;',
  '&amp;',
  '"quoted"',
  "it's",
  '`code`',
  ' > ',
);
const textSeg: fc.Arbitrary<Seg> = fc
  .array(textToken, { minLength: 1, maxLength: 6 })
  .map((ts) => ts.join(''))
  .map((t) => ({ raw: t, events: [{ type: 'text', text: t }] }));

const thinkingToken = fc.constantFrom('Let me think.', ' ', '\n', 'a < b', '</think', '<thinking>', '</', '<read_file>', '</read_file>', '&lt;', ' > ');
const thinkingSeg: fc.Arbitrary<Seg> = fc.array(thinkingToken, { maxLength: 5 }).map((ts) => {
  const body = ts.join('');
  return { raw: `<thinking>${body}</thinking>`, events: body ? [{ type: 'thinking', text: body }] : [] };
});

// [raw, decoded] pieces of parameter values: special characters, entities, tag-like text.
const valueToken = fc.constantFrom<[string, string]>(
  ['const x: Array<string> = [];', 'const x: Array<string> = [];'],
  ['\n', '\n'],
  [' ', ' '],
  ['<div class="a">hi</div>', '<div class="a">hi</div>'],
  ['</path>', '</path>'],
  ['</content', '</content'],
  ['<content>', '<content>'],
  ['</', '</'],
  ['<', '<'],
  ['</read_file>', '</read_file>'],
  ['<write_to_file>', '<write_to_file>'],
  ['&lt;', '<'],
  ['&gt;', '>'],
  ['&amp;', '&'],
  ['&quot;', '"'],
  ['&apos;', "'"],
  ['&amp;lt;', '&lt;'],
  ['&nbsp;', '&nbsp;'],
  ['&', '&'],
  ['&#60;', '&#60;'],
  ['a && b', 'a && b'],
  ['ünïcødé 🚀', 'ünïcødé 🚀'],
  [' > ', ' > '],
  ['<<<<<<< SEARCH', '<<<<<<< SEARCH'],
  ['>>>>>>> REPLACE', '>>>>>>> REPLACE'],
);

function trimOne(s: string): string {
  let a = s.startsWith('\r\n') ? 2 : s.startsWith('\n') ? 1 : 0;
  let b = s.length;
  if (b - a >= 2 && s.endsWith('\r\n')) b -= 2;
  else if (b > a && s.endsWith('\n')) b -= 1;
  return s.slice(a, b);
}

const PARAM_NAMES = ['path', 'content', 'command', 'diff', 'requires_approval', 'result'];
const paramArb = fc
  .record({
    name: fc.constantFrom(...PARAM_NAMES),
    tokens: fc.array(valueToken, { maxLength: 6 }),
    wrap: fc.boolean(),
  })
  // A value cannot contain its own close tag (that would end it).
  .filter(
    (p) =>
      !p.tokens
        .map((t) => t[0])
        .join('')
        .includes(`</${p.name}>`),
  );

const toolSeg: fc.Arbitrary<Seg> = fc
  .record({
    tool: fc.constantFrom(...TOOLS),
    params: fc.uniqueArray(paramArb, { selector: (p) => p.name, maxLength: 3 }),
    sep: fc.constantFrom('', '\n', '\n  ', ' stray text '),
  })
  .map(({ tool, params, sep }) => {
    let raw = `<${tool}>${sep}`;
    const expected: Record<string, string> = {};
    for (const p of params) {
      const rawValue = p.tokens.map((t) => t[0]).join('');
      const decoded = p.tokens.map((t) => t[1]).join('');
      raw += p.wrap ? `<${p.name}>\n${rawValue}\n</${p.name}>${sep}` : `<${p.name}>${rawValue}</${p.name}>${sep}`;
      expected[p.name] = trimOne(p.wrap ? `\n${decoded}\n` : decoded);
    }
    raw += `</${tool}>`;
    return { raw, events: [{ type: 'tool_call', name: tool, params: expected, raw }] };
  });

/** A message that ends inside a tool call or a thinking block (cut off for length). */
const cutTail: fc.Arbitrary<Seg> = fc.oneof(
  fc.tuple(toolSeg, fc.nat()).map(([seg, n]): Seg => {
    const name = (seg.events[0] as { name: string }).name;
    const min = name.length + 2; // just after the open tag
    const cut = min + (n % (seg.raw.length - min)); // strictly before the end
    const raw = seg.raw.slice(0, cut);
    return { raw, events: [{ type: 'tool_error', name, error: '', raw }] };
  }),
  fc.tuple(thinkingSeg, fc.nat()).map(([seg, n]): Seg => {
    const cut = 10 + (n % (seg.raw.length - 10));
    const raw = seg.raw.slice(0, cut);
    const body = raw.slice(10);
    return { raw, events: body ? [{ type: 'thinking', text: body }] : [] };
  }),
);

const messageArb = fc
  .tuple(
    fc.array(fc.oneof({ weight: 3, arbitrary: textSeg }, { weight: 1, arbitrary: thinkingSeg }, { weight: 2, arbitrary: toolSeg }), { maxLength: 8 }),
    fc.option(cutTail),
  )
  .map(([segs, tail]) => (tail ? [...segs, tail] : segs));

/** tool_error messages are prose; the model-based test checks everything but their wording. */
function normalise(events: ParseEvent[]): ParseEvent[] {
  return coalesce(events).map((e) => (e.type === 'tool_error' ? { ...e, error: '' } : e));
}

describe('XmlToolCallParser: properties', () => {
  it('gives the expected events for generated messages, under any chunking (incl. 1-char chunks)', () => {
    fc.assert(
      fc.property(messageArb, fc.array(fc.integer({ min: 1, max: 40 }), { maxLength: 12 }), (segs, sizes) => {
        const input = segs.map((s) => s.raw).join('');
        const expected = normalise(segs.flatMap((s) => s.events));
        expect(normalise(parseChunks([input]))).toEqual(expected);
        expect(normalise(parseChunks(splitBySizes(input, sizes)))).toEqual(expected);
        expect(normalise(parseChunks(splitBySizes(input, [1])))).toEqual(expected);
      }),
      { numRuns: 1500 },
    );
  });

  // Arbitrary concatenations of tag-ish fragments: here nothing is known about the result except
  // that chunking must not change it, and that no character is lost.
  const fragment = fc.constantFrom(
    '<',
    '>',
    '/',
    '</',
    '<read',
    '<read_file',
    '<read_file>',
    '</read_file>',
    '<write_to_file',
    '<write_to_file>',
    '</write_to_file>',
    '<path>',
    '</path>',
    '<content>',
    '</content>',
    '<thinking>',
    '</thinking>',
    '<thinking',
    '</think',
    'ing>',
    '_file>',
    'a',
    ' ',
    '\n',
    '&lt;',
    '&amp;',
    '&',
    'lt;',
    'x<y',
    '<b>',
    '</b>',
    '<path',
    'content>',
  );
  const soupArb = fc.array(fragment, { maxLength: 60 }).map((fs) => fs.join(''));

  it('any chunking of the same input gives the same events (after coalescing)', () => {
    fc.assert(
      fc.property(soupArb, fc.array(fc.nat(), { maxLength: 20 }), (input, cuts) => {
        const whole = parseWhole(input);
        expect(coalesce(parseChunks(splitAt(input, cuts)))).toEqual(whole);
        expect(coalesce(parseChunks(splitBySizes(input, [1])))).toEqual(whole);
      }),
      { numRuns: 2000 },
    );
  });

  it('loses no character: text and raw rebuild the input exactly (inputs without thinking tags)', () => {
    const noThinking = soupArb.filter((s) => !s.includes('<thinking>'));
    fc.assert(
      fc.property(noThinking, fc.array(fc.nat(), { maxLength: 10 }), (input, cuts) => {
        const events = parseChunks(splitAt(input, cuts));
        const echoed = events.map((e) => (e.type === 'text' || e.type === 'thinking' ? e.text : e.raw)).join('');
        expect(echoed).toBe(input);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('XmlToolCallParser: tool blocks', () => {
  const message =
    'I will create the file.\n<write_to_file>\n<path>src/a.ts</path>\n<content>\nexport const a: Array<string> = [];\n</content>\n</write_to_file>\nDone.';

  it('parses a complete call with surrounding text', () => {
    expect(parseWhole(message)).toEqual([
      { type: 'text', text: 'I will create the file.\n' },
      {
        type: 'tool_call',
        name: 'write_to_file',
        params: { path: 'src/a.ts', content: 'export const a: Array<string> = [];' },
        raw: '<write_to_file>\n<path>src/a.ts</path>\n<content>\nexport const a: Array<string> = [];\n</content>\n</write_to_file>',
      },
      { type: 'text', text: '\nDone.' },
    ]);
  });

  it('gives the same events when split at every position (two chunks) and every pair of positions (three)', () => {
    const whole = parseWhole(message);
    for (let i = 0; i <= message.length; i++) {
      expect(coalesce(parseChunks([message.slice(0, i), message.slice(i)]))).toEqual(whole);
    }
    const short = 'a<read_file><path>x&lt;y</path></read_file>b';
    const shortWhole = parseWhole(short);
    for (let i = 0; i <= short.length; i++) {
      for (let j = i; j <= short.length; j++) {
        expect(coalesce(parseChunks([short.slice(0, i), short.slice(i, j), short.slice(j)]))).toEqual(shortWhole);
      }
    }
  });

  it('keeps unregistered tags as text', () => {
    const input = '<b>bold</b> <path>x</path> <Read_File>y</Read_File> <read_file attr="1">z</read_file> <read_file/> <list_files>';
    expect(parseWhole(input)).toEqual([{ type: 'text', text: input }]);
    // A tool not registered with this parser is text too.
    expect(coalesce(parseChunks(['<read_file><path>a</path></read_file>'], ['write_to_file']))).toEqual([
      { type: 'text', text: '<read_file><path>a</path></read_file>' },
    ]);
  });

  it('keeps tag-like content inside <content> verbatim', () => {
    const html = '<!doctype html>\n<html>\n  <body class="x">\n    <p>1 < 2 &amp;&amp; 3 > 2</p>\n  </body>\n</html>';
    const ts = 'function f<T extends Array<string>>(x: Map<string, T[]>): Promise<void> {}';
    const tricky = 'docs: close with </path> or </read_file>; a <path>nested</path> tag; </content';
    const input =
      `<write_to_file><path>index.html</path><content>\n${html}\n</content></write_to_file>` +
      `<write_to_file><path>f.ts</path><content>${ts}</content></write_to_file>` +
      `<write_to_file><path>t.md</path><content>${tricky}</content></write_to_file>`;
    const r = parseXmlToolCalls(input, TOOLS);
    expect(r.problems).toEqual([]);
    expect(r.calls.map((c) => c.params)).toEqual([
      { path: 'index.html', content: html.replace('&amp;&amp;', '&&') },
      { path: 'f.ts', content: ts },
      { path: 't.md', content: tricky },
    ]);
  });

  it('ends a parameter only at its own close tag, even past the tool close tag', () => {
    // `</write_to_file>` inside <content> is file content: the block ends at the close tag
    // that follows the parameter.
    const input = '<write_to_file><path>x.md</path><content>Use </write_to_file> to end.</content></write_to_file>';
    const r = parseXmlToolCalls(input, TOOLS);
    expect(r.calls).toEqual([{ name: 'write_to_file', params: { path: 'x.md', content: 'Use </write_to_file> to end.' }, raw: input }]);
  });

  it('unescapes the five XML entities once, and nothing else', () => {
    const r = parseXmlToolCalls(
      '<execute_command><command>a &lt; b &gt; c &amp;&amp; d &quot;e&quot; &apos;f&apos; &amp;lt; &nbsp; &#60; & x</command></execute_command>',
      TOOLS,
    );
    expect(r.calls[0]!.params.command).toBe(`a < b > c && d "e" 'f' &lt; &nbsp; &#60; & x`);
    expect(unescapeXml('&amp;amp;')).toBe('&amp;');
  });

  it('strips exactly one leading and one trailing newline of a value', () => {
    const r = parseXmlToolCalls(
      '<write_to_file><path>\na\n</path><content>\n\n  x\n\n</content></write_to_file>' +
        '<write_to_file><path>\r\nb\r\n</path><content>\n</content></write_to_file>' +
        '<write_to_file><path> c </path><content></content></write_to_file>',
      TOOLS,
    );
    expect(r.calls.map((c) => c.params)).toEqual([
      { path: 'a', content: '\n  x\n' },
      { path: 'b', content: '' },
      { path: ' c ', content: '' },
    ]);
  });

  it('reports a block still open at end() as an error and keeps its raw text', () => {
    const input = 'Writing:\n<write_to_file>\n<path>a.ts</path>\n<content>\nconst x = 1;\n';
    for (const chunks of [[input], splitBySizes(input, [1]), splitBySizes(input, [7])]) {
      const events = coalesce(parseChunks(chunks));
      expect(events).toHaveLength(2);
      expect(events[0]).toEqual({ type: 'text', text: 'Writing:\n' });
      const err = events[1]!;
      expect(err.type).toBe('tool_error');
      if (err.type !== 'tool_error') return;
      expect(err.name).toBe('write_to_file');
      expect(err.raw).toBe('<write_to_file>\n<path>a.ts</path>\n<content>\nconst x = 1;\n');
      expect(err.error).toMatch(/cut off/);
      expect(err.error).toMatch(/<\/write_to_file>/);
      expect(err.error).toMatch(/<content>/);
    }
    // Open between parameters, with a partial close tag held back at the end.
    const r = parseXmlToolCalls('<read_file><path>a</path></read_fi', TOOLS);
    expect(r.calls).toEqual([]);
    expect(r.problems).toEqual([{ name: 'read_file', error: expect.stringMatching(/cut off/), raw: '<read_file><path>a</path></read_fi' }]);
  });

  it('reports a call that was never closed when the next call starts, and parses the next one', () => {
    const input = '<read_file><path>a.ts</path>\n<read_file><path>b.ts</path></read_file>';
    const r = parseXmlToolCalls(input, TOOLS);
    expect(r.problems).toEqual([{ name: 'read_file', error: expect.stringMatching(/not closed/), raw: '<read_file><path>a.ts</path>\n' }]);
    expect(r.calls).toEqual([{ name: 'read_file', params: { path: 'b.ts' }, raw: '<read_file><path>b.ts</path></read_file>' }]);
  });

  it('reports a parameter given twice', () => {
    const r = parseXmlToolCalls('<read_file><path>a</path><path>b</path></read_file>', TOOLS);
    expect(r.calls).toEqual([]);
    expect(r.problems[0]!.error).toMatch(/<path> more than once/);
  });

  it('parses several calls in one message, in order', () => {
    const input =
      'First <read_file><path>a.ts</path></read_file> then <execute_command><command>npm test</command>' +
      '<requires_approval>false</requires_approval></execute_command> and <attempt_completion><result>\nAll done.\n</result></attempt_completion>';
    const r = parseXmlToolCalls(input, TOOLS);
    expect(r.text).toBe('First  then  and ');
    expect(r.calls.map((c) => [c.name, c.params])).toEqual([
      ['read_file', { path: 'a.ts' }],
      ['execute_command', { command: 'npm test', requires_approval: 'false' }],
      ['attempt_completion', { result: 'All done.' }],
    ]);
  });

  it('parses replace_in_file SEARCH/REPLACE diffs verbatim', () => {
    const diff = '<<<<<<< SEARCH\nif (a < b) {\n=======\nif (a <= b) {\n>>>>>>> REPLACE';
    const r = parseXmlToolCalls(`<replace_in_file><path>x.ts</path><diff>\n${diff}\n</diff></replace_in_file>`, TOOLS);
    expect(r.calls[0]!.params).toEqual({ path: 'x.ts', diff });
  });
});

describe('XmlToolCallParser: thinking and streaming', () => {
  it('sends <thinking> content to thinking events, never to text', () => {
    const input = 'A<thinking>plan: read <read_file> first</thinking>B<read_file><path>x</path></read_file>';
    expect(parseWhole(input)).toEqual([
      { type: 'text', text: 'A' },
      { type: 'thinking', text: 'plan: read <read_file> first' },
      { type: 'text', text: 'B' },
      { type: 'tool_call', name: 'read_file', params: { path: 'x' }, raw: '<read_file><path>x</path></read_file>' },
    ]);
    const r = parseXmlToolCalls(input, TOOLS);
    expect(r.text).toBe('AB');
    expect(r.thinking).toBe('plan: read <read_file> first');
  });

  it('flushes an unclosed thinking block as thinking at end()', () => {
    expect(coalesce(parseChunks(['x<thinking>still thinking </thi']))).toEqual([
      { type: 'text', text: 'x' },
      { type: 'thinking', text: 'still thinking </thi' },
    ]);
  });

  it('emits text as soon as it cannot be the start of a tag, and holds back only possible tags', () => {
    const p = new XmlToolCallParser(TOOLS);
    expect(p.push('Hello <')).toEqual([{ type: 'text', text: 'Hello ' }]);
    expect(p.push('b')).toEqual([{ type: 'text', text: '<b' }]);
    expect(p.push('> x <rea')).toEqual([{ type: 'text', text: '> x ' }]);
    expect(p.push('d_file')).toEqual([]);
    expect(p.push(' ')).toEqual([{ type: 'text', text: '<read_file ' }]);
    expect(p.push('<thinking>abc</thin')).toEqual([{ type: 'thinking', text: 'abc' }]);
    expect(p.push('k')).toEqual([]); // '</think' may still become '</thinking>'
    expect(p.push('s')).toEqual([{ type: 'thinking', text: '</thinks' }]);
    expect(p.push('</thinking><read_file><path>a</path>')).toEqual([]);
    expect(p.push('</read_file>')).toEqual([{ type: 'tool_call', name: 'read_file', params: { path: 'a' }, raw: '<read_file><path>a</path></read_file>' }]);
    expect(p.push('<')).toEqual([]);
    expect(p.end()).toEqual([{ type: 'text', text: '<' }]);
    expect(() => p.push('x')).toThrow(/after end/);
  });

  it('streams a large parameter value char by char without losing anything', () => {
    const content = 'line <a> & </b>\n'.repeat(5000);
    const input = `<write_to_file><path>big.txt</path><content>${content}</content></write_to_file>`;
    const events = parseChunks(splitBySizes(input, [1]));
    // One trailing newline of a value is dropped by design.
    expect(events).toEqual([{ type: 'tool_call', name: 'write_to_file', params: { path: 'big.txt', content: content.slice(0, -1) }, raw: input }]);
  });

  it('rejects tool names that cannot be XML tags', () => {
    expect(() => new XmlToolCallParser(['read file'])).toThrow(/invalid tool name/);
    expect(() => new XmlToolCallParser(['<x>'])).toThrow(/invalid tool name/);
  });
});
