// A hook's `matcher` on the tool name: empty or "*" (every tool), a name, a glob (`mcp__docs__*`,
// `?` one character), several of those joined by "|" (Claude Code's `Edit|Write`), or a regular
// expression written explicitly as `/…/`. Names and globs are matched here, in linear time; a
// regular expression runs in a worker thread with a time budget, so one with catastrophic
// backtracking cannot stall the worker: past the budget it does not match (and is reported once).
import { Worker } from 'node:worker_threads';
import { log } from '../log.js';

/** How long one regular-expression matcher may run on one tool name. */
const REGEX_BUDGET_MS = 2000;
const NAME_OR_GLOB = /^[A-Za-z0-9_?*-]+$/;

export type Matcher = { kind: 'all' } | { kind: 'names'; globs: string[] } | { kind: 'regex'; source: string };

/** The matcher as written; a string that is neither kind is an error saying what is accepted. */
export function parseMatcher(m: string | undefined): Matcher {
  const text = m?.trim() ?? '';
  if (text === '' || text === '*') return { kind: 'all' };
  if (text.length >= 2 && text.startsWith('/') && text.endsWith('/')) {
    const source = text.slice(1, -1);
    new RegExp(source); // throws on a bad expression
    return { kind: 'regex', source };
  }
  const globs = text.split('|').map((g) => g.trim());
  if (globs.every((g) => NAME_OR_GLOB.test(g))) return { kind: 'names', globs };
  throw new Error(`"${text}" is not a tool name, "*", a glob (mcp__docs__*) or names joined by "|"; write a regular expression as /…/`);
}

/** Whether `name` matches `glob` (`*` any run, `?` one character), without backtracking blow-up. */
export function globMatches(glob: string, name: string): boolean {
  let g = 0;
  let n = 0;
  let star = -1;
  let mark = 0;
  while (n < name.length) {
    if (g < glob.length && (glob[g] === '?' || glob[g] === name[n])) {
      g++;
      n++;
    } else if (g < glob.length && glob[g] === '*') {
      star = g++;
      mark = n;
    } else if (star >= 0) {
      g = star + 1;
      n = ++mark;
    } else return false;
  }
  while (g < glob.length && glob[g] === '*') g++;
  return g === glob.length;
}

const RUN_REGEX = `
const { parentPort, workerData } = require('node:worker_threads');
parentPort.postMessage(new RegExp(workerData.source).test(workerData.name));
`;

const decided = new Map<string, Promise<boolean>>();
const reported = new Set<string>();

/** An explicit regular expression on a name, off the main thread, within the budget; memoised (tool names are few). */
function regexMatches(source: string, name: string, budgetMs: number): Promise<boolean> {
  const key = `${source}\0${name}`;
  const hit = decided.get(key);
  if (hit) return hit;
  const p = new Promise<boolean>((resolve) => {
    const worker = new Worker(RUN_REGEX, { eval: true, workerData: { source, name }, resourceLimits: { maxOldGenerationSizeMb: 32 } });
    const timer = setTimeout(() => {
      if (!reported.has(source)) {
        reported.add(source);
        log.warn({ matcher: `/${source}/`, tool: name, budgetMs }, 'a hook matcher ran past its time budget: it does not match; simplify the expression');
      }
      void worker.terminate();
      resolve(false);
    }, budgetMs);
    worker.once('message', (v: unknown) => {
      clearTimeout(timer);
      void worker.terminate();
      resolve(v === true);
    });
    worker.once('error', () => {
      clearTimeout(timer);
      resolve(false);
    });
  });
  if (decided.size > 1000) decided.delete(decided.keys().next().value!);
  decided.set(key, p);
  return p;
}

/** Whether the matcher selects this tool (no tool: an event without one, such as Stop, always matches). */
export async function matcherSelects(m: string | undefined, tool: string | undefined, budgetMs = REGEX_BUDGET_MS): Promise<boolean> {
  if (tool === undefined) return true;
  let parsed: Matcher;
  try {
    parsed = parseMatcher(m);
  } catch {
    return false; // validated when the settings were read; never a match otherwise
  }
  if (parsed.kind === 'all') return true;
  if (parsed.kind === 'names') return parsed.globs.some((g) => globMatches(g, tool));
  return regexMatches(parsed.source, tool, budgetMs);
}
