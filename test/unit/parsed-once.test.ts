// The answer is parsed once per turn: the model step takes the calls the streaming split found
// (StreamedAnswer) instead of parsing the stored text again. Here the calls and text that way are
// the ones a whole parse of the stored message gives, for the answers of the scripted fixtures
// and the parser's hard cases, under any chunking; and the fixtures' calls are still what they were
// (the snapshot was written by the parse before it streamed once).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { parse as parseYaml } from 'yaml';
import { describe, expect, it } from 'vitest';
import { StreamedAnswer, parseXmlToolCalls } from '../../src/parser/xml-stream.js';
import { extractCalls } from '../../src/turn/calls.js';
import { toolNames } from '../../src/tools/index.js';
import type { StoredMessage } from '../../src/types.js';

const FIXTURES = join(import.meta.dirname, '../fixtures');

/** Every `say` of the scripted fixtures, by file and turn. */
function fixtureAnswers(): [string, string][] {
  const out: [string, string][] = [];
  for (const f of readdirSync(FIXTURES)
    .filter((f) => f.endsWith('.yaml'))
    .sort()) {
    const script = parseYaml(readFileSync(join(FIXTURES, f), 'utf8')) as { turns?: { say?: string }[] };
    (script.turns ?? []).forEach((t, i) => typeof t.say === 'string' && out.push([`${f} turn ${i}`, t.say]));
  }
  return out;
}

/** What the parser must get right: cut calls, calls never closed, a parameter twice, thinking, unknown tags, entities, bad arguments. */
const HARD: [string, string][] = [
  ['cut call', 'Reading.\n<read_file>\n<path>src/a.ts</path>'],
  ['cut parameter', '<write_to_file><path>a</path><content>half'],
  ['never closed', '<read_file><path>a</path>\n<execute_command><command>ls</command><requires_approval>false</requires_approval></execute_command>'],
  ['parameter twice', '<read_file><path>a</path><path>b</path></read_file>'],
  ['thinking', '<thinking>plan: <read_file> first</thinking>Now.\n<read_file><path>x.ts</path></read_file>'],
  ['unclosed thinking', 'Text <thinking>still thinking <read_file><path>y</path></read_file>'],
  ['unknown tags', '<b>bold</b> a < b <foo><path>z</path></foo>'],
  ['entities', '<execute_command><command>a &amp;&amp; b 2&gt;&amp;1 &amp;lt;</command><requires_approval>false</requires_approval></execute_command>'],
  ['invalid arguments', '<read_file><file>a</file></read_file><list_files><path>.</path><recursive>maybe</recursive></list_files>'],
  [
    'several',
    '<read_file><path>a</path></read_file> and <read_file><path>b</path></read_file>\n<attempt_completion><result>done</result></attempt_completion>',
  ],
];

const message = (content: string): StoredMessage => ({ conversationId: 'c', seq: 7, turn: 3, role: 'assistant', kind: 'assistant', content, tokens: 0 });

function streamed(text: string, sizes: number[]): StreamedAnswer {
  const a = new StreamedAnswer(toolNames());
  let k = 0;
  for (let i = 0; i < text.length;) {
    const n = sizes[k++ % sizes.length]!;
    a.push(text.slice(i, i + n));
    i += n;
  }
  a.end();
  return a;
}

const ANSWERS = [...fixtureAnswers(), ...HARD];

describe('the answer parsed once', () => {
  it('reads every fixture answer', () => {
    expect(fixtureAnswers().length).toBeGreaterThan(10);
  });

  it.each(ANSWERS)('%s: the streamed split gives the calls and text of a whole parse, in any chunking', (_name, text) => {
    const whole = parseXmlToolCalls(text, toolNames());
    const calls = extractCalls(message(text));
    for (const sizes of [[text.length || 1], [1], [3, 17, 5], [4096]]) {
      const xml = streamed(text, sizes).parseOf(text);
      expect(xml).toEqual(whole);
      expect(extractCalls(message(text), xml)).toEqual(calls);
    }
  });

  it('under random chunkings too', () => {
    fc.assert(
      fc.property(fc.constantFrom(...ANSWERS), fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 12 }), ([, text], sizes) => {
        expect(extractCalls(message(text), streamed(text, sizes).parseOf(text))).toEqual(extractCalls(message(text)));
      }),
      { numRuns: 300, seed: 45 },
    );
  });

  it('the calls of the fixtures are what the parse found before it streamed once', () => {
    expect(Object.fromEntries(ANSWERS.map(([name, text]) => [name, extractCalls(message(text))]))).toMatchSnapshot();
  });

  it('a text other than what streamed (a continued or resumed answer) is not answered from the stream', () => {
    const a = streamed('<read_file><path>a</path></read_file>', [5]);
    expect(a.parseOf('earlier <read_file><path>a</path></read_file>')).toBeUndefined();
    expect(() => new StreamedAnswer(toolNames()).parseOf('')).toThrow(/before end/);
  });
});
