// How tool calls and their results read in the terminal: one line per call, a command's output
// as head and tail with its exit code, edits as a diff.
import { DEFAULT_ABOUT, getTool } from '../../tools/index.js';
import type { Style } from './style.js';

/** Lines of a command's output shown before and after the cut. */
const OUTPUT_HEAD = 6;
const OUTPUT_TAIL = 6;
/** Diff lines shown per edit before "… N more lines". */
const DIFF_LINES = 40;

export interface ToolCallView {
  name: string;
  args: Record<string, unknown>;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const oneLine = (s: string) => s.replace(/\s*\n\s*/g, ' ⏎ ').trim();

/** `read_file src/a.ts`, `execute_command npm test`: the call as one readable line (the tool's own, or its name and main argument). */
export function toolLine(call: ToolCallView): string {
  const tool = getTool(call.name);
  const own = tool?.line?.(call.args);
  if (own !== undefined) return own;
  const main = (tool?.about ?? DEFAULT_ABOUT).map((k) => str(call.args[k])).find((v) => v !== undefined);
  return `${call.name}${main !== undefined ? ` ${oneLine(main)}` : ''}`;
}

/** The edit a call makes, as diff lines (`-`/`+`/context), or undefined for tools that make none. */
export function editDiff(call: ToolCallView, style: Style): string[] | undefined {
  const blocks = getTool(call.name)?.edits?.(call.args);
  if (!blocks) return undefined;
  const out: string[] = [];
  blocks.forEach((b, i) => {
    if (i > 0) out.push(style.dim('  ⋯'));
    out.push(...blockDiff(b.search, b.replace, style));
  });
  return capped(out, style);
}

/** Whether the call's result is a command's (exit status, then output). */
export const isCommandResult = (name: string): boolean => getTool(name)?.commandResult === true;

/** One SEARCH/REPLACE block: lines both sides share at the start and end stay as context. */
function blockDiff(search: string, replace: string, style: Style): string[] {
  const a = search.replace(/\n$/, '').split('\n');
  const b = replace.replace(/\n$/, '').split('\n');
  if (search === '') a.length = 0;
  if (replace === '') b.length = 0;
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  return [
    ...a.slice(0, head).map((l) => style.dim(`  ${l}`)),
    ...a.slice(head, a.length - tail).map((l) => style.red(`- ${l}`)),
    ...b.slice(head, b.length - tail).map((l) => style.green(`+ ${l}`)),
    ...a.slice(a.length - tail).map((l) => style.dim(`  ${l}`)),
  ];
}

function capped(lines: string[], style: Style): string[] {
  if (lines.length <= DIFF_LINES) return lines;
  return [...lines.slice(0, DIFF_LINES), style.dim(`  … ${lines.length - DIFF_LINES} more lines`)];
}

export interface CommandOutcome {
  /** `exit 0`, `killed by SIGTERM`, `timed out`… */
  status: string;
  exitCode?: number;
  lines: string[];
}

/** Split execute_command's result ("The command exited with code N.\nOutput:\n…") into status and output. */
export function commandOutcome(result: string): CommandOutcome {
  const nl = result.indexOf('\n');
  const first = nl < 0 ? result : result.slice(0, nl);
  const rest = nl < 0 ? '' : result.slice(nl + 1);
  const code = /exited with code (-?\d+)/.exec(first);
  // "The command was killed by signal X." → "killed by signal X"; "…timed out after 30 s; it and…" → "timed out after 30 s".
  const status = code ? `exit ${code[1]}` : first.replace(/^The command (was )?/, '').replace(/[;.].*$/, '');
  const body = rest.startsWith('Output:\n') ? rest.slice('Output:\n'.length) : rest === '(no output)' ? '' : rest;
  const lines = body.replace(/\n$/, '').split('\n');
  return { status, exitCode: code ? Number(code[1]) : undefined, lines: body === '' ? [] : lines };
}

/** The first and last lines of an output, with the number of lines left out between them. */
export function headAndTail(lines: string[], style: Style, head = OUTPUT_HEAD, tail = OUTPUT_TAIL): string[] {
  if (lines.length <= head + tail + 1) return lines.map((l) => style.dim(l));
  return [
    ...lines.slice(0, head).map((l) => style.dim(l)),
    style.dim(`… ${lines.length - head - tail} lines …`),
    ...lines.slice(-tail).map((l) => style.dim(l)),
  ];
}
