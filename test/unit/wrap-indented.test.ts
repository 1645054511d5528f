import { describe, expect, it } from 'vitest';
import { wrapIndented } from '../../src/cli/render/style.js';

describe('a log tail under a result line', () => {
  it('is indented, its long lines wrapped at the width under the same indent', () => {
    const long = 'x'.repeat(50);
    expect(wrapIndented(`short\n${long}\n`, 42, '  ')).toBe(`  short\n  ${'x'.repeat(40)}\n  ${'x'.repeat(10)}`);
    expect(wrapIndented('a\n\nb', 80, '    ')).toBe('    a\n    \n    b');
  });
});
