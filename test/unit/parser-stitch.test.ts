import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseNativeArguments } from '../../src/parser/native.js';
import { longestOverlap, stitchContinuation, stitchNativeArguments } from '../../src/parser/stitch.js';

function naiveOverlap(a: string, b: string, max: number): number {
  for (let k = Math.min(max, a.length, b.length); k > 0; k--) if (a.endsWith(b.slice(0, k))) return k;
  return 0;
}

describe('stitchContinuation', () => {
  it('appends as is when the next segment does not repeat anything', () => {
    expect(stitchContinuation('The quick brown fox ', 'jumps over the lazy dog.')).toEqual({
      text: 'The quick brown fox jumps over the lazy dog.',
      overlap: 0,
    });
    expect(stitchContinuation('', 'abc')).toEqual({ text: 'abc', overlap: 0 });
    expect(stitchContinuation('abc', '')).toEqual({ text: 'abc', overlap: 0 });
  });

  it('removes the longest repeated tail', () => {
    const prev = 'function add(a: number, b: number) {\n  return a + ';
    const next = '  return a + b;\n}\n';
    expect(stitchContinuation(prev, next)).toEqual({ text: 'function add(a: number, b: number) {\n  return a + b;\n}\n', overlap: 13 });
    // The longest candidate wins over a shorter one that also matches.
    expect(stitchContinuation('xx abcabcabcabc', 'abcabcabcabc!')).toEqual({ text: 'xx abcabcabcabc!', overlap: 12 });
  });

  it('keeps short repetitions that are probably real text (minOverlap)', () => {
    // "ee" and " the" repeat by chance; they are below the default minimum of 8.
    expect(stitchContinuation('I see', 'eels')).toEqual({ text: 'I seeeels', overlap: 0 });
    expect(stitchContinuation('look at the', ' the end', { minOverlap: 8 })).toEqual({ text: 'look at the the end', overlap: 0 });
    expect(stitchContinuation('look at the', ' the end', { minOverlap: 4 })).toEqual({ text: 'look at the end', overlap: 4 });
  });

  it('drops a next segment that only repeats the tail', () => {
    expect(stitchContinuation('some long answer text', 'answer text')).toEqual({ text: 'some long answer text', overlap: 11 });
  });

  it('looks no further back than maxOverlap', () => {
    const tail = 'x'.repeat(30) + 'END';
    expect(stitchContinuation('a' + tail, tail + '!', { maxOverlap: 20 }).overlap).toBe(0);
    expect(stitchContinuation('a' + tail, tail + '!', { maxOverlap: 40 })).toEqual({ text: 'a' + tail + '!', overlap: 33 });
  });

  it('handles a restated tail with different leading whitespace', () => {
    // The model restarts the cut line on a new line, with its own indentation.
    const prev = 'class A {\n  method() {\n    const value = compute';
    expect(stitchContinuation(prev, '\n      const value = computeIt();\n  }\n}')).toEqual({
      text: 'class A {\n  method() {\n    const value = computeIt();\n  }\n}',
      overlap: 28,
    });
    // Less indentation than before: the exact match already covers it.
    expect(stitchContinuation('x\n    const value = compute', '  const value = computeIt();').text).toBe('x\n    const value = computeIt();');
    // Leading whitespace that starts genuinely new text is kept.
    expect(stitchContinuation('First paragraph.', '\n\nSecond paragraph.').text).toBe('First paragraph.\n\nSecond paragraph.');
  });

  it('finds the same overlap as a naive search (property)', () => {
    const s = fc.string({ unit: fc.constantFrom('a', 'b', ' ', '\n'), maxLength: 40 });
    fc.assert(
      fc.property(s, s, s, fc.integer({ min: 1, max: 50 }), (x, shared, y, max) => {
        const a = x + shared;
        const b = shared + y;
        expect(longestOverlap(a, b, max)).toBe(naiveOverlap(a, b, max));
      }),
      { numRuns: 3000 },
    );
  });

  it('rebuilds a text cut anywhere and continued with a repeated tail (property)', () => {
    // All characters distinct, so the only overlap is the one the test puts there.
    const distinct = fc.uniqueArray(fc.integer({ min: 0x4e00, max: 0x9fff }), { minLength: 40, maxLength: 300 }).map((cs) => String.fromCharCode(...cs));
    fc.assert(
      fc.property(distinct, fc.nat(), fc.integer({ min: 1, max: 39 }), fc.constantFrom('', '\n', '\n    '), (full, c, repeat, lead) => {
        const cut = repeat + (c % (full.length - repeat));
        const prev = full.slice(0, cut);
        const next = lead + full.slice(cut - repeat);
        const r = stitchContinuation(prev, next);
        if (repeat >= 8) expect(r).toEqual({ text: full, overlap: lead.length + repeat });
        else expect(r).toEqual({ text: prev + next, overlap: 0 });
      }),
      { numRuns: 1000 },
    );
  });
});

describe('stitchNativeArguments', () => {
  const full = JSON.stringify({ path: 'src/app.ts', content: 'export const app = createApp({ port: 8080 });\n' });

  it('appends a continuation that does not repeat', () => {
    const r = stitchNativeArguments(full.slice(0, 30), full.slice(30));
    expect(r).toEqual({ text: full, overlap: 0, mode: 'append' });
  });

  it('removes a repeated tail when the result is valid JSON', () => {
    const r = stitchNativeArguments(full.slice(0, 40), full.slice(25));
    expect(r).toEqual({ text: full, overlap: 15, mode: 'overlap' });
    expect(parseNativeArguments(r.text).ok).toBe(true);
  });

  it('keeps a repeat that is real content when removing it would break the JSON', () => {
    // The data really nests "server" in "server"; the continuation is not a restatement.
    const prev = '{"config": {"server": ';
    const next = '{"server": {"port": 80}}}}';
    expect(stitchNativeArguments(prev, next)).toEqual({ text: prev + next, overlap: 0, mode: 'append' });
  });

  it('prefers removing the repeat when both joins are valid JSON', () => {
    // Ambiguous: a model restating its tail is far more common than real content repeating
    // exactly at the cut, and plain-text stitching makes the same choice.
    expect(stitchNativeArguments('{"content": "abcdefghij', 'abcdefghij"}')).toEqual({
      text: '{"content": "abcdefghij"}',
      overlap: 10,
      mode: 'overlap',
    });
  });

  it('takes a complete object that starts over', () => {
    const r = stitchNativeArguments('{"path": "src/app.ts", "content": "export co', full);
    expect(r).toEqual({ text: full, overlap: 0, mode: 'restart' });
  });

  it('unwraps a continuation the model put in a code fence', () => {
    const r = stitchNativeArguments(full.slice(0, 30), '```json\n' + full.slice(30) + '\n```');
    expect(r.mode).toBe('unfenced');
    expect(r.text).toBe(full);
  });

  it('returns the best join while the arguments are still incomplete', () => {
    const r = stitchNativeArguments(full.slice(0, 40), full.slice(28, 60));
    expect(r).toEqual({ text: full.slice(0, 60), overlap: 12, mode: 'overlap' });
    // And a further segment completes it.
    const r2 = stitchNativeArguments(r.text, full.slice(50));
    expect(r2.text).toBe(full);
    expect(parseNativeArguments(r2.text)).toEqual({ ok: true, value: JSON.parse(full) });
  });
});
