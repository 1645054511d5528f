// Who decides an approval from the CLI. With an operators file (AGENTRUN_OPERATORS, --operators)
// the decider proves it with their token (AGENTRUN_OPERATOR_TOKEN or --token-file) and is recorded
// under the token's name; --as alone is refused. Without one, --as NAME (default the OS user) is
// recorded as given: Temporal's own access control is then the boundary (docs/deploy.md).
import { readFileSync } from 'node:fs';
import { osUser } from '../ui/auth.js';
import { addOperator, loadOperators, OperatorsError, type Operator, type Operators } from '../ui/operators.js';
import { CliError, EXIT } from './errors.js';

export interface DeciderFlags {
  as?: string;
  tokenFile?: string;
  operators?: string;
}

/** The operators file, or a one-line CliError naming the file and its bad line. */
export function operatorsOrError(flag?: string): Operators | undefined {
  try {
    return loadOperators(flag);
  } catch (err) {
    if (err instanceof OperatorsError) throw new CliError(err.message);
    throw err;
  }
}

/** The name recorded with this decision. */
export function deciderName(o: DeciderFlags, env: NodeJS.ProcessEnv = process.env): string {
  return decider(o, env).name;
}

/** Who decides: the name recorded, and the tenants an operator token is bound to (undefined: every tenant). */
export function decider(o: DeciderFlags, env: NodeJS.ProcessEnv = process.env): Operator {
  const operators = operatorsOrError(o.operators);
  if (!operators) return { name: o.as ?? osUser(), tenants: undefined };
  let token: string | undefined;
  if (o.tokenFile) {
    try {
      token = readFileSync(o.tokenFile, 'utf8').trim();
    } catch (err) {
      throw new CliError(`cannot read --token-file ${o.tokenFile}: ${(err as Error).message}`);
    }
  } else token = env.AGENTRUN_OPERATOR_TOKEN?.trim();
  if (!token) {
    throw new CliError(
      `${o.as ? `--as ${o.as} is not accepted: ` : ''}operators are configured (${operators.file}); give your operator token in AGENTRUN_OPERATOR_TOKEN or --token-file FILE`,
    );
  }
  const op = operators.operatorOf(token);
  if (op === undefined) throw new CliError(`unknown operator token: its hash is not in ${operators.file} (agentrun operator add NAME makes one)`);
  if (o.as !== undefined && o.as !== op.name) throw new CliError(`--as ${o.as} does not match your token, which belongs to ${op.name}; drop --as`);
  return op;
}

/** `agentrun operator add NAME [--tenant T …]`: a token shown once, its hash (and tenants) appended to the operators file. */
export function operatorAddCommand(name: string, o: { operators?: string; json?: boolean; tenant?: string[] }): number {
  const file = o.operators?.trim() || process.env.AGENTRUN_OPERATORS?.trim();
  if (!file) throw new CliError('say which operators file to add to: --operators FILE or AGENTRUN_OPERATORS');
  let made;
  try {
    made = addOperator(file, name, o.tenant?.length ? o.tenant : undefined);
  } catch (err) {
    if (err instanceof OperatorsError || (err as NodeJS.ErrnoException).code) throw new CliError((err as Error).message);
    throw err;
  }
  if (o.json) process.stdout.write(JSON.stringify({ type: 'operator', name, token: made.token, file, line: made.line, tenants: o.tenant ?? null }) + '\n');
  else {
    process.stdout.write(`${made.token}\n`);
    process.stderr.write(
      `added ${name} to ${file} (${made.line}). The token above is shown once: give it to ${name} (AGENTRUN_OPERATOR_TOKEN, or the web page's login).\n`,
    );
  }
  return EXIT.completed;
}
