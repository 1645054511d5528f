// The turn port: every extension point of a turn as one named call on one typed object. The
// activities call it at these points (activities/session.ts); a worker builds it from its
// extensions (src/extensions/worker.ts) and its tracer (src/tracing/spans.ts). Nothing here
// knows activity names: a step is observed because its code calls the port, on whatever queue.
import { log } from '../log.js';
import type { HookRecord } from './hooks.js';
import type { Settings } from './settings.js';
import type { FinishReason, Usage } from '../types.js';

interface TurnRef {
  conversationId: string;
  turn: number;
  workspace: string;
}

/** One model step: the prompt, every segment of the answer, its parsing. */
export interface ModelStep extends TurnRef {
  seq: number;
  model: string;
  /** The activity's attempt (a step may run again after a crash or a retryable error). */
  attempt: number;
}

export type ModelOutcome =
  | {
      ok: true;
      /** False when the step ended without an answer: the context did not fit (no request was made). */
      answered: boolean;
      usage: Usage;
      costUsd: number;
      finishReason?: FinishReason;
      /** The stored answer, read only by an observer that asks for it. */
      content(): Promise<string>;
    }
  | { ok: false; error: Error };

/** One tool call answered: run in the workspace, or answered by the workflow itself. */
export interface ToolStep extends TurnRef {
  callId: string;
  name: string;
  attempt: number;
  answeredByWorkflow: boolean;
}

export type ToolOutcome = { ok: true; result: { ok: boolean; status: string; replayed?: boolean } } | { ok: false; error: Error };

interface StopStep extends TurnRef {
  /** How often Stop hooks kept this conversation going already. */
  blocked: number;
}

/** `continue`: the reason the conversation does not end yet (the model reads it). */
export interface StopVerdict {
  continue?: string;
  records: HookRecord[];
}

interface FinishStep {
  conversationId: string;
  workspace: string;
  status: string;
  result?: string;
}

/** A repository's settings for one step: what was kept at the start (src/extensions/repository.ts). */
export interface RepositoryScope {
  settings?: Settings;
  /** The settings file could not be used: told to the model, nothing of it runs. */
  error?: string;
}

type Maybe<T = void> = T | Promise<T>;

/** Whose step runs on a workspace: a workspace's hooks and MCP servers are that conversation's, in its sandbox mode. */
export interface StepScope {
  conversationId: string;
  /** The conversation's commands may not write the workspace (plan mode, `--sandbox read-only`). */
  readOnly: boolean;
  /** The repository's settings as kept at the conversation's start (absent: none run), or why they cannot be used. */
  repository?: RepositoryScope;
}

export interface TurnObserver {
  /** Run a step on this workspace inside the observer's scope (the extension tools, notes and hooks of the workspace). */
  inWorkspace?<T>(workspace: string, step: () => Promise<T>, scope?: StepScope): Promise<T>;
  beforeModel?(e: ModelStep): Maybe;
  afterModel?(e: ModelStep, outcome: ModelOutcome): Maybe;
  /** A turn's record was written (it rides on the next model step, or on the session's end). */
  onTurnEnd?(e: TurnRef): Maybe;
  beforeTool?(e: ToolStep): Maybe;
  afterTool?(e: ToolStep, outcome: ToolOutcome): Maybe;
  /** Inside `inWorkspace`: whether `onStop` has anything to run for this workspace (the workflow then schedules it). */
  watchesStop?(): boolean;
  /** The model called attempt_completion: may keep the conversation going. */
  onStop?(e: StopStep): Promise<StopVerdict | undefined>;
  onFinish?(e: FinishStep): Maybe;
}

/** The observers of a worker as one: every point defined; onStop always gives a verdict. */
export type TurnPort = Required<Omit<TurnObserver, 'onStop'>> & { onStop(e: StopStep): Promise<StopVerdict> };

/**
 * One port from several observers, called in the order given. An observer that throws at a point
 * that only observes is logged and ignored (a point may run more than once: steps are retried).
 */
export function turnPort(...observers: (TurnObserver | undefined)[]): TurnPort {
  const all = observers.filter((o): o is TurnObserver => o !== undefined);
  const each = async (point: keyof TurnObserver, call: (o: TurnObserver) => Maybe<unknown>) => {
    for (const o of all) {
      if (!o[point]) continue;
      try {
        await call(o);
      } catch (err) {
        log.warn({ point, err: (err as Error).message }, 'turn observer failed; ignored');
      }
    }
  };
  const scoped = all.filter((o) => o.inWorkspace);
  return {
    inWorkspace: <T>(workspace: string, step: () => Promise<T>, scope?: StepScope) =>
      scoped.reduceRight<() => Promise<T>>((inner, o) => () => o.inWorkspace!(workspace, inner, scope), step)(),
    beforeModel: (e) => each('beforeModel', (o) => o.beforeModel!(e)),
    afterModel: (e, outcome) => each('afterModel', (o) => o.afterModel!(e, outcome)),
    onTurnEnd: (e) => each('onTurnEnd', (o) => o.onTurnEnd!(e)),
    beforeTool: (e) => each('beforeTool', (o) => o.beforeTool!(e)),
    afterTool: (e, outcome) => each('afterTool', (o) => o.afterTool!(e, outcome)),
    watchesStop: () => all.some((o) => o.watchesStop?.()),
    async onStop(e) {
      const records: HookRecord[] = [];
      for (const o of all) {
        const v = await o.onStop?.(e);
        records.push(...(v?.records ?? []));
        if (v?.continue !== undefined) return { continue: v.continue, records };
      }
      return { records };
    },
    onFinish: (e) => each('onFinish', (o) => o.onFinish!(e)),
  };
}

/**
 * The model step between its two named points: `afterModel` sees the outcome, or the error
 * (then rethrown).
 */
export async function observeModel<R>(port: TurnPort, e: ModelStep, run: () => Promise<R>, outcome: (r: R) => ModelOutcome): Promise<R> {
  await port.beforeModel(e);
  let r: R;
  try {
    r = await run();
  } catch (err) {
    await port.afterModel(e, { ok: false, error: err as Error });
    throw err;
  }
  await port.afterModel(e, outcome(r));
  return r;
}

/** A tool step between `beforeTool` and `afterTool`, as `observeModel`. */
export async function observeTool<R extends { ok: boolean; status: string; replayed?: boolean }>(
  port: TurnPort,
  e: ToolStep,
  run: () => Promise<R>,
): Promise<R> {
  await port.beforeTool(e);
  let r: R;
  try {
    r = await run();
  } catch (err) {
    await port.afterTool(e, { ok: false, error: err as Error });
    throw err;
  }
  await port.afterTool(e, { ok: true, result: r });
  return r;
}
