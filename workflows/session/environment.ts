// The repository's environment in a `session` conversation: setup before turn 1 (and again on the
// host a move restored the workspace on), the verify command when the model calls
// attempt_completion, and the workspace's Stop hooks. Each runs on the workspace's host.
// Deterministic: no Node APIs here.
import { ApplicationFailure } from '@temporalio/workflow';
import type { RunConfig } from '../../src/config.js';
import type { ConversationResult } from '../api.js';
import { HostLost, type HostCarried } from './host.js';
import type { StepRunner } from './steps.js';
import type { Ending, SessionCarried, SessionEnvironment } from './types.js';

/** Stop hooks may keep a conversation from ending this many times; after that it ends when the model finishes. */
const MAX_STOP_BLOCKS = 3;

export class Environment {
  /** Set when the last verify run failed and no attempt is left: the conversation ends `failed`. */
  verifyFailed = false;

  constructor(
    private readonly steps: StepRunner,
    private readonly st: HostCarried & Pick<SessionCarried, 'environment' | 'pending' | 'stopBlocks'>,
    private readonly config: RunConfig,
  ) {}

  /**
   * The repository's environment, before turn 1: setup (or its outputs from the cache) on the
   * workspace's host, and the verify command in force. Only for conversations that name one (flags)
   * or whose settings do; a worker lost during setup means setup runs again (on the new host after a move).
   */
  async setup(fromSettings: boolean): Promise<Ending | undefined> {
    const { config, steps } = this;
    if (!(config.setup?.length || config.maintenance?.length || config.verify || fromSettings)) return undefined;
    // Setup changes the workspace: not before its turn-0 checkpoint exists.
    if (steps.gate.turnZero) await steps.gate.turnZero;
    const baseline = config.verifyBaseline ? { baseline: true } : {};
    const r = await steps.run(
      'setup',
      [oneLineCommands(config.setup) ?? 'the repository settings'],
      (a, _afterWait, priorAttempts) => a.setupWorkspace({ ...steps.ref, ...baseline, ...(priorAttempts ? { priorAttempts } : {}) }),
      { arg: config.verifyBaseline },
    );
    this.st.environment = {
      verifyRuns: 0,
      ...(r.setup
        ? { setup: { ok: r.setup.ok, ms: r.setup.ms, cached: r.setup.cached, exitCode: r.setup.exitCode, reason: r.setup.reason, tail: r.setup.tail } }
        : {}),
      ...(r.verify ? { verify: r.verify } : {}),
      ...(r.baseline ? { baseline: { ...r.baseline, tail: r.baseline.tail.slice(-1000) } } : {}),
    };
    if (r.refused) return { status: 'failed', reason: r.refused };
    if (r.setup && !r.setup.ok) return { status: 'failed', reason: r.setup.reason ?? `setup failed (exit ${r.setup.exitCode})` };
    return undefined;
  }

  /**
   * Setup again on the host a move restored the workspace on, before any step there (HostRouting
   * calls it, on that host): the checkpoint held the repository's files, not what setup made. The
   * host's cache or the commands, with the same network and time limit; a failure ends the conversation.
   */
  async setupAfterMove(): Promise<void> {
    const { st, steps } = this;
    const afterMove = st.failovers?.length ?? 1;
    const r = await steps.run(
      'setupAfterMove',
      [`again after move ${afterMove}: ${oneLineCommands(this.config.setup) ?? 'the repository settings'}`],
      (a, _afterWait, priorAttempts) => a.setupWorkspace({ ...steps.ref, afterMove, ...(priorAttempts ? { priorAttempts } : {}) }),
    );
    const failed = r.refused ?? (r.setup && !r.setup.ok ? (r.setup.reason ?? `setup failed (exit ${r.setup.exitCode})`) : undefined);
    if (failed === undefined) return;
    if (r.setup) {
      const { ok, ms, cached, exitCode, reason, tail } = r.setup;
      st.environment!.setup = { ok, ms, cached, exitCode, reason, tail };
    }
    throw ApplicationFailure.nonRetryable(`${failed}, on host ${st.host?.hostId ?? '?'} after the workspace moved there`, 'SetupFailed');
  }

