// The environment steps of a session: `setupWorkspace` before turn 1 (setup with the network, or
// its outputs from the dependency cache; the verify baseline) and `verifyWorkspace` when the model
// calls attempt_completion. Both run on the workspace's host, in the command sandbox, heartbeating;
// a worker that dies during setup is noticed by its heartbeat timeout and setup runs again
// (setup commands are installs: safe to run twice).
import { tenantOfRun } from '../src/runtime/tenant.js';
import { AnsiStripper } from '../src/sandbox/ansi.js';
import { ApplicationFailure } from '@temporalio/common';
import { loadSettingsFile, operatorSettingsPath, settingsSchema, SettingsError, type LoadedSettings } from '../src/extensions/settings.js';
import { repositorySettings } from '../src/extensions/repository.js';
import { repositoryExtensionsOf } from './repository.js';
import { effectiveSandbox, runSandboxed } from '../src/sandbox/index.js';
import type { NetworkMode } from '../src/sandbox/network.js';
import { cacheKey, cacheRoot, DEFAULT_CACHE_DIRS, DirectoryCache, type StartingTree } from '../src/environment/cache.js';
import { watchSetupOutputs } from '../src/environment/setup-outputs.js';
import { diskLimitsFromEnv } from '../src/environment/disk.js';
import { privateGitDir } from '../src/workspace/checkpoint.js';
import { environmentPlan, runSetup, STREAMED_BYTES, VERIFY_TIMEOUT_SEC, type EnvironmentPlan } from '../src/environment/setup.js';
import { activityLog, cancellationSignal, currentAttempt, heartbeat, type ActivityDeps } from './deps.js';
import { onPlacedWorkspace, refuseUnsandboxed } from './guard.js';
import { fenced } from './fence.js';
import { configFor } from './session.js';
import type { EnvironmentActivities, SessionRef, SetupWorkspaceInput, SetupWorkspaceResult, VerifyOutcome, VerifyWorkspaceInput } from './types.js';
import { StreamWriter } from '../src/turn/stream-writer.js';
import { hostId, recordWorkspaceUsage } from '../src/workspace/host.js';

/** The first setup's plan, kept in the store for setup after a move. */
interface SetupPlan {
  plan: Pick<EnvironmentPlan, 'setup' | 'maintenance' | 'setupNetwork' | 'cache'>;
  /** The cache key of the starting tree. */
  key: string;
}

/**
 * Stream seq for the setup's output events, apart from every message's: -1 on the first placement
 * (keys `-1:<attempt>:<move>:<n>`), -N on the Nth, so setup run again on the host a lost one's job
 * moved to keeps its own events instead of being taken for a retry of the first host's.
 */
const setupStreamSeq = (epoch: number | undefined) => -(epoch ?? 1);

