// runToolOnce: every tool call safe to run twice (principle 3, docs/architecture.md). The ledger, keyed by the
// tool-call id, holds the call's state; file writes record their intent (before/after hashes)
// before they happen, so a retry after a crash can tell whether the write landed.
import { readBeneathOrNull } from './confine.js';
import { callSafety } from './safety.js';
import { getTool, validateToolArgs } from './registry.js';
import {
  answeredByWorkflow,
  isFileWriteTool,
  mutates,
  ToolError,
  type CallSafety,
  type FileWriteTool,
  type ToolContext,
  type ToolDefinition,
  type ToolResult,
} from './types.js';
import { isFsUserError, sha256 } from './util.js';
import { stableStringify } from '../canonical-json.js';
import type { LedgerEntry, LedgerPort } from '../store/types.js';

export type { LedgerEntry, LedgerPort };

/** Store-agnostic ledger. Ids must be unique within the ledger (scope it per conversation). */

/** The ledger, with the entry of one call already read (the store reads it with the call, in one round trip): the first look-up of that call is answered from it. */
export function withKnownEntry(ledger: LedgerPort, callId: string, entry: LedgerEntry | null): LedgerPort {
  let known = true;
  return {
    get: (id) => {
      if (id !== callId || !known) return ledger.get(id);
      known = false;
      return Promise.resolve(entry);
    },
    start: (e) => ledger.start(e),
    finish: (id, r) => ledger.finish(id, r),
  };
}

/**
 * What became of a call that ran again after its workspace was restored from an older checkpoint
 * (its host was lost): `reapplied`, its file change made again from the stored call (the file was as
 * the call had found it); `kept`, the change was in the restored workspace already; `ran-again`, a
 * repeatable call (or one that had changed nothing) run again; `conflict`, a file neither as the call
 * found it nor as it left it, so nothing was applied; `interrupted`, a command that may not run twice,
 * not run again; `recorded`, a call that changed nothing that could be lost (a read, a failed write):
 * its recorded result stands; `not-started`, a call that had not started there, run for the first time.
 */
export type Recovery = 'reapplied' | 'kept' | 'ran-again' | 'conflict' | 'interrupted' | 'recorded' | 'not-started';

export type RunOnceResult = ToolResult & { replayed?: boolean; interrupted?: boolean; recovery?: Recovery };

/** How long the loser of a race for one call waits for the winner's result before giving up (an infrastructure error: retried). */
const LEDGER_WAIT_MS = 30 * 60_000;

export const INTERRUPTED_OUTPUT = 'The command was interrupted by a worker crash; its outcome is unknown. Check the workspace state before running it again.';

/** The answer to a call that may not run twice and was cut off: a command is named, so the model knows which one. */
function interruptedOutput(name: string, args: Record<string, unknown>, finished: boolean): string {
  if (name !== 'execute_command' || typeof args.command !== 'string') return INTERRUPTED_OUTPUT;
  const command = `The command \`${args.command.length > 200 ? `${args.command.slice(0, 200)}…` : args.command}\``;
  return finished
    ? `${command} finished on a host that was lost before its changes left it, so they are gone; it may not be safe to run twice, so it was not run again. Check the workspace state and run it again if it is still needed.`
    : `${command} was interrupted by a worker crash and may not be safe to run twice, so it was not run again; its outcome is unknown. Check the workspace state before running it again.`;
}

/** The ledger's key for what a call does: sha256 over the tool and its arguments (canonical JSON). Stored: never change its text. */
export function ledgerArgsHash(tool: string, args: Record<string, unknown>): string {
  return sha256(stableStringify({ tool, args }));
}

/** Tool-level failures become results the model sees; anything else is an infrastructure failure. */
function errorToResult(e: unknown): ToolResult {
  if (e instanceof ToolError) return { ok: false, output: e.message, meta: { error: true, ...e.meta } };
  if (isFsUserError(e)) return { ok: false, output: `Error: ${(e as Error).message}`, meta: { error: true, code: (e as NodeJS.ErrnoException).code } };
  throw e;
}

async function execute(tool: ToolDefinition, args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
  try {
    return await tool.run!(args, ctx);
  } catch (e) {
    return errorToResult(e);
  }
}

