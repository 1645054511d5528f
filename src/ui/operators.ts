// Who an operator is: a token, looked up by its SHA-256 in the operators file (AGENTRUN_OPERATORS,
// `--operators FILE`). One operator a line, `name:sha256hex`, or `name:sha256hex:tenant,tenant` for
// an operator bound to those tenants (the page and the CLI's approve/deny show and act on their
// conversations only; an operator with no tenants is an administrator); `#` starts a comment. The file holds
// hashes only, so reading it does not let anyone act as an operator. The web page and the CLI's
// approve/deny record the name that the presented token maps to, never a name the caller types.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { tenantRefusal } from '../ids.js';
import type { TenantScope } from '../client/tenancy.js';

const NAME = /^[A-Za-z0-9][A-Za-z0-9._@+-]{0,63}$/;
const HEX = /^[0-9a-f]{64}$/;

export interface OperatorEntry {
  name: string;
  sha256: string;
  /** The tenants this operator is bound to; absent: an administrator, every tenant. */
  tenants?: string[];
}

/** Who a token belongs to: the operator's name and the tenants it may see (undefined: every tenant). */
export interface Operator {
  name: string;
  tenants: TenantScope;
}

export class OperatorsError extends Error {}

const sha256Hex = (token: string) => createHash('sha256').update(token, 'utf8').digest('hex');

/** Why a comma-separated tenant list is refused, or undefined. */
function tenantsRefusal(tenants: string[]): string | undefined {
  if (!tenants.length) return 'the tenant list after the second colon is empty (leave out the colon for an administrator)';
  for (const t of tenants) {
    const refused = tenantRefusal(t);
    if (refused) return refused;
  }
  return undefined;
}

/** A fresh operator token (shown once) and the line that adds it to the operators file. */
function newOperatorToken(name: string, tenants?: string[]): { token: string; line: string } {
  if (!NAME.test(name)) throw new OperatorsError(`operator name "${name}" must be letters, digits and . _ @ + - (at most 64, no colon or spaces)`);
  const refused = tenants && tenantsRefusal(tenants);
  if (refused) throw new OperatorsError(refused);
  const token = `agop_${randomBytes(24).toString('base64url')}`;
  return { token, line: `${name}:${sha256Hex(token)}${tenants ? `:${tenants.join(',')}` : ''}` };
}

/** Parse an operators file's text; a bad line throws naming the file and the line. */
export function parseOperators(text: string, file: string): OperatorEntry[] {
  const entries: OperatorEntry[] = [];
  const seen = new Map<string, number>();
  text.split('\n').forEach((raw, i) => {
    const line = raw.replace(/#.*$/, '').trim();
    if (!line) return;
    const where = `${file} line ${i + 1}`;
    const colon = line.indexOf(':');
    if (colon < 0) throw new OperatorsError(`${where}: expected name:sha256hex[:tenant,…] (make one with \`agentrun operator add NAME\`)`);
    const name = line.slice(0, colon).trim();
    const [hash = '', bound] = line.slice(colon + 1).split(/:(.*)/s);
    const sha256 = hash.trim().toLowerCase();
    const tenants = bound === undefined ? undefined : bound.split(',').map((t) => t.trim());
    if (!NAME.test(name)) throw new OperatorsError(`${where}: "${name}" is not an operator name (letters, digits and . _ @ + -, at most 64)`);
    if (!HEX.test(sha256)) throw new OperatorsError(`${where}: the hash of ${name}'s token must be 64 hex digits (sha256), got "${sha256.slice(0, 70)}"`);
    const dup = seen.get(sha256);
    if (dup !== undefined) throw new OperatorsError(`${where}: the same token hash as line ${dup}; each token belongs to one operator`);
    const refused = tenants && tenantsRefusal(tenants);
    if (refused) throw new OperatorsError(`${where}: ${name}'s tenants: ${refused}`);
    seen.set(sha256, i + 1);
    entries.push({ name, sha256, ...(tenants ? { tenants: [...new Set(tenants)] } : {}) });
  });
  return entries;
}

export class Operators {
  private constructor(
    readonly file: string,
    private readonly entries: OperatorEntry[],
  ) {}

  static load(file: string): Operators {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      throw new OperatorsError(`cannot read the operators file ${file}: ${(err as Error).message}`);
    }
    const entries = parseOperators(text, file);
    if (!entries.length) throw new OperatorsError(`the operators file ${file} names no operator; add one with \`agentrun operator add NAME\``);
    return new Operators(file, entries);
  }

  get names(): string[] {
    return [...new Set(this.entries.map((e) => e.name))];
  }

  /** The operator a token belongs to, or undefined. Every entry is compared, in constant time each. */
  operatorOf(token: string): Operator | undefined {
    const h = Buffer.from(sha256Hex(token.trim()));
    let found: OperatorEntry | undefined;
    for (const e of this.entries) if (timingSafeEqual(h, Buffer.from(e.sha256))) found ??= e;
    return found && { name: found.name, tenants: found.tenants };
  }
}

/** The operators file this process is told about (a flag wins over AGENTRUN_OPERATORS), or undefined. */
function operatorsFile(flag?: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  return flag?.trim() || env.AGENTRUN_OPERATORS?.trim() || undefined;
}

export function loadOperators(flag?: string, env: NodeJS.ProcessEnv = process.env): Operators | undefined {
  const file = operatorsFile(flag, env);
  return file === undefined ? undefined : Operators.load(file);
}

/** `agentrun operator add NAME [--tenant T …]`: a new token for NAME, its hash appended to the file (created 0600). */
export function addOperator(file: string, name: string, tenants?: string[]): { token: string; line: string } {
  const made = newOperatorToken(name, tenants);
  if (existsSync(file)) {
    // Refuse to append to a file that is already broken: the error names its bad line.
    parseOperators(readFileSync(file, 'utf8'), file);
    const text = readFileSync(file, 'utf8');
    appendFileSync(file, `${text === '' || text.endsWith('\n') ? '' : '\n'}${made.line}\n`);
  } else writeFileSync(file, `# agentrun operators: name:sha256(token), one a line\n${made.line}\n`, { mode: 0o600, flag: 'wx' });
  return made;
}
