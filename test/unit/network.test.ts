// --network values and the address checks of the egress proxy: pure parsing, no sockets.
import { describe, expect, it } from 'vitest';
import { runConfigSchema } from '../../src/config.js';
import { runRequestFromFlags } from '../../src/cli/options.js';
import { CliError } from '../../src/cli/errors.js';
import { canonicalIp, forbiddenRange, hostAllowed, parseIp, parseNetwork, type NetworkPolicy } from '../../src/sandbox/network.js';
import { networkEnv } from '../../src/sandbox/env.js';
import { DEFAULT_SANDBOX } from '../../src/sandbox/policy.js';
import { networkDescription, withNetworkPolicy, executeCommand } from '../../src/tools/execute-command.js';

const range = (a: string) => forbiddenRange(parseIp(a)!);

describe('--network values', () => {
  it('parses off, on and allow lists (lower-cased, trailing dots and duplicates dropped)', () => {
    expect(parseNetwork('off')).toEqual({ mode: 'off', hosts: [] });
    expect(parseNetwork('on')).toEqual({ mode: 'on', hosts: [] });
    expect(parseNetwork('allow:Registry.npmjs.org., *.GitHub.com,registry.npmjs.org,8.8.8.8')).toEqual({
      mode: 'allow',
      hosts: ['registry.npmjs.org', '*.github.com', '8.8.8.8'],
    });
  });

  it.each([
    ['maybe', /expected off, on, or allow:HOST/],
    ['allow:', /needs at least one host/],
    ['allow:10.1.2.3', /private \(RFC 1918\) addresses are never reachable/],
    ['allow:127.0.0.1', /loopback/],
    ['allow:169.254.169.254', /link-local/],
    ['allow:[fd00::1]', /ULA/],
    ['allow:::1', /loopback/],
    ['allow:localhost', /loopback names/],
    ['allow:example.com:443', /without a port/],
    ['allow:https://example.com', /without a port or scheme/],
    ['allow:exa mple.com', /expected a host name/],
    ['allow:*.com.', /a wildcard needs a domain/],
  ])('refuses %s in one line', (value, why) => {
    const p = parseNetwork(value);
    expect('error' in p && p.error).toMatch(why);
    expect('error' in p && p.error.includes('\n')).toBe(false);
  });

  it('runConfigSchema refuses a bad value with the same line, and keeps old values valid', () => {
    const bad = runConfigSchema.safeParse({ model: 'm', network: 'allow:192.168.1.1' });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues[0]?.message).toMatch(/--network allow:192\.168\.1\.1: private/);
    expect(runConfigSchema.parse({ model: 'm' }).network).toBe('off');
    expect(runConfigSchema.parse({ model: 'm', network: 'on' }).network).toBe('on');
    expect(runConfigSchema.parse({ model: 'm', network: 'allow:pypi.org' }).network).toBe('allow:pypi.org');
  });

  it('the CLI refuses it with a CliError (exit 2) naming the flag', async () => {
    const err = await runRequestFromFlags({ task: 't', network: 'allow:10.0.0.1' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CliError);
    expect((err as CliError).exitCode).toBe(2);
    expect((err as CliError).message).toMatch(/^--network allow:10\.0\.0\.1: private/);
    const bad = await runRequestFromFlags({ task: 't', network: 'sometimes' }).catch((e: unknown) => e);
    expect((bad as CliError).exitCode).toBe(2);
  });
});

describe('host matching', () => {
  const p: NetworkPolicy = { mode: 'allow', hosts: ['registry.npmjs.org', '*.github.com'] };
  it('exact names and subdomains of a wildcard; nothing else', () => {
    expect(hostAllowed(p, 'registry.npmjs.org')).toBe(true);
    expect(hostAllowed(p, 'REGISTRY.npmjs.org.')).toBe(true);
    expect(hostAllowed(p, 'api.github.com')).toBe(true);
    expect(hostAllowed(p, 'a.b.github.com')).toBe(true);
    expect(hostAllowed(p, 'github.com')).toBe(false);
    expect(hostAllowed(p, 'evilgithub.com')).toBe(false);
    expect(hostAllowed(p, 'registry.npmjs.org.evil.com')).toBe(false);
    expect(hostAllowed({ mode: 'on', hosts: [] }, 'anything.example')).toBe(true);
    expect(hostAllowed({ mode: 'off', hosts: [] }, 'registry.npmjs.org')).toBe(false);
  });
});