/** Validate and run a tool without a ledger (errors for the model become results). */
export async function runTool(name: string, rawArgs: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
  const tool = getTool(name);
  const v = validateToolArgs(name, rawArgs);
  if (!v.ok || !tool) return { ok: false, output: v.ok ? `There is no tool named "${name}".` : v.error, meta: { invalidArgs: true } };
  if (answeredByWorkflow(tool) || !tool.run) throw new Error(`${name} is a control tool; the workflow handles it`);
  return execute(tool, v.args, ctx);
}

/**
 * A file write whose attempt was cut off (`started`), or that finished on a host whose workspace was
 * then restored from an older checkpoint (`done`, `afterMove`): the file's hash now decides. As the
 * call left it: kept. As the call found it: the change is made again from the stored arguments (prepared
 * anew, it must come to the recorded after-hash). Anything else is a conflict, named, never guessed.
 */
async function recoverWrite(
  tool: FileWriteTool,
  entry: LedgerEntry,
  args: Record<string, unknown>,
  ctx: ToolContext,
  ledger: LedgerPort,
): Promise<RunOnceResult> {
  const intent = entry.intent!;
  const done = entry.state === 'done' && entry.result;
  let current: string | null;
  try {
    const bytes = await readBeneathOrNull(ctx.workspace, intent.path);
    current = bytes === null ? null : sha256(bytes);
  } catch (e) {
    const r = errorToResult(e);
    await ledger.finish(entry.callId, r);
    return r;
  }
  let result: ToolResult;
  let recovery: Recovery;
  if (current === intent.afterHash) {
    recovery = 'kept';
    result = done
      ? { ...entry.result!, meta: { ...entry.result!.meta, recovered: 'already-applied' } }
      : {
          ok: true,
          output: `Applied the change to ${intent.path} (the write had landed before a worker restart; it was not repeated).`,
          meta: { path: intent.path, recovered: 'already-applied' },
        };
  } else if (current === intent.beforeHash) {
    try {
      const prepared = await tool.prepare(args, ctx);
      if (prepared.afterHash !== intent.afterHash) {
        recovery = 'conflict';
        result = conflict(intent.path);
      } else {
        recovery = 'reapplied';
        const applied = await tool.apply(prepared, ctx);
        result = done
          ? { ...entry.result!, meta: { ...entry.result!.meta, recovered: 'reapplied' } }
          : { ...applied, meta: { ...applied.meta, recovered: 'reapplied' } };
      }
    } catch (e) {
      recovery = 'conflict';
      result = errorToResult(e);
    }
  } else {
    recovery = 'conflict';
    result = conflict(intent.path);
  }
  // A done call keeps its first result in the ledger; the answer now is what the restored workspace holds.
  if (!done) await ledger.finish(entry.callId, result);
  return { ...result, recovery };
}

function conflict(p: string): ToolResult {
  return {
    ok: false,
    output: `${p} changed after this edit was prepared (an earlier attempt was interrupted by a worker crash), so the edit was not applied. Read the file again and redo the change if it is still needed.`,
    meta: { path: p, conflict: true },
  };
}

/**
 * Run a tool call at most once in effect. A call already done returns its recorded result
 * (`replayed`); a call interrupted mid-way is recovered as principle 3 (docs/architecture.md) describes.
 * A call that comes with its `safety` is the call as it was parsed (src/turn/calls.ts): its arguments
 * were validated and it was classified then, so it runs as it is, neither validated nor checked again.
 * Throws only on infrastructure failures (ledger, disk full, …).
 */
