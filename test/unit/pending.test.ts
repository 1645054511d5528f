// What `pending` shows of a call waiting for approval: everything, with nothing a terminal obeys.
import { describe, expect, it } from 'vitest';
import { escapeControls } from '../../src/client/pending.js';

describe('escapeControls', () => {
  it('writes zero-width and invisible characters as escapes: U+200B, U+200D, U+2060, U+00AD, U+180E', () => {
    expect(escapeControls('rm\u200b -rf\u200d /\u2060x\u00ady\u180e')).toBe('rm\\u{200b} -rf\\u{200d} /\\u{2060}x\\u{00ad}y\\u{180e}');
  });

  it('writes C0 and C1 controls, DEL, separators and bidirectional overrides as escapes; keeps other text', () => {
    expect(escapeControls('a\nb\tc\rd')).toBe('a\\nb\\tc\\rd');
    expect(escapeControls('\u001b[2J\u0000\u007f\u009b')).toBe('\\u{001b}[2J\\u{0000}\\u{007f}\\u{009b}');
    expect(escapeControls('rm -rf /\u202e#txt.\u2066\u2028')).toBe('rm -rf /\\u{202e}#txt.\\u{2066}\\u{2028}');
    expect(escapeControls('back\\slash é 漢字 🙂')).toBe('back\\\\slash é 漢字 🙂');
  });
});