describe('address ranges', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.1.2', 'loopback'],
    ['10.0.0.1', 'private (RFC 1918)'],
    ['172.16.0.1', 'private (RFC 1918)'],
    ['172.31.255.255', 'private (RFC 1918)'],
    ['192.168.0.1', 'private (RFC 1918)'],
    ['100.64.0.1', 'shared (CGNAT 100.64/10)'],
    ['100.127.255.255', 'shared (CGNAT 100.64/10)'],
    ['169.254.169.254', 'link-local (cloud metadata)'],
    ['0.0.0.0', 'unspecified (0.0.0.0/8)'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['::1', 'loopback'],
    ['::', 'unspecified (::)'],
    ['fc00::1', 'private (ULA fc00::/7)'],
    ['fd12:3456::1', 'private (ULA fc00::/7)'],
    ['fe80::1%eth0', 'link-local (fe80::/10)'],
    ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:169.254.169.254', 'link-local (cloud metadata)'],
    ['64:ff9b::a9fe:a9fe', 'link-local (cloud metadata)'],
    ['::ffff:0:127.0.0.1', 'loopback'],
    ['::ffff:0:a9fe:a9fe', 'link-local (cloud metadata)'],
    ['::ffff:0:10.0.0.1', 'private (RFC 1918)'],
    ['64:ff9b:1:7f00:0:100::', 'loopback'],
    ['64:ff9b:1:808:8:800::', 'NAT64 local-use (64:ff9b:1::/48)'],
    ['2002:7f00:1::1', 'loopback'],
    ['2002:a9fe:a9fe::', 'link-local (cloud metadata)'],
    ['2002:c0a8:101::1', 'private (RFC 1918)'],
    ['2001:0:7f00:1::', 'loopback'],
    ['2001:0:808:808::80ff:fffe', 'loopback'],
  ])('%s is %s', (a, why) => expect(range(a)).toBe(why));

  it.each(['8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '2606:4700::1111', '::ffff:8.8.8.8', '::ffff:0:8.8.8.8', '2002:808:808::1', '64:ff9b::808:808'])(
    '%s is public',
    (a) => expect(range(a)).toBeUndefined(),
  );

  it('parses only addresses, and compares them in one form', () => {
    for (const s of ['example.com', '1.2.3', '256.1.1.1', '1::2::3', '12345::', ':::', '1:2:3:4:5:6:7:8:9']) expect(parseIp(s)).toBeUndefined();
    // A leading zero is octal to the system's resolver (012 is 10): no literal, so what the system makes of it is what gets checked.
    for (const s of ['012.0.0.1', '127.0.0.010', '00.0.0.0', '::ffff:012.0.0.1']) expect(parseIp(s), s).toBeUndefined();
    expect(canonicalIp(parseIp('0:0:0:0:0:0:0:1')!)).toBe(canonicalIp(parseIp('::1')!));
    expect(canonicalIp(parseIp('::ffff:127.0.0.1')!)).toBe(canonicalIp(parseIp('::ffff:7f00:1')!));
  });
});

describe('what commands and the model are told', () => {
  it('network off: package managers are offline; otherwise every proxy variable names the proxy on the sandbox loopback', () => {
    const off = networkEnv(DEFAULT_SANDBOX, 'http://127.0.0.1:3128');
    expect(off).toMatchObject({ npm_config_offline: 'true', PIP_NO_INDEX: '1', CARGO_NET_OFFLINE: 'true', GOPROXY: 'off', YARN_ENABLE_OFFLINE_MODE: '1' });
    expect(off.HTTPS_PROXY).toBeUndefined();
    const on = networkEnv({ ...DEFAULT_SANDBOX, network: 'allow:pypi.org' }, 'http://127.0.0.1:3128');
    for (const k of ['HTTP_PROXY', 'HTTPS_PROXY', 'http_proxy', 'https_proxy', 'ALL_PROXY', 'npm_config_proxy', 'npm_config_https_proxy', 'PIP_PROXY'])
      expect(on[k]).toBe('http://127.0.0.1:3128');
    expect(on.NO_PROXY).toBe('');
    expect(on.npm_config_offline).toBeUndefined();
  });

  it("execute_command's description names the conversation's policy and the setup step", () => {
    expect(executeCommand.description).toContain(networkDescription('off'));
    expect(networkDescription('off')).toMatch(/network is off.*setup step/);
    const [tool] = withNetworkPolicy([executeCommand], 'allow:registry.npmjs.org,*.github.com');
    expect(tool!.description).toContain('only these hosts, through a proxy');
    expect(tool!.description).toContain('registry.npmjs.org, *.github.com');
    expect(withNetworkPolicy([executeCommand], 'on')[0]!.description).toMatch(/public hosts through a proxy/);
  });
});
