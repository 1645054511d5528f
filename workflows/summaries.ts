// What the Temporal UI shows for a session: a one-line summary per scheduled activity, the
// workflow's summary at start and its current details. Pure functions (workflow code and the
// client both use them); the summaries are user metadata, so changing them never breaks replay.

import { defaultBranch, expandBranch } from '../src/workspace/routing.js';

/** Longest summary kept: the UI shows one line. */
const MAX = 100;

function oneLine(text: string, max = MAX): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** A scripted model by its file's name, not its (temporary) path. */
const modelName = (model: string) => model.replace(/^scripted:.*\/([^/]+)$/, 'scripted:$1');

export const activitySummary = {
  model: (turn: number, model: string, harder?: boolean) => oneLine(`turn ${turn} · model ${modelName(model)}${harder ? ' (pruned harder)' : ''}`),
  /** `turn 12 · execute_command npm test`: the call's preview (name and target). */
  tool: (turn: number, preview: string) => oneLine(`turn ${turn} · ${preview}`),
  stopHooks: (turn: number) => `turn ${turn} · Stop hooks`,
  delegate: (turn: number, preview: string) => oneLine(`turn ${turn} · ${preview} (reading the agent)`),
  setup: (what: string) => oneLine(`setup · ${what}`),
  /** `verify · npm test (run 2)`: the repository's check, when the model calls attempt_completion. */
  verify: (command: string, attempt: number) => oneLine(`verify · ${command} (run ${attempt})`),
  checkpoint: (turn: number, where: string) => oneLine(`checkpoint turn ${turn} → ${where}`),
  restore: (turn: number) => `restore turn ${turn} checkpoint → new host`,
  /** Whether the workspace's host answers, after a step's attempt there timed out. */
  probe: () => 'probe the workspace host',
  rollback: (to: string) => oneLine(`rollback → ${to}`),
  resultBranch: (branch: string) => oneLine(`result branch ${branch}`),
};

/** The workflow's summary: the task's first line, where it works (repository and branch, or workspace). */
export function workflowSummary(task: string, where: { workspace?: string; repo?: string; branch?: string; agent?: string }): string {
  const first = task.split('\n').find((l) => l.trim()) ?? '(no task)';
  const place = where.repo ? `${where.repo}${where.branch ? ` @ ${where.branch}` : ''}` : (where.workspace ?? '');
  return oneLine(`${where.agent ? `${where.agent}: ` : ''}${oneLine(first, 70)}${place ? ` · ${place}` : ''}`, 160);
}

/** The workflow's static details (markdown): the whole task and where it runs. */
export function workflowDetails(task: string, where: { workspace?: string; repo?: string; branch?: string; model: string }): string {
  const lines = [`**model** ${where.model}`];
  if (where.repo) lines.push(`**repository** ${where.repo}${where.branch ? ` (branch ${where.branch})` : ''}`);
  else if (where.workspace) lines.push(`**workspace** ${where.workspace}`);
  return `${lines.join('  \n')}\n\n${task.slice(0, 2000)}`;
}

export interface Progress {
  turn: number;
  status: string;
  costUsd: number;
  totalTokens: number;
  /** What the session waits for now (the model, a tool call, an approval, an answer …). */
  waitingFor?: string;
}

/** The workflow's current details (markdown), as the UI shows them. */
export function currentDetails(p: Progress): string {
  const parts = [`**turn** ${p.turn}`, `**status** ${p.status}`, `**cost** $${p.costUsd.toFixed(4)}`, `**tokens** ${p.totalTokens}`];
  if (p.waitingFor) parts.push(`**waiting for** ${oneLine(p.waitingFor, 120)}`);
  return parts.join(' · ');
}

/**
 * `staticSummary` and `staticDetails` for starting a session (the client's start paths use it). Given
 * the conversation's id and start time, the result branch is named as it will be (template expanded,
 * or the default); without them (a schedule's runs get their ids later) the template is shown.
 */
export function sessionStartMetadata(
  input: { task?: string; workspace: string; config: { model: string; repo?: string; branch?: string } },
  start?: { id: string; atMs: number },
) {
  const task = input.task ?? '';
  const where = { workspace: input.workspace, repo: input.config.repo, branch: resultBranchName(input.config, start) };
  return { staticSummary: workflowSummary(task, where), staticDetails: workflowDetails(task, { ...where, model: input.config.model }) };
}

/** `staticSummary` and `staticDetails` for starting a batch of repository jobs. */
export function batchStartMetadata(input: { task: string; repos: string[]; config: { model: string } }) {
  const first = input.task.split('\n').find((l) => l.trim()) ?? '(no task)';
  return {
    staticSummary: oneLine(`batch of ${input.repos.length} jobs · ${oneLine(first, 70)}`, 160),
    staticDetails: `**model** ${input.config.model}\n\n${input.task.slice(0, 2000)}\n\n${input.repos.map((r) => `- ${r}`).join('\n')}`,
  };
}

/** The result branch a repository job will push, as far as it is known before it starts. */
export function resultBranchName(config: { repo?: string; branch?: string }, start?: { id: string; atMs: number }): string | undefined {
  if (!start) return config.branch;
  if (config.branch !== undefined) return expandBranch(config.branch, start.id, start.atMs);
  return config.repo !== undefined ? defaultBranch(start.id) : undefined;
}