  /**
   * The repository's check, run when the model calls attempt_completion. A failure goes back to the
   * model (its output's tail, like a Stop hook's reason) until `verifyAttempts` runs are spent; then
   * the conversation ends `failed` (its branch is still committed, named unverified). The completion
   * when the model may finish, else undefined.
   */
  async verify(turn: number, completion: string, command: string): Promise<string | undefined> {
    const { st, steps } = this;
    const env = st.environment!;
    const max = this.config.verifyAttempts ?? 3;
    env.verifyRuns += 1;
    const attempt = env.verifyRuns;
    const v = await steps.run('verify', [command, attempt], (a) => a.verifyWorkspace({ ...steps.ref, command, attempt }));
    env.lastVerify = { ...v, tail: v.tail.slice(-2000) };
    if (v.passed) return completion;
    const last = attempt >= max;
    st.pending.push({
      role: 'user',
      kind: 'notice',
      turn,
      content:
        `[The repository's check \`${command}\` failed (exit ${v.exitCode ?? 'none'}; run ${attempt} of at most ${max}). The end of its output:]\n${v.tail.slice(-3000)}\n` +
        (last ? '[No verify run is left: the conversation ends as failed.]' : 'Fix what it reports, then call attempt_completion again.'),
    });
    if (!last) return undefined;
    this.verifyFailed = true;
    return completion;
  }

  /**
   * The workspace's Stop hooks (settings.json), run as their own activity when the model is about
   * to finish: one that blocks keeps the conversation going, its reason the model's next message.
   * At most MAX_STOP_BLOCKS times per conversation, so a hook that always blocks cannot hold it.
   */
  async stopHooks(turn: number, completion: string): Promise<string | undefined> {
    const { st, steps } = this;
    const blocked = st.stopBlocks ?? 0;
    if (blocked >= MAX_STOP_BLOCKS) return completion;
    let r;
    try {
      r = await steps.run('stopHooks', [turn], (a) => a.stopHook({ ...steps.ref, turn, blocked }));
    } catch (err) {
      if (!(err instanceof HostLost)) throw err;
      // The hooks went with the host; the model had finished, so the conversation ends.
      await steps.hosts.recover(err);
      return completion;
    }
    if (r.continue === undefined) return completion;
    st.stopBlocks = blocked + 1;
    st.pending.push({
      role: 'user',
      kind: 'notice',
      turn,
      content: `[A Stop hook did not let the conversation end (${st.stopBlocks} of at most ${MAX_STOP_BLOCKS} times): ${r.continue}]\nDeal with that, then call attempt_completion again.`,
    });
    return undefined;
  }
}

/** The setup commands on one line for a summary (`npm ci; npm run build`), or undefined when the settings name them. */
function oneLineCommands(commands: string[] | undefined): string | undefined {
  return commands?.length ? commands.map((c) => c.split('\n')[0]).join('; ') : undefined;
}

/** What the result says of setup and verify (`run --json`'s result line, the batch table). */
export function environmentResult(env: SessionEnvironment | undefined): Pick<ConversationResult, 'setup' | 'verify'> {
  if (!env) return {};
  const v = env.lastVerify;
  return {
    ...(env.setup
      ? {
          setup: {
            ok: env.setup.ok,
            ms: env.setup.ms,
            cached: env.setup.cached,
            ...(env.setup.ok ? {} : { exitCode: env.setup.exitCode ?? null, reason: env.setup.reason, tail: env.setup.tail }),
          },
        }
      : {}),
    ...(env.verify
      ? {
          verify: {
            command: env.verify,
            passed: v?.passed ?? null,
            exitCode: v?.exitCode ?? null,
            attempts: env.verifyRuns,
            ms: v?.ms ?? 0,
            ...(v && !v.passed ? { tail: v.tail } : {}),
            ...(env.baseline ? { baseline: { passed: env.baseline.passed, exitCode: env.baseline.exitCode } } : {}),
          },
        }
      : {}),
  };
}
