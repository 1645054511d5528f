import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NativeToolCallAssembler, locateJsonError, parseNativeArguments, type ToolCallFragment } from '../../src/parser/native.js';

/** Fragments as OpenAI streams them: id, type and name first, then arguments in pieces. */
function fragments(index: number, id: string, name: string, args: string, size: number): ToolCallFragment[] {
  const out: ToolCallFragment[] = [{ index, id, type: 'function', function: { name, arguments: '' } }];
  for (let i = 0; i < args.length; i += size) out.push({ index, function: { arguments: args.slice(i, i + size) } });
  return out;
}

describe('NativeToolCallAssembler', () => {
  it('concatenates argument fragments over many chunks', () => {
    const args = JSON.stringify({ path: 'src/a.ts', content: 'const a: Array<string> = ["x"];\n' });
    const a = new NativeToolCallAssembler();
    for (const f of fragments(0, 'call_1', 'write_to_file', args, 3)) a.push([f]);
    expect(a.calls()).toEqual([{ index: 0, id: 'call_1', name: 'write_to_file', arguments: args }]);
    expect(parseNativeArguments(a.calls()[0]!.arguments)).toEqual({ ok: true, value: JSON.parse(args) });
  });

  it('keeps two parallel calls apart when their fragments interleave', () => {
    const a1 = '{"path":"a.ts"}';
    const a2 = '{"command":"npm test","requires_approval":false}';
    const f1 = fragments(0, 'call_a', 'read_file', a1, 2);
    const f2 = fragments(1, 'call_b', 'execute_command', a2, 5);
    const asm = new NativeToolCallAssembler();
    // Interleave, sometimes two entries in one delta.
    for (let i = 0; i < Math.max(f1.length, f2.length); i++) {
      const batch = [f2[i], f1[i]].filter((f): f is ToolCallFragment => f !== undefined);
      asm.push(batch);
    }
    expect(asm.calls()).toEqual([
      { index: 0, id: 'call_a', name: 'read_file', arguments: a1 },
      { index: 1, id: 'call_b', name: 'execute_command', arguments: a2 },
    ]);
  });

  it('takes id and name from the first fragment that has them, ignoring repeats and empty strings', () => {
    const asm = new NativeToolCallAssembler();
    asm.push([{ index: 0, id: '', function: { name: '', arguments: '{"a"' } }]);
    asm.push([{ index: 0, id: 'call_1', function: { name: 'read_file', arguments: ':' } }]);
    asm.push([{ index: 0, id: 'call_2', function: { name: 'read_file', arguments: '1}' } }]);
    expect(asm.calls()).toEqual([{ index: 0, id: 'call_1', name: 'read_file', arguments: '{"a":1}' }]);
  });

  it('orders calls by index, whatever order they arrive in', () => {
    const asm = new NativeToolCallAssembler();
    asm.push([{ index: 2, id: 'c', function: { name: 'z', arguments: '{}' } }]);
    asm.push([{ index: 0, id: 'a', function: { name: 'x', arguments: '{}' } }]);
    expect(asm.calls().map((c) => c.id)).toEqual(['a', 'c']);
    expect(new NativeToolCallAssembler().calls()).toEqual([]);
  });

  it('copes with servers that omit index: a new id starts a call, no id continues the last', () => {
    const asm = new NativeToolCallAssembler();
    const noIndex = (f: Omit<ToolCallFragment, 'index'>): ToolCallFragment => f as ToolCallFragment;
    asm.push([noIndex({ id: 'a', function: { name: 'read_file', arguments: '{"path":' } })]);
    asm.push([noIndex({ function: { arguments: '"x"}' } })]);
    asm.push([noIndex({ id: 'b', function: { name: 'read_file', arguments: '{"path":"y"}' } })]);
    expect(asm.calls()).toEqual([
      { index: 0, id: 'a', name: 'read_file', arguments: '{"path":"x"}' },
      { index: 1, id: 'b', name: 'read_file', arguments: '{"path":"y"}' },
    ]);
  });

  it('assembles any argument string split any way (property)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.integer({ min: 1, max: 9 }), (v, size) => {
        const args = JSON.stringify({ v });
        const asm = new NativeToolCallAssembler();
        for (const f of fragments(0, 'id', 'tool', args, size)) asm.push([f]);
        expect(asm.calls()[0]!.arguments).toBe(args);
      }),
    );
  });
});

