// The calls of a turn: extracted from the stored assistant message (XML blocks in the text and
// native tool_calls) and validated, then classified, once: what each is about (target, preview)
// and what it may do (danger, repeatable; src/tools/safety.ts). The classification travels with
// the call in the small summary the workflow decides on, and down to the tool step, which runs the
// call on it without validating or checking it again.
import { createHash } from 'node:crypto';
import { stableStringify } from '../canonical-json.js';
import { LoopDetector } from '../context/loop.js';
import {
  answeredByWorkflow,
  callSafety,
  DEFAULT_ABOUT,
  getTool,
  mutates,
  readsOnly,
  toolNames,
  validateToolArgs,
  type CallSafety,
  type ToolDefinition,
} from '../tools/index.js';
import type { StoredMessage, ToolCall } from '../types.js';
import { parseNativeArguments } from '../parser/native.js';
import { parseXmlToolCalls, type XmlParseResult } from '../parser/xml-stream.js';

export const PREVIEW_CHARS = 300;

export interface ParsedCall extends ToolCall {
  invalid?: string;
}

/** What the workflow needs to decide about one call: no arguments beyond a preview. */
export interface CallSummary {
  id: string;
  name: string;
  /**
   * The tool's kind as the workflow reads it (callFlags): these three flags are the summary's form
   * in every recorded history, so they stay; a tool declares only its kind.
   */
  readOnly: boolean;
  mutating: boolean;
  control: boolean;
  /** Needs approval under `dangerous` policy (dangerous command, or requires_approval=true). */
  dangerous: boolean;
  reasons: string[];
  /** Validation error: the call is answered with this error, not run. */
  invalid?: string;
  preview: string;
  /** Control tools' main argument (question, completion result, plan), truncated. */
  text?: string;
  /** execute_command's own timeout_seconds, so the activity's timeout can follow it. */
  timeoutSeconds?: number;
  /** First 12 hex of sha256 over the canonical JSON of the arguments: an approval names what it saw. */
  argsHash?: string;
  /** What the call is about (its path, command, pattern…), truncated. Absent in summaries made before calls were classified once. */
  target?: string;
  /** What the command or the file write may do; the tool step takes it instead of checking again. Absent as `target` is. */
  safety?: CallSafety;
}

/** A call's classification as the tool step takes it (ToolCallInput.classified); its preview is `${name} ${target}`. */
export type Classification = Required<Pick<CallSummary, 'target' | 'safety'>>;

/**
 * Tool calls of one stored assistant message: XML blocks in the text and native tool_calls.
 * `xml`: the text's parse as it streamed (StreamedAnswer), when the caller holds it; else parsed here.
 */
export function extractCalls(message: StoredMessage, xml?: Pick<XmlParseResult, 'calls' | 'problems'>): ParsedCall[] {
  const calls: ParsedCall[] = [];
  const parsed = xml ?? parseXmlToolCalls(message.content, toolNames());
  for (const c of parsed.calls) calls.push({ id: '', name: c.name, args: c.params });
  for (const p of parsed.problems) {
    calls.push({
      id: '',
      name: p.name ?? 'unknown',
      args: {},
      invalid: `Your ${p.name ?? ''} tool call could not be read: ${p.error}. Send the complete call again.`,
    });
  }
  for (const n of message.toolCalls ?? []) {
    const args = parseNativeArguments(n.arguments);
    if (!args.ok)
      calls.push({ id: '', nativeId: n.id, name: n.name, args: {}, invalid: `The arguments of your ${n.name} call are not valid JSON: ${args.error}` });
    else calls.push({ id: '', nativeId: n.id, name: n.name, args: args.value });
  }
  return calls.map((c, i) => {
    const id = `${message.seq}.${i}`;
    if (c.invalid) return { ...c, id };
    if (!getTool(c.name)) return { ...c, id, invalid: `There is no tool named ${c.name}. Use one of: ${toolNames().join(', ')}.` };
    const v = validateToolArgs(c.name, c.args);
    return v.ok ? { ...c, id, args: v.args } : { ...c, id, invalid: v.error };
  });
}

