// Bad input of repository jobs at the CLI: one clear line (CliError → exit 2).
import { describe, expect, it } from 'vitest';
import { CliError } from '../../src/cli/errors.js';
import { isRemoteRepo, runRequestFromFlags } from '../../src/cli/options.js';
import { expandBranch } from '../../src/workspace/routing.js';
import { tlsConnectionOptions } from '../../src/runtime/tls.js';

describe('repository job options', () => {
  it('refuses --repo together with --workspace', async () => {
    await expect(runRequestFromFlags({ task: 't', repo: 'https://example.com/r.git', workspace: '.' })).rejects.toThrow(CliError);
    await expect(runRequestFromFlags({ task: 't', repo: 'https://example.com/r.git', workspace: '.' })).rejects.toThrow('not both');
  });
  it('refuses a local repository path that does not exist', async () => {
    await expect(runRequestFromFlags({ task: 't', repo: '/nonexistent/repo' })).rejects.toThrow('repository /nonexistent/repo does not exist');
  });
  it('refuses --push without --repo', async () => {
    await expect(runRequestFromFlags({ task: 't', workspace: '.', push: true })).rejects.toThrow('give --repo too');
  });
  it('takes a remote URL as it is and carries the job options', async () => {
    const r = await runRequestFromFlags({ task: 't', repo: 'git@example.com:org/r.git', ref: 'v1', branch: 'b/{{id}}', push: true, hostTimeout: '5s' });
    expect(r.config).toMatchObject({ repo: 'git@example.com:org/r.git', ref: 'v1', branch: 'b/{{id}}', push: true, hostTimeoutMs: 5000 });
    expect(r.workspace).toBe('git@example.com:org/r.git');
  });
  it('tells URLs from paths', () => {
    expect(isRemoteRepo('https://h/r.git')).toBe(true);
    expect(isRemoteRepo('ssh://git@h/r.git')).toBe(true);
    expect(isRemoteRepo('git@h:r.git')).toBe(true);
    expect(isRemoteRepo('/srv/r.git')).toBe(false);
    expect(isRemoteRepo('../r')).toBe(false);
  });
  it('expands branch templates', () => {
    expect(expandBranch('nightly/{{date}}-{{id}}', 'c1', Date.UTC(2026, 10, 23, 3))).toBe('nightly/2026-11-23-c1');
    // A scheduled run's id holds its start time: no `:` in a ref.
    expect(expandBranch('nightly/{{id}}', 'nightly-2026-11-23T02:00:00Z', 0)).toBe('nightly/nightly-2026-11-23T02-00-00Z');
    // With {{date}} too, the id does not repeat the day: neither a scheduled run's nor a batch job's.
    const day = Date.UTC(2026, 10, 23, 2);
    expect(expandBranch('nightly/{{date}}/{{id}}', 'nightly-2026-11-23T02:00:00Z-1', day)).toBe('nightly/2026-11-23/nightly-02-00-00Z-1');
    expect(expandBranch('nightly/{{date}}/{{id}}', 'batch-20261123020000-a1b2c3-2', day)).toBe('nightly/2026-11-23/batch-020000-a1b2c3-2');
    expect(expandBranch('nightly/{{date}}/{{id}}', 'fix-2026-11-22', day)).toBe('nightly/2026-11-23/fix-2026-11-22');
  });
  it('reads TLS settings and refuses half a client certificate', () => {
    expect(tlsConnectionOptions({})).toEqual({});
    expect(() => tlsConnectionOptions({ TEMPORAL_TLS_CERT: '/x.pem' })).toThrow('go together');
    expect(tlsConnectionOptions({ TEMPORAL_API_KEY: 'k' })).toEqual({ tls: {}, apiKey: 'k' });
    expect(() => tlsConnectionOptions({ TEMPORAL_TLS_CA: '/nonexistent.pem' })).toThrow('TEMPORAL_TLS_CA=/nonexistent.pem cannot be read');
  });
});
