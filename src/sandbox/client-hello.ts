// The server name (SNI) of a TLS ClientHello, read from the first bytes a client sends through a
// tunnel, so the egress proxy can hold the name the client really asks for against the allow
// list (a CONNECT to an allowed name on a shared CDN could otherwise name any site behind it).
// Only what is needed is parsed: record headers, the handshake header, the extensions.

/** What the first bytes of a tunnel are. */
export type HelloPeek = { kind: 'more' } | { kind: 'tls'; serverName?: string } | { kind: 'not-tls' } | { kind: 'bad'; reason: string };

/** A ClientHello larger than this is refused (real ones are under 2 KiB, post-quantum key shares included). */
export const MAX_HELLO_BYTES = 64 * 1024;

const RECORD_HANDSHAKE = 0x16;
const HANDSHAKE_CLIENT_HELLO = 1;
const EXT_SERVER_NAME = 0;
const NAME_TYPE_HOST = 0;

/**
 * Parse `buf` (the tunnel's first bytes, possibly incomplete). A ClientHello may span several
 * handshake records; their payloads are joined until the handshake message is whole.
 */
export function peekClientHello(buf: Buffer): HelloPeek {
  if (buf.length === 0) return { kind: 'more' };
  if (buf[0] !== RECORD_HANDSHAKE) return { kind: 'not-tls' };
  if (buf.length >= 2 && buf[1] !== 0x03) return { kind: 'not-tls' };
  const parts: Buffer[] = [];
  let have = 0;
  let off = 0;
  let need: number | undefined;
  while (need === undefined || have < need) {
    if (off + 5 > buf.length) return buf.length > MAX_HELLO_BYTES ? { kind: 'bad', reason: 'ClientHello too large' } : { kind: 'more' };
    if (buf[off] !== RECORD_HANDSHAKE) return { kind: 'bad', reason: 'the ClientHello is interrupted by another record type' };
    const len = buf.readUInt16BE(off + 3);
    if (len === 0 || len > 16384 + 2048) return { kind: 'bad', reason: 'bad TLS record length' };
    if (off + 5 + len > buf.length) return buf.length > MAX_HELLO_BYTES ? { kind: 'bad', reason: 'ClientHello too large' } : { kind: 'more' };
    parts.push(buf.subarray(off + 5, off + 5 + len));
    have += len;
    off += 5 + len;
    if (need === undefined && have >= 4) {
      const hs = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
      if (hs[0] !== HANDSHAKE_CLIENT_HELLO) return { kind: 'bad', reason: 'the first handshake message is not a ClientHello' };
      need = 4 + hs.readUIntBE(1, 3);
      if (need > MAX_HELLO_BYTES) return { kind: 'bad', reason: 'ClientHello too large' };
    }
  }
  const hs = Buffer.concat(parts).subarray(0, need);
  try {
    return { kind: 'tls', serverName: serverNameOf(hs) };
  } catch (err) {
    return { kind: 'bad', reason: (err as Error).message };
  }
}

/** The host_name of the server_name extension of a whole ClientHello handshake message. */
function serverNameOf(hs: Buffer): string | undefined {
  let p = 4 + 2 + 32; // handshake header, legacy_version, random
  const take = (n: number) => {
    if (p + n > hs.length) throw new Error('truncated ClientHello');
    const at = p;
    p += n;
    return at;
  };
  take(hs[take(1)]!); // session id
  take(hs.readUInt16BE(take(2))); // cipher suites
  take(hs[take(1)]!); // compression methods
  if (p === hs.length) return undefined; // no extensions
  const extEnd = hs.readUInt16BE(take(2)) + p;
  if (extEnd > hs.length) throw new Error('truncated ClientHello extensions');
  let name: string | undefined;
  while (p < extEnd) {
    const type = hs.readUInt16BE(take(2));
    const len = hs.readUInt16BE(take(2));
    const body = take(len);
    if (type !== EXT_SERVER_NAME) continue;
    if (name !== undefined) throw new Error('two server_name extensions');
    let q = body + 2;
    const listEnd = body + 2 + hs.readUInt16BE(body);
    if (listEnd > body + len) throw new Error('bad server_name extension');
    while (q + 3 <= listEnd) {
      const nameType = hs[q]!;
      const nameLen = hs.readUInt16BE(q + 1);
      if (q + 3 + nameLen > listEnd) throw new Error('bad server_name entry');
      if (nameType === NAME_TYPE_HOST) {
        if (name !== undefined) throw new Error('two host names in server_name');
        name = hs.toString('latin1', q + 3, q + 3 + nameLen);
      }
      q += 3 + nameLen;
    }
  }
  if (name !== undefined && !/^[A-Za-z0-9._-]+$/.test(name)) throw new Error('a server name that is not a host name');
  return name;
}