export function environmentActivities(deps: ActivityDeps): EnvironmentActivities {
  const { store, home, allowEnv } = deps;
  const fencedHostStep = <I extends SessionRef, R>(fn: (input: I) => Promise<R>) => fenced(store, onPlacedWorkspace(home, fn), { watch: true });

  /** The operator's settings, and the repository's as kept at the start (none unless this worker runs repository extensions). */
  async function settingsOf(conversationId: string, workspace: string): Promise<LoadedSettings | string> {
    try {
      const operator = await loadSettingsFile(operatorSettingsPath(home));
      const repository = repositorySettings(await repositoryExtensionsOf(deps, conversationId, workspace));
      return { operator, workspace: repository ?? settingsSchema.parse({}) };
    } catch (err) {
      if (err instanceof SettingsError) return err.message;
      throw err;
    }
  }

  /** The conversation's turn-0 checkpoint in the workspace's private repository: what the job started from. */
  async function startingTree(conversationId: string, workspace: string): Promise<{ startingTree?: StartingTree }> {
    const turnZero = (await store.getCheckpoints(conversationId)).find((c) => c.turn === 0);
    return turnZero ? { startingTree: { gitDir: privateGitDir(home, workspace), commit: turnZero.commit } } : {};
  }

  async function verify(ref: SessionRef, command: string, attempt: number, baseline: boolean): Promise<VerifyOutcome> {
    const config = await configFor(store, ref.conversationId);
    // The check runs like the agent's commands, but never with the network: its result must not depend on it.
    const settings = { ...effectiveSandbox({ ...config, planMode: false }, home, allowEnv ?? []), network: 'off' as const };
    const signal = cancellationSignal();
    const r = await runSandboxed({
      command,
      workspace: ref.workspace,
      settings,
      timeoutSec: VERIFY_TIMEOUT_SEC,
      heartbeat: () => heartbeat(),
      ...(signal ? { signal } : {}),
    });
    if (r.cancelled) throw ApplicationFailure.retryable('verify was cancelled', 'Cancelled');
    const outcome: VerifyOutcome = {
      command,
      passed: r.exitCode === 0 && !r.timedOut && !r.spawnError,
      exitCode: r.exitCode,
      ms: r.ms,
      attempt,
      // A failed check shows the lines that name its failures, then its end; a passing one its end.
      tail: r.spawnError
        ? `verify could not start: ${r.spawnError}`
        : r.timedOut
          ? `${r.excerpt}\n[verify timed out after ${VERIFY_TIMEOUT_SEC} s]`
          : r.exitCode === 0
            ? r.tail
            : r.excerpt,
    };
    // Keyed: a retried attempt writes its event once.
    await store.appendStream(
      ref.conversationId,
      [{ type: 'verify', ...outcome, ...(baseline ? { baseline } : {}) }],
      [`verify:${baseline ? 'baseline' : attempt}`],
    );
    // A verify that builds grows the workspace after the last checkpoint: measured too (within the usage interval).
    recordWorkspaceUsage(store, ref.conversationId, ref.workspace, ref.epoch);
    activityLog(ref.conversationId).info({ command, passed: outcome.passed, exitCode: r.exitCode, ms: r.ms, attempt, baseline }, 'verify ran');
    return outcome;
  }

  return {
    // Fenced like a tool call: a superseded host's setup or verify is killed and writes nothing (activities/fence.ts).
    setupWorkspace: fencedHostStep(async (input: SetupWorkspaceInput): Promise<SetupWorkspaceResult> => {
      const { conversationId, workspace } = input;
      const config = await configFor(store, conversationId);
      // Setup on a worker that was not asked to run commands unconfined (the first step may have run elsewhere).
      refuseUnsandboxed(deps, config.sandbox);
      const loaded = await settingsOf(conversationId, workspace);
      if (typeof loaded === 'string') return { refused: loaded };
      const move = input.afterMove ?? 0;
      // Setup after a move runs the first setup's plan (commands, network, cache key) as it was
      // kept, never one read again from a tree the agent has changed.
      const first = move ? ((await store.getRepositoryExtensions(conversationId))?.setupPlan as SetupPlan | undefined) : undefined;
      const plan: EnvironmentPlan = first ? { ...environmentPlan(config, loaded), ...first.plan } : environmentPlan(config, loaded);
      const out: SetupWorkspaceResult = plan.verify ? { verify: plan.verify } : {};
      const logger = activityLog(conversationId, 0);
      if (plan.setup || plan.maintenance) {
        // Numbered on across the workflow's probing rounds: the stream rows and the finished event are keyed by it.
        const attempt = currentAttempt() + (input.priorAttempts ?? 0);
        const commands = plan.setup ?? [];
        const key = first?.key ?? (await cacheKey({ repo: config.repo ?? workspace, workspace, commands, ...(plan.cache ? { dirs: plan.cache } : {}) })).key;
        if (!move) {
          const { setup, maintenance, setupNetwork, cache } = plan;
          await store.putSetupPlan(conversationId, {
            plan: { ...(setup ? { setup } : {}), ...(maintenance ? { maintenance } : {}), setupNetwork, ...(cache ? { cache } : {}) },
            key,
          } satisfies SetupPlan);
        }
        const moved = move ? { afterMove: move } : {};
        const writer = new StreamWriter(store, conversationId, { seq: setupStreamSeq(input.epoch), attempt, segment: move });
        let streamed = 0;
        // The stream goes to the page, --json and pipes as well as a terminal: colours are stripped.
        const plain = new AnsiStripper();
        const onOutput = (raw: string) => {
          if (streamed >= STREAMED_BYTES) return;
          const text = plain.push(raw);
          streamed += text.length;
          writer.event({
            type: 'setup_output',
            text: streamed >= STREAMED_BYTES ? `${text}\n[agentrun: the rest of the setup output is not streamed; its tail is kept]\n` : text,
          });
        };
        // Setup reaches public hosts through the egress proxy (never loopback, private or link-local
        // addresses): any (`on`, the default), or those of `--setup-network allow:…`.
        const settings = { ...effectiveSandbox({ ...config, planMode: false }, home, allowEnv ?? []), network: plan.setupNetwork as NetworkMode };
        if (settings.policy === 'read-only') settings.policy = 'workspace-write';
        const signal = cancellationSignal();
        writer.event({
          type: 'setup_started',
          commands: [...commands, ...(plan.maintenance ?? [])],
          attempt,
          network: plan.setupNetwork,
          host: hostId(),
          ...moved,
        });
        if (move) onOutput(`[agentrun: the workspace moved to host ${hostId()}; what setup made did not move with it: setup again]\n`);
        const outputs = await watchSetupOutputs(home, workspace, plan.cache ?? [...DEFAULT_CACHE_DIRS], (err) =>
          logger.warn({ err }, 'listing what setup created failed'),
        );
        const setup = await runSetup({
          repo: config.repo ?? workspace,
          workspace,
          commands,
          ...(plan.maintenance ? { maintenance: plan.maintenance } : {}),
          ...(plan.cache ? { cacheDirs: plan.cache } : {}),
          key,
          // What setup makes in a tree the agent has worked in is never kept for other jobs.
          save: !move,
          settings,
          timeoutMs: config.setupTimeoutMs ?? 20 * 60_000,
          // --no-cache: a cold job, nothing read from the cache or kept in it.
          ...(config.noCache ? {} : { cache: new DirectoryCache(cacheRoot(home), settings, diskLimitsFromEnv().cacheMaxBytes) }),
          ...(await startingTree(conversationId, workspace)),
          onOutput,
          heartbeat: () => heartbeat(),
          ...(signal ? { signal } : {}),
          recordConnection: (c) =>
            void store
              .putNetworkConnection({ ...c, conversationId, callId: 'setup' }, input.epoch ?? null)
              .catch((err) => logger.warn({ err }, 'recording a network connection failed')),
          tenant: tenantOfRun(config),
          onCacheProblem: (what, err) => logger.warn({ err }, `${what} failed; setup runs without it`),
        });
        await writer.flush();
        if (signal?.aborted) throw ApplicationFailure.retryable('setup was cancelled', 'Cancelled');
        const { tail, commands: _n, maintenance: _m, ...shown } = setup;
        const created = setup.ok ? await outputs.created(setup.dirs ?? []) : undefined;
        await store.appendStream(
          conversationId,
          [{ type: 'setup_finished', ...shown, ...(setup.ok ? {} : { tail }), ...(created ? { created } : {}), host: hostId(), ...moved }],
          [`setup_finished:${(input.epoch ?? 1) > 1 ? `placement${input.epoch}:` : ''}${move ? `move${move}:` : ''}${attempt}`],
        );
        logger.info({ ok: setup.ok, cached: setup.cached, ms: setup.ms, reason: setup.reason, dirs: setup.dirs, setupAttempt: attempt, ...moved }, 'setup ran');
        // What setup made or the cache restored is most of a workspace's size: measured now, not at the next checkpoint.
        recordWorkspaceUsage(store, conversationId, workspace, input.epoch, true);
        out.setup = setup.ok ? { ...setup, tail: undefined } : setup;
        if (!setup.ok) return out;
      }
      if (input.baseline && plan.verify && !input.afterMove) out.baseline = await verify(input, plan.verify, 0, true);
      return out;
    }),

    verifyWorkspace: fencedHostStep((input: VerifyWorkspaceInput): Promise<VerifyOutcome> => verify(input, input.command, input.attempt, false)),
  };
}
