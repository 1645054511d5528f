// TLS and API-key options for every Temporal connection (CLI client, workers, the web page):
// mTLS with TEMPORAL_TLS_CERT / TEMPORAL_TLS_KEY (+ TEMPORAL_TLS_CA, TEMPORAL_TLS_SERVER_NAME),
// Temporal Cloud with TEMPORAL_API_KEY. Nothing set: plain connection, as before.
import { readFileSync } from 'node:fs';

export interface TemporalTlsOptions {
  tls?: {
    serverNameOverride?: string;
    serverRootCACertificate?: Buffer;
    clientCertPair?: { crt: Buffer; key: Buffer };
  };
  apiKey?: string;
}

function read(name: string, file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    throw new Error(`${name}=${file} cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}): point it at a PEM file`);
  }
}

/** Connection options for `Connection.connect` and `NativeConnection.connect`, from the environment. */
export function tlsConnectionOptions(env: NodeJS.ProcessEnv = process.env): TemporalTlsOptions {
  const cert = env.TEMPORAL_TLS_CERT?.trim();
  const key = env.TEMPORAL_TLS_KEY?.trim();
  const ca = env.TEMPORAL_TLS_CA?.trim();
  const serverName = env.TEMPORAL_TLS_SERVER_NAME?.trim();
  const apiKey = env.TEMPORAL_API_KEY?.trim();
  if (!!cert !== !!key) throw new Error('TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY go together: set both (client certificate and its key) or neither');
  const out: TemporalTlsOptions = {};
  if (cert || ca || serverName || apiKey) {
    out.tls = {
      ...(serverName ? { serverNameOverride: serverName } : {}),
      ...(ca ? { serverRootCACertificate: read('TEMPORAL_TLS_CA', ca) } : {}),
      ...(cert && key ? { clientCertPair: { crt: read('TEMPORAL_TLS_CERT', cert), key: read('TEMPORAL_TLS_KEY', key) } } : {}),
    };
  }
  if (apiKey) out.apiKey = apiKey;
  return out;
}

/** TLS options for a server given by TEMPORAL_ADDRESS; the embedded dev server speaks plain gRPC. */
export function externalTemporalTls(env: NodeJS.ProcessEnv = process.env): TemporalTlsOptions {
  return env.TEMPORAL_ADDRESS?.trim() ? tlsConnectionOptions(env) : {};
}
