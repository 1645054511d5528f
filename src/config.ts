// Per-conversation run options: one zod schema for the CLI, config files and the
// workflow input. Kept free of Node APIs because the workflow imports the types.
import { z } from 'zod';

export const runConfigSchema = z.object({
  /** `scripted:/abs/file.yaml` or a provider model name (`gpt-4o`, `deepseek-chat`, …). */
  model: z.string().min(1),
  maxTurns: z.number().int().positive().default(50),
  /** Total tokens (prompt + completion) over the whole conversation. */
  maxTokens: z.number().int().positive().optional(),
  maxCostUsd: z.number().positive().optional(),
  maxTimeMs: z.number().int().positive().optional(),
  approval: z.enum(['never', 'dangerous', 'always']).default('dangerous'),
  approvalTimeoutMs: z.number().int().positive().default(30 * 60_000),
  approvalTimeoutAction: z.enum(['deny', 'approve']).default('deny'),
  /** How long ask_followup_question waits for an answer before the run ends as failed. */
  questionTimeoutMs: z.number().int().positive().default(24 * 3600_000),
  toolFormat: z.enum(['xml', 'native']).default('xml'),
  continuation: z.enum(['prefill', 'prompt']).default('prompt'),
  maxContinuations: z.number().int().min(0).max(20).default(6),
  /** `80k`, `1.5M`, `0.8`, 80000 … parsed by src/context/safe-zone.ts. */
  safeZone: z.union([z.string(), z.number()]).optional(),
  contextWindow: z.number().int().positive().optional(),
  /** Replies in a row without a tool call before the run fails (each gets a reminder first). */
  maxNoToolReplies: z.number().int().positive().default(3),
  loopDetection: z.boolean().default(true),
  loopThreshold: z.number().int().min(2).default(5),
  /** Continue-as-new after this many turns in one run (besides the server's suggestion). */
  continueAsNewEveryTurns: z.number().int().positive().optional(),
  /** Heartbeat timeout of streaming and command activities: how fast a dead worker is noticed. */
  heartbeatTimeoutMs: z.number().int().min(1000).default(30_000),
  /** Newest turns whose tool outputs are never cleared by pruning. */
  keepRecentTurns: z.number().int().min(0).default(3),
  /** Extra system instructions appended to the prompt. */
  instructions: z.string().optional(),
  /** Set by the schedule that started the run, for search attributes. */
  scheduleId: z.string().optional(),
  planMode: z.boolean().default(false),
});

export type RunConfigInput = z.input<typeof runConfigSchema>;
export type RunConfig = z.output<typeof runConfigSchema>;

/** Parse `90s`, `30m`, `2h`, `1d`, or plain milliseconds. */
export function parseDuration(text: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?$/.exec(text.trim());
  if (!m) throw new Error(`invalid duration "${text}": use a number with ms, s, m, h or d (e.g. 30m)`);
  const n = Number(m[1]);
  const unit = m[2] ?? 'ms';
  const factor = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[unit]!;
  return Math.round(n * factor);
}