/** What a call is about: its path, command, pattern, question… (the arguments its tool names: `about`). */
export function callTarget(call: ToolCall): string {
  const about = getTool(call.name)?.about ?? DEFAULT_ABOUT;
  const main = about.map((k) => call.args[k]).find((v) => v !== undefined && v !== null);
  return typeof main === 'string' ? main : JSON.stringify(call.args);
}

export function callPreview(call: ToolCall): string {
  return previewOf(call.name, callTarget(call));
}

/**
 * The one classifier of a call: what it is about and what it may do. Runs once per call, as it is
 * parsed. `unsandboxed`: the conversation's commands run without the sandbox (src/tools/safety.ts).
 */
export function classifyCall(c: ToolCall, workspace: string, unsandboxed = false): Classification {
  return { target: callTarget(c).slice(0, PREVIEW_CHARS), safety: callSafety(getTool(c.name), c.args, workspace, unsandboxed) };
}

/** `name target`, as the stream and the approval show a call. */
export function previewOf(name: string, target: string): string {
  return `${name} ${target}`.slice(0, PREVIEW_CHARS);
}

/** The flags of a call's summary, from its tool's kind (an unknown tool's call: none; it is answered as invalid). */
export function callFlags(def: Pick<ToolDefinition, 'kind'> | undefined): Pick<CallSummary, 'readOnly' | 'mutating' | 'control'> {
  return def ? { readOnly: readsOnly(def), mutating: mutates(def), control: answeredByWorkflow(def) } : { readOnly: false, mutating: false, control: false };
}

export function summarizeCall(c: ParsedCall, workspace: string, unsandboxed = false): CallSummary {
  const def = getTool(c.name);
  const { target, safety } = classifyCall(c, workspace, unsandboxed);
  const textArg = def?.workflowText;
  const text = textArg !== undefined ? c.args[textArg] : undefined;
  return {
    id: c.id,
    name: c.name,
    ...callFlags(def),
    dangerous: safety.dangerous || c.args.requires_approval === true || def?.approvalReason !== undefined,
    reasons: [
      ...safety.reasons,
      ...(def?.approvalReason !== undefined ? [def.approvalReason] : []),
      ...(c.args.requires_approval === true ? ['the model asked for approval (requires_approval=true)'] : []),
    ],
    invalid: c.invalid,
    preview: previewOf(c.name, target),
    text: text === undefined ? undefined : (typeof text === 'string' ? text : JSON.stringify(text)).slice(0, 8000),
    ...(typeof c.args.timeout_seconds === 'number' ? { timeoutSeconds: c.args.timeout_seconds } : {}),
    argsHash: argsHash(c.args),
    target,
    safety,
  };
}

/** Computed here, in the activity that summarises the calls: workflow code has no sha256. */
export function argsHash(args: Record<string, unknown>): string {
  return createHash('sha256').update(stableStringify(args)).digest('hex').slice(0, 12);
}

/**
 * Loop check over the recent assistant messages (oldest first, ending with the current one,
 * whose calls are `current`): the same call repeated, or the same output over and over. The earlier
 * messages' calls are those their own turns parsed and stored (`parsed`, by seq): none is parsed again.
 */
export function detectLoop(recent: StoredMessage[], parsed: Map<number, ToolCall[]>, current: ParsedCall[], threshold: number): string | undefined {
  const detector = new LoopDetector({ toolCallThreshold: threshold });
  const last = recent[recent.length - 1];
  let loop: string | undefined;
  for (const m of recent) {
    const mine = m === last ? current : (parsed.get(m.seq) ?? []);
    let hit = false;
    for (const c of mine) hit = detector.observeToolCall(c.name, c.args) || hit;
    const repeated = detector.observeContent(m.content);
    if (m === last && hit) loop = `the same ${mine[mine.length - 1]?.name} call with the same arguments came ${threshold} times in a row`;
    else if (m === last && repeated) loop = 'the same output is being repeated over and over';
  }
  return loop;
}
