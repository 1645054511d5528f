// Hook matchers: names, "*", globs and "|" lists matched in linear time; a regular expression only
// when written as /…/, run off the main thread within a budget (a backtracking one does not stall).
import { describe, expect, it } from 'vitest';
import { globMatches, matcherSelects, parseMatcher } from '../../src/extensions/matcher.js';

describe('hook matchers', () => {
  it('names, "*", globs and lists of them', async () => {
    expect(await matcherSelects(undefined, 'read_file')).toBe(true);
    expect(await matcherSelects('*', 'read_file')).toBe(true);
    expect(await matcherSelects('read_file', 'read_file')).toBe(true);
    expect(await matcherSelects('read_file', 'read_files')).toBe(false);
    expect(await matcherSelects('execute_command|write_to_file', 'write_to_file')).toBe(true);
    expect(await matcherSelects('mcp__docs__*', 'mcp__docs__search')).toBe(true);
    expect(await matcherSelects('mcp__docs__*', 'mcp__other__search')).toBe(false);
    expect(await matcherSelects('read_fil?', 'read_file')).toBe(true);
    expect(await matcherSelects('execute_command', undefined)).toBe(true);
    expect(globMatches('*a*a*a*a*a*b', 'a'.repeat(60))).toBe(false);
  });

  it('anything else is refused unless written as /…/', () => {
    expect(() => parseMatcher('read_.*')).toThrow(/write a regular expression as \/…\//);
    expect(() => parseMatcher('/(/')).toThrow(SyntaxError);
    expect(parseMatcher('/^read_/')).toEqual({ kind: 'regex', source: '^read_' });
  });

  it('a regular expression runs off the main thread; one that backtracks for ever does not match and does not block', async () => {
    expect(await matcherSelects('/^(read|write)_/', 'read_file')).toBe(true);
    expect(await matcherSelects('/^(read|write)_/', 'list_files')).toBe(false);
    const name = `${'a'.repeat(40)}!`;
    let ticks = 0;
    const timer = setInterval(() => ticks++, 10);
    const selected = await matcherSelects('/^(a+)+$/', name, 300);
    clearInterval(timer);
    expect(selected).toBe(false);
    // The event loop went on while the expression ran.
    expect(ticks).toBeGreaterThan(0);
  });
});
