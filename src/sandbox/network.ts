// The network a conversation's commands get: `off`, `allow:HOST[,HOST…]` or `on`, parsed and
// checked here only. Free of Node APIs: the workflow imports it through src/config.ts, and the
// egress proxy (src/sandbox/proxy.ts) uses the same address checks on what it resolves.

/** `off`, `on`, or `allow:` followed by host names (`example.com`, `*.example.com`) or public IP literals. */
export type NetworkMode = 'off' | 'on' | `allow:${string}`;

export interface NetworkPolicy {
  mode: 'off' | 'on' | 'allow';
  /** Lower-case names, `*.suffix` patterns or IP literals (mode `allow` only). */
  hosts: string[];
}

const HOST_LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** The policy a `--network` value names, or the one line that says why it is refused. */
export function parseNetwork(value: string): NetworkPolicy | { error: string } {
  const v = value.trim();
  if (v === 'off' || v === 'on') return { mode: v, hosts: [] };
  if (!v.startsWith('allow:'))
    return { error: `--network ${JSON.stringify(value)}: expected off, on, or allow:HOST[,HOST…] (e.g. allow:registry.npmjs.org,*.github.com)` };
  const hosts: string[] = [];
  for (const raw of v.slice('allow:'.length).split(',')) {
    const host = raw.trim().toLowerCase().replace(/\.$/, '');
    if (!host) continue;
    const refused = hostRefusal(host);
    if (refused) return { error: `--network allow:${host}: ${refused}` };
    if (!hosts.includes(host)) hosts.push(host);
  }
  if (!hosts.length) return { error: '--network allow: needs at least one host, e.g. allow:registry.npmjs.org' };
  return { mode: 'allow', hosts };
}

/** Why a host of an allow list is refused, or undefined. */
function hostRefusal(host: string): string | undefined {
  const ip = parseIp(host.replace(/^\[(.*)\]$/, '$1'));
  if (ip) {
    const range = forbiddenRange(ip);
    return range ? `${range} addresses are never reachable from commands; name a public host` : undefined;
  }
  const name = host.startsWith('*.') ? host.slice(2) : host;
  if (name.includes(':')) return 'expected a host name without a port or scheme (e.g. registry.npmjs.org)';
  const labels = name.split('.');
  if (!labels.every((l) => HOST_LABEL.test(l))) return 'expected a host name such as registry.npmjs.org or *.example.com';
  if (labels.length < 2 && host.startsWith('*.')) return 'a wildcard needs a domain with a dot, e.g. *.example.com';
  if (name === 'localhost' || name.endsWith('.localhost')) return 'loopback names are never reachable from commands; name a public host';
  return undefined;
}

/** The policy of a mode already validated by the config schema (an invalid one means off). */
export function networkPolicy(mode: string | undefined): NetworkPolicy {
  const p = parseNetwork(mode ?? 'off');
  return 'error' in p ? { mode: 'off', hosts: [] } : p;
}

/** The refusal line for a `--network` value, or undefined when it is valid. */
export function networkRefusal(value: string): string | undefined {
  const p = parseNetwork(value);
  return 'error' in p ? p.error : undefined;
}

/** Whether `allow:` lets a command name `host` (exact names; `*.example.com` covers its subdomains, not example.com itself). */
export function hostAllowed(policy: NetworkPolicy, host: string): boolean {
  if (policy.mode === 'on') return true;
  if (policy.mode === 'off') return false;
  const h = host
    .toLowerCase()
    .replace(/\.$/, '')
    .replace(/^\[(.*)\]$/, '$1');
  return policy.hosts.some((p) => (p.startsWith('*.') ? h.endsWith(p.slice(1)) && h.length > p.length - 1 : h === p.replace(/^\[(.*)\]$/, '$1')));
}

export interface ParsedIp {
  version: 4 | 6;
  /** 4 or 16 bytes. */
  bytes: number[];
}

/** An IPv4 dotted quad or an IPv6 address (with `::` and an embedded IPv4 tail), or undefined. */
export function parseIp(s: string): ParsedIp | undefined {
  const v4 = parseV4(s);
  if (v4) return { version: 4, bytes: v4 };
  const zone = s.indexOf('%');
  const t = (zone >= 0 ? s.slice(0, zone) : s).toLowerCase();
  if (!t.includes(':') || !/^[0-9a-f:.]+$/.test(t)) return undefined;
  const halves = t.split('::');
  if (halves.length > 2) return undefined;
  const words = (part: string): number[] | undefined => {
    if (part === '') return [];
    const out: number[] = [];
    const groups = part.split(':');
    for (let i = 0; i < groups.length; i++) {
      const g = groups[i]!;
      if (i === groups.length - 1 && g.includes('.')) {
        const b = parseV4(g);
        if (!b) return undefined;
        out.push((b[0]! << 8) | b[1]!, (b[2]! << 8) | b[3]!);
      } else if (/^[0-9a-f]{1,4}$/.test(g)) out.push(parseInt(g, 16));
      else return undefined;
    }
    return out;
  };
  const head = words(halves[0]!);
  const tail = halves.length === 2 ? words(halves[1]!) : [];
  if (!head || !tail) return undefined;
  const fill = 8 - head.length - tail.length;
  if ((halves.length === 2 && fill < 1) || (halves.length === 1 && fill !== 0)) return undefined;
  const all = [...head, ...Array<number>(halves.length === 2 ? fill : 0).fill(0), ...tail];
  return { version: 6, bytes: all.flatMap((w) => [w >> 8, w & 0xff]) };
}

