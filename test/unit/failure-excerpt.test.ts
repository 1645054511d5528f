import { describe, expect, it } from 'vitest';
import { FailureExcerpt } from '../../src/sandbox/failure-excerpt.js';

/** An npm-workspaces run: the failing package first, then a long, passing last package. */
function workspacesRun(): string {
  const lines = [
    '> monorepo@1.0.0 test',
    '> npm test --workspaces',
    '',
    '> @acme/parser@1.0.0 test',
    '> jest',
    '',
    '\u001b[1m\u001b[41m FAIL \u001b[49m\u001b[22m src/parse.test.js',
    '  \u001b[1m● parse › reads a number\u001b[22m',
    '',
    '    expect(received).toBe(expected) // Object.is equality',
    '',
    '    Expected: \u001b[32m42\u001b[39m',
    '    Received: \u001b[31m"42"\u001b[39m',
    '',
    'Tests:       1 failed, 3 passed, 4 total',
    'npm ERR! Lifecycle script `test` failed with error:',
    '',
    '> @acme/printer@1.0.0 test',
    '> jest',
    '',
  ];
  for (let i = 0; i < 200; i++) lines.push(` PASS  src/case-${i}.test.js (${i} ms)`);
  lines.push('Tests:       0 failed, 200 passed, 200 total', '');
  return lines.join('\n');
}

describe('FailureExcerpt', () => {
  it('shows the lines that name failures, with what follows them, before the end of the output', () => {
    const e = new FailureExcerpt(1024);
    const out = workspacesRun();
    // In chunks that cut lines and escape sequences anywhere.
    for (let i = 0; i < out.length; i += 37) e.push(out.slice(i, i + 37));
    const text = e.text();
    const [failures, end] = text.split('[the end of the output]\n');
    expect(failures).toMatch(/^\[lines that name failures\]\n/);
    expect(failures).toContain('FAIL  src/parse.test.js');
    expect(failures).toContain('● parse › reads a number');
    expect(failures).toContain('Received: "42"');
    expect(failures).toContain('npm ERR! Lifecycle script `test` failed');
    expect(failures).not.toContain('\u001b');
    // A summary that names no failure is not one.
    expect(failures).not.toContain('0 failed, 200 passed');
    expect(end).toContain('Tests:       0 failed, 200 passed, 200 total');
    expect(end!.length).toBeLessThanOrEqual(1024);
    // Whole within what the model is shown of a check's output (its last 3,000 characters).
    const long = new FailureExcerpt(4096);
    long.push(out.replace(/PASS/g, 'PASS'.repeat(3)));
    expect(long.text().length).toBeLessThanOrEqual(3000);
    expect(long.text()).toMatch(/^\[lines that name failures\]/);
  });

  it('is only the end when the end holds every failure line, or none names one', () => {
    const short = new FailureExcerpt(4096);
    short.push('running\nFAIL a.test.js\n  expected 1\n');
    expect(short.text()).toBe('running\nFAIL a.test.js\n  expected 1\n');
    const passing = new FailureExcerpt(64);
    passing.push('ok '.repeat(100) + '\n');
    expect(passing.text()).not.toContain('[lines that name failures]');
  });

  it('keeps the first failures within its bound', () => {
    const e = new FailureExcerpt(512);
    for (let i = 0; i < 2000; i++) e.push(`FAIL case ${i}\n`);
    e.push('x\n'.repeat(1000));
    const text = e.text();
    expect(text).toContain('FAIL case 0\n');
    expect(text).toContain('[… further lines that name failures are left out]');
    expect(text.length).toBeLessThanOrEqual(3000);
  });
});