describe('parseNativeArguments', () => {
  it('parses an object, and treats an empty string as no arguments', () => {
    expect(parseNativeArguments('{"path":"a","n":[1,{"b":null}]}')).toEqual({ ok: true, value: { path: 'a', n: [1, { b: null }] } });
    expect(parseNativeArguments('')).toEqual({ ok: true, value: {} });
    expect(parseNativeArguments('  \n')).toEqual({ ok: true, value: {} });
  });

  it('rejects JSON that is not an object', () => {
    for (const raw of ['[1,2]', '"x"', '42', 'null', 'true']) {
      const r = parseNativeArguments(raw);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.error).toMatch(/must be a JSON object/);
    }
  });

  it('quotes the position and an excerpt of invalid JSON', () => {
    const raw = '{"path": "src/a.ts" "content": "hello"}';
    const r = parseNativeArguments(raw);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error).toContain('position 20 (line 1, column 21)');
    expect(r.error).toContain('expected "," or "}" after a property value');
    expect(r.error).toContain('{"path": "src/a.ts" »"content": "hello"}');
  });

  it('explains truncated JSON (cut off) and common mistakes', () => {
    const cases: [string, RegExp][] = [
      ['{"path": "a.ts", "content": "abc', /string that starts at position 28 is not closed: the text ends at position 32.*cut off/],
      ['{"path": "a.ts"', /object is not closed: the text ends at position 15/],
      ["{'path': 'a.ts'}", /property name in double quotes/],
      ['{"path": "a.ts",}', /trailing comma/],
      ['{"a": tru}', /expected true/],
      ['{"a": 01}', /invalid number/],
      ['{"a": "x\ny"}', /raw newline inside a string/],
      ['{"a": "\\q"}', /invalid escape/],
      ['{"a": 1} {"b": 2}', /unexpected text after the end/],
      ['{"a":\n  [1, 2,\n   ]}', /trailing comma before "\]" at position 18 \(line 3, column 4\)/],
    ];
    for (const [raw, re] of cases) {
      const r = parseNativeArguments(raw);
      expect(r.ok, raw).toBe(false);
      if (!r.ok) expect(r.error, raw).toMatch(re);
    }
  });

  it('keeps long excerpts short and on one line', () => {
    const raw = `{"content": "${'x'.repeat(500)}\n${'y'.repeat(500)}"}`;
    const r = parseNativeArguments(raw);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.length).toBeLessThan(400);
    expect(r.error).toMatch(/…x+»\\ny+…/);
  });

  it('finds an error exactly when JSON.parse does (property)', () => {
    // Valid JSON, and mutations of it (a character dropped, inserted or the text cut off).
    const mutated = fc
      .tuple(fc.jsonValue(), fc.nat(), fc.constantFrom('drop', 'insert', 'cut'), fc.constantFrom('"', '{', '}', ',', ':', ' ', 'x', '1', '\\', ']'))
      .map(([v, n, op, ch]) => {
        const s = JSON.stringify({ v }, null, n % 2 ? 1 : undefined);
        const i = n % (s.length + 1);
        return op === 'drop' ? s.slice(0, i) + s.slice(i + 1) : op === 'insert' ? s.slice(0, i) + ch + s.slice(i) : s.slice(0, i);
      });
    fc.assert(
      fc.property(
        fc.oneof(
          fc.jsonValue().map((v) => JSON.stringify(v)),
          mutated,
        ),
        (s) => {
          let valid = true;
          try {
            JSON.parse(s);
          } catch {
            valid = false;
          }
          const fault = locateJsonError(s);
          expect(fault === null).toBe(valid);
          if (fault) expect(fault.pos).toBeLessThanOrEqual(s.length);
        },
      ),
      { numRuns: 3000 },
    );
  });
});