// Decimal octets without a leading zero only: the system's resolver (inet_aton) reads `012` as
// octal (10), so a form read two ways is no literal here: it is looked up, and what the system
// makes of it is checked.
function parseV4(s: string): number[] | undefined {
  const m = /^(0|[1-9]\d{0,2})\.(0|[1-9]\d{0,2})\.(0|[1-9]\d{0,2})\.(0|[1-9]\d{0,2})$/.exec(s);
  if (!m) return undefined;
  const b = m.slice(1).map(Number);
  return b.every((x) => x <= 255) ? b : undefined;
}

function inV4(b: number[], net: [number, number, number, number], bits: number): boolean {
  for (let i = 0; i < 4; i++) {
    const take = Math.max(0, Math.min(8, bits - i * 8));
    const mask = take === 0 ? 0 : (0xff << (8 - take)) & 0xff;
    if ((b[i]! & mask) !== (net[i]! & mask)) return false;
  }
  return true;
}

const V4_RANGES: [[number, number, number, number], number, string][] = [
  [[0, 0, 0, 0], 8, 'unspecified (0.0.0.0/8)'],
  [[127, 0, 0, 0], 8, 'loopback'],
  [[10, 0, 0, 0], 8, 'private (RFC 1918)'],
  [[172, 16, 0, 0], 12, 'private (RFC 1918)'],
  [[192, 168, 0, 0], 16, 'private (RFC 1918)'],
  [[100, 64, 0, 0], 10, 'shared (CGNAT 100.64/10)'],
  [[169, 254, 0, 0], 16, 'link-local (cloud metadata)'],
  [[192, 0, 0, 0], 24, 'IETF protocol assignment'],
  [[198, 18, 0, 0], 15, 'benchmarking'],
  [[224, 0, 0, 0], 4, 'multicast'],
  [[240, 0, 0, 0], 4, 'reserved'],
];

/** The kind of non-public range an address is in (loopback, private, link-local, …), or undefined for a public address. */
export function forbiddenRange(ip: ParsedIp): string | undefined {
  const b = ip.bytes;
  if (ip.version === 4) return V4_RANGES.find(([net, bits]) => inV4(b, net, bits))?.[2];
  const zeroUpTo = (n: number) => b.slice(0, n).every((x) => x === 0);
  if (zeroUpTo(15) && b[15] === 1) return 'loopback';
  if (zeroUpTo(16)) return 'unspecified (::)';
  // IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible and NAT64 (64:ff9b::/96) carry an IPv4 address: judge that one.
  if ((zeroUpTo(10) && b[10] === 0xff && b[11] === 0xff) || zeroUpTo(12))
    return forbiddenRange({ version: 4, bytes: b.slice(12) }) ?? (zeroUpTo(12) ? 'IPv4-compatible' : undefined);
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b) {
    // Local-use NAT64 (64:ff9b:1::/48, RFC 8215) carries the IPv4 address around the u-octet (RFC 6052).
    if (b[4] === 0x00 && b[5] === 0x01) return forbiddenRange({ version: 4, bytes: [b[6]!, b[7]!, b[9]!, b[10]!] }) ?? 'NAT64 local-use (64:ff9b:1::/48)';
    return forbiddenRange({ version: 4, bytes: b.slice(12) });
  }
  // SIIT's IPv4-translated form (::ffff:0:a.b.c.d, RFC 2765) carries one too.
  if (zeroUpTo(8) && b[8] === 0xff && b[9] === 0xff && b[10] === 0 && b[11] === 0) return forbiddenRange({ version: 4, bytes: b.slice(12) });
  // 6to4 (2002::/16) embeds the IPv4 address of its relay; Teredo (2001::/32) the server's and, inverted, the client's.
  if (b[0] === 0x20 && b[1] === 0x02) return forbiddenRange({ version: 4, bytes: b.slice(2, 6) });
  if (b[0] === 0x20 && b[1] === 0x01 && b[2] === 0 && b[3] === 0)
    return forbiddenRange({ version: 4, bytes: b.slice(4, 8) }) ?? forbiddenRange({ version: 4, bytes: b.slice(12).map((x) => x ^ 0xff) });
  if ((b[0]! & 0xfe) === 0xfc) return 'private (ULA fc00::/7)';
  if (b[0] === 0xfe && (b[1]! & 0xc0) === 0x80) return 'link-local (fe80::/10)';
  if (b[0] === 0xfe && (b[1]! & 0xc0) === 0xc0) return 'site-local (fec0::/10)';
  if (b[0] === 0xff) return 'multicast';
  if (b[0] === 0x20 && b[1] === 0x01 && b[2] === 0x0d && b[3] === 0xb8) return 'documentation (2001:db8::/32)';
  return undefined;
}

/** The same address in one canonical text form, so addresses compare equal however they are written. */
export function canonicalIp(ip: ParsedIp): string {
  if (ip.version === 4) return ip.bytes.join('.');
  const w: string[] = [];
  for (let i = 0; i < 16; i += 2) w.push(((ip.bytes[i]! << 8) | ip.bytes[i + 1]!).toString(16));
  return w.join(':');
}