export async function runToolOnce(
  call: {
    id: string;
    name: string;
    args: Record<string, unknown>;
    safety?: CallSafety;
    /**
     * The workspace was restored from a checkpoint that may predate this call (its host was lost): a
     * call found done has its file change made again where it is missing, and a command that did finish
     * runs again only if it may run twice.
     */
    afterMove?: boolean;
  },
  ctx: ToolContext,
  ledger: LedgerPort,
): Promise<RunOnceResult> {
  const tool = getTool(call.name);
  const v = call.safety ? { ok: true as const, args: call.args } : validateToolArgs(call.name, call.args);
  if (!v.ok || !tool) return { ok: false, output: v.ok ? `Unknown tool ${call.name}` : v.error, meta: { invalidArgs: true } };
  if (answeredByWorkflow(tool) || !tool.run) throw new Error(`${call.name} is a control tool; the workflow handles it, not runToolOnce`);
  const args = v.args;
  const hash = ledgerArgsHash(call.name, args);
  if (call.safety) ctx = { ...ctx, safety: call.safety };

  const entry = await ledger.get(call.id);
  if (entry) {
    if (entry.tool !== call.name || entry.argsHash !== hash) {
      throw new Error(`ledger: call ${call.id} was recorded for ${entry.tool} with other arguments; refusing to guess`);
    }
    const done = entry.state === 'done' && entry.result;
    // Done where nothing of it can be missing: its recorded result. After a move, a call that changed
    // nothing (a read, a failed write, an answer already given as interrupted) is one of these too.
    if (done && (!call.afterMove || !mutates(tool) || entry.result!.meta?.interrupted || (isFileWriteTool(tool) && (!entry.intent || !entry.result!.ok)))) {
      return { ...entry.result!, replayed: true, ...(entry.result!.meta?.interrupted ? { interrupted: true } : {}) };
    }
    // 'started' (an earlier attempt died before recording its result), or done on a lost host.
    if (isFileWriteTool(tool) && entry.intent) return recoverWrite(tool, entry, args, ctx, ledger);
    const recovery: Recovery | undefined = call.afterMove ? 'ran-again' : undefined;
    if (!(call.safety ?? callSafety(tool, args, ctx.workspace, ctx.sandbox?.policy === 'off')).repeatable) {
      const r: ToolResult = { ok: false, output: interruptedOutput(call.name, args, Boolean(done)), meta: { interrupted: true } };
      if (!done) await ledger.finish(call.id, r);
      return { ...r, interrupted: true, ...(call.afterMove ? { recovery: 'interrupted' as const } : {}) };
    }
    // Read-only tools, repeatable commands, and file tools that failed before writing: run again.
    const r = await runFresh(tool, args, ctx);
    if (!done) await ledger.finish(call.id, r.result);
    return { ...r.result, ...(recovery ? { recovery } : {}) };
  }

  const base: LedgerEntry = { callId: call.id, tool: call.name, argsHash: hash, state: 'started' };
  if (isFileWriteTool(tool)) {
    let prepared;
    try {
      prepared = await tool.prepare(args, ctx);
    } catch (e) {
      const r = errorToResult(e);
      if (!(await ledger.start(base))) return waitForWinner(call.id, ctx, ledger);
      await ledger.finish(call.id, r);
      return r;
    }
    if (!(await ledger.start({ ...base, intent: { path: prepared.path, beforeHash: prepared.beforeHash, afterHash: prepared.afterHash } })))
      return waitForWinner(call.id, ctx, ledger);
    let r: ToolResult;
    try {
      r = await tool.apply(prepared, ctx);
    } catch (e) {
      r = errorToResult(e);
    }
    await ledger.finish(call.id, r);
    return r;
  }
  if (!(await ledger.start(base))) return waitForWinner(call.id, ctx, ledger);
  const r = await execute(tool, args, ctx);
  await ledger.finish(call.id, r);
  return r;
}

/**
 * Another attempt claimed this call between our look-up and our claim: it runs the tool, not us.
 * Wait for its result (heartbeating) and answer with it, as a replay.
 */
async function waitForWinner(callId: string, ctx: ToolContext, ledger: LedgerPort, timeoutMs = LEDGER_WAIT_MS): Promise<RunOnceResult> {
  const end = Date.now() + timeoutMs;
  for (let delay = 50; ; delay = Math.min(delay * 2, 1000)) {
    const e = await ledger.get(callId);
    if (e?.state === 'done' && e.result) return { ...e.result, replayed: true, ...(e.result.meta?.interrupted ? { interrupted: true } : {}) };
    if (ctx.signal?.aborted) throw new Error(`ledger: call ${callId} is run by another attempt; this one was cancelled while waiting for it`);
    if (Date.now() > end)
      throw new Error(`ledger: call ${callId} is run by another attempt that recorded no result in ${Math.round(timeoutMs / 1000)} s; retry the step`);
    ctx.heartbeat?.({ waitingForCall: callId });
    await new Promise((r) => setTimeout(r, delay));
  }
}

async function runFresh(tool: ToolDefinition, args: Record<string, unknown>, ctx: ToolContext): Promise<{ result: ToolResult }> {
  if (isFileWriteTool(tool)) {
    try {
      return { result: await tool.apply(await tool.prepare(args, ctx), ctx) };
    } catch (e) {
      return { result: errorToResult(e) };
    }
  }
  return { result: await execute(tool, args, ctx) };
}
