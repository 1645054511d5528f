import { describe, expect, it } from 'vitest';
import { AnsiStripper, stripAnsi } from '../../src/sandbox/ansi.js';

describe('stripAnsi', () => {
  it('removes colours, cursor moves, titles and hyperlinks, and nothing else', () => {
    const coloured =
      '\u001b[1m\u001b[31mFAIL\u001b[39m\u001b[22m src/a.test.js\n\u001b[2K\u001b[1Gdone \u001b]0;title\u0007ok \u001b]8;;http://x\u001b\\link\u001b]8;;\u001b\\ \u009b32mgreen';
    expect(stripAnsi(coloured)).toBe('FAIL src/a.test.js\ndone ok link green');
    expect(stripAnsi('plain [31m text\twith tabs\n')).toBe('plain [31m text\twith tabs\n');
  });

  it('strips a sequence split between two chunks of a stream', () => {
    const s = new AnsiStripper();
    const whole = '\u001b[32mPASS\u001b[0m a\n\u001b[31mFAIL\u001b[0m b\n';
    for (let cut = 0; cut <= whole.length; cut++) {
      const t = new AnsiStripper();
      expect(t.push(whole.slice(0, cut)) + t.push(whole.slice(cut))).toBe('PASS a\nFAIL b\n');
    }
    expect(s.push('a\u001b[')).toBe('a');
    expect(s.push('1;31mb')).toBe('b');
  });
});
