// A throwaway self-signed certificate for a test TLS server (tunnels under `allow:` must carry TLS
// naming their host). EC P-256: made in milliseconds by the openssl CLI.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { tempDirSync } from './temp.js';

export function selfSignedCert(commonName: string): { key: Buffer; cert: Buffer } {
  const dir = tempDirSync('agentrun-test-cert-');
  const [key, cert] = [path.join(dir, 'key.pem'), path.join(dir, 'cert.pem')];
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '1',
      '-subj',
      `/CN=${commonName}`,
    ],
    {
      stdio: 'ignore',
    },
  );
  return { key: readFileSync(key), cert: readFileSync(cert) };
}
