// The conversation as a person watches it in a terminal: the model's prose as it streams (tool
// blocks taken out), one line per tool call, a command's output and exit code, edits as a diff,
// a spinner while the model or a tool works, the exact command to run when a person is needed,
// and a footer per turn. Plain text (no colours, no spinner) when the stream is not a rich terminal.
import { XmlToolCallParser } from '../../parser/index.js';
import { TOOL_NAMES } from '../../tools/index.js';
import { formatInt } from '../../context/render.js';
import { formatCached, type StreamEvent, type Usage } from '../../types.js';
import { NO_SPINNER, OraSpinner, formatElapsed, type Spinner } from './spinner.js';
import { isRichTerminal, styleFor, wrapIndented, type Style, type TerminalStream } from './style.js';
import { commandOutcome, editDiff, headAndTail, isCommandResult, toolLine, type ToolCallView } from './tools.js';

/** What the renderer reads beyond the stream events: the full tool call and result, the safe zone. */
export interface RenderLookup {
  toolCall(callId: string): Promise<ToolCallView | undefined>;
  /** The whole result of a tool call (the stream event holds only its start). */
  toolResult(callId: string): Promise<string | undefined>;
  /** The conversation's safe zone in tokens (the context budget of one request). */
  safeZone(): Promise<number | undefined>;
}

const NO_LOOKUP: RenderLookup = {
  toolCall: async () => undefined,
  toolResult: async () => undefined,
  safeZone: async () => undefined,
};

export interface TerminalOptions {
  conversationId: string;
  stream: TerminalStream;
  env?: NodeJS.ProcessEnv;
  lookup?: RenderLookup;
  now?: () => number;
}

const STATUS_MARK: Record<string, 'green' | 'yellow' | 'red'> = { completed: 'green', cancelled: 'yellow', budget_exhausted: 'yellow' };

export class TerminalRenderer {
  readonly rich: boolean;
  private readonly style: Style;
  private readonly spinner: Spinner;
  private readonly lookup: RenderLookup;
  private readonly now: () => number;
  private readonly width: number;

  /** The cursor is at the start of a line. */
  private atLineStart = true;
  /** Whitespace that ended the last prose written, held back until more prose follows. */
  private heldSpace = '';
  private parser?: XmlToolCallParser;
  private messageKey = '';
  private proseInMessage = false;

  private turnStartedAt = 0;
  private readonly toolStartedAt = new Map<string, number>();
  private lastPromptTokens?: number;
  private usageBefore: Usage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
  private costBefore = 0;
  /** Setup's output was already shown line by line: a failure does not repeat its tail. */
  private setupShown = false;

  constructor(private readonly opts: TerminalOptions) {
    this.rich = isRichTerminal(opts.stream, opts.env);
    this.style = styleFor(this.rich);
    this.now = opts.now ?? Date.now;
    // A terminal that reports no width (a bare pseudo-terminal) cannot redraw a spinner line.
    this.spinner = this.rich && (opts.stream.columns ?? 0) > 0 ? new OraSpinner(opts.stream, this.style, this.now) : NO_SPINNER;
    this.lookup = opts.lookup ?? NO_LOOKUP;
    this.width = Math.max(40, (opts.stream.columns || 160) - 2);
  }

  /** Resolves when the spinner can draw; printing before that just shows no spinner. */
  ready(): Promise<void> {
    return this.spinner.ready();
  }

  async print(_offset: number, e: StreamEvent): Promise<void> {
    const s = this.style;
    switch (e.type) {
      case 'conversation_started':
        return this.block(`${s.bold('●')} ${s.bold(this.clip(firstLine(e.task)))} ${s.dim(`· ${e.model}`)}`);
      case 'turn_started':
        this.turnStartedAt = this.now();
        this.endMessage();
        this.block(s.dim(`── turn ${e.turn} ──`));
        return this.busy('waiting for the model');
      case 'delta':
        return this.delta(e);
      case 'reasoning':
        if (!this.proseInMessage) this.busy('thinking');
        return;
      case 'reset':
        this.endMessage();
        this.block(s.yellow(`↻ ${e.reason}`));
        return this.busy('waiting for the model');
      case 'continuation':
        this.block(
          s.dim(
            e.resumedAfter === undefined
              ? `… the answer was cut off for length; continuing (segment ${e.segment + 1})`
              : `… attempt ${e.resumedAfter} ended mid-answer; continuing from the text above (segment ${e.segment + 1})`,
          ),
        );
        return this.busy('waiting for the model');
      case 'message_completed':
        this.endMessage();
        this.lastPromptTokens = e.usage.promptTokens || this.lastPromptTokens;
        return;
      case 'tool_started':
        return this.toolStarted(e);
      case 'tool_completed':
        return this.toolCompleted(e);
      case 'approval_requested': {
        const call = await this.lookup.toolCall(e.callId);
        const id = this.opts.conversationId;
        this.block(
          [
            s.yellow(`⏸ waiting for your approval: ${s.bold(call ? this.clip(toolLine(call)) : e.name)}`),
            s.yellow(`  ${e.reason}`),
            `  approve: ${s.bold(`agentrun approve ${id} --call ${e.callId}`)}`,
            `  deny:    ${s.bold(`agentrun deny ${id} --call ${e.callId} --reason "…"`)}`,
          ].join('\n'),
        );
        return;
      }
      case 'budget_paused':
        this.block(
          [
            s.yellow(`⏸ awaiting budget: ${e.reason}`),
            `  raise: ${s.bold(`agentrun budget raise ${this.opts.conversationId} --add-cost USD`)} (or --max-tokens, --max-turns, --max-time)`,
          ].join('\n'),
        );
        return;
      case 'budget_raised':
        this.block(s.dim(`budget raised${e.by ? ` by ${e.by}` : ''}: ${JSON.stringify(e.limits)}`));
        return;
      case 'question_asked':
        this.block([s.yellow(`? ${e.question}`), `  answer: ${s.bold(`agentrun answer ${this.opts.conversationId} "…"`)}`].join('\n'));
        return;
      case 'window':
        this.block(
          [
            s.yellow(`⇣ context pruned at turn ${e.turn}: ${formatInt(e.tokensBefore)} → ${formatInt(e.tokensAfter)} tokens`),
            ...e.actions.map((a) => s.dim(`  ${this.clip(a)}`)),
          ].join('\n'),
        );
        return this.busy('waiting for the model');
      case 'turn_completed':
        return this.footer(e);
      case 'checkpoint':
        return this.block(s.dim(`  checkpoint ${e.commit.slice(0, 10)}: ${this.clip(e.files.join(', '))}`));
      case 'workspace_restored':
        return this.block(
          e.drained
            ? s.dim(
                `⇄ workspace moved from drained host ${e.from ?? '?'} to ${e.host} with its checkpoint after turn ${e.turn} (every finished call's changes kept)`,
              )
            : s.yellow(`⇄ workspace restored on host ${e.host} to its checkpoint after turn ${e.turn}: later changes went with the lost host`),
        );
      case 'offhost_skipped':
        return this.block(s.yellow(`⚠ no off-host checkpoint from turn ${e.turn}: ${e.reason}`));
      case 'rollback':
        return this.block(s.yellow(`↺ workspace rolled back to turn ${e.toTurn} (${e.restored.length} restored, ${e.removed.length} removed)`));
      case 'repository_extensions':
        return this.block(e.enabled ? s.dim(`  ${e.notice}`) : s.yellow(`⚠ ${e.notice}`));
      case 'setup_started':
        this.block(
          s.dim(
            `── setup${e.afterMove ? ` again on host ${e.host ?? '?'} (the workspace moved there)` : ''}${e.attempt > 1 ? ` (attempt ${e.attempt}: the worker running it was lost)` : ''} ──`,
          ),
        );
        return this.busy('setting up the workspace');
      case 'setup_output':
        this.spinner.stop();
        if (e.text.trim()) this.setupShown = true;
        return this.block(s.dim(this.clipLines(e.text.trimEnd())));
      case 'setup_finished':
        return this.block(
          e.ok
            ? s.green(`✓ setup ${e.cached ? `restored from the cache (${(e.dirs ?? []).join(', ')})` : 'done'} in ${(e.ms / 1000).toFixed(1)} s`)
            : [s.red(`✗ ${e.reason ?? 'setup failed'}`), ...(e.tail && !this.setupShown ? [s.dim(this.indented(e.tail))] : [])].join('\n'),
        );
      case 'verify':
        return this.block(
          e.passed
            ? s.green(`✓ verify${e.baseline ? ' (before turn 1)' : ''}: ${e.command} passed in ${(e.ms / 1000).toFixed(1)} s`)
            : [
                s.yellow(`✗ verify${e.baseline ? ' (before turn 1)' : ` run ${e.attempt}`}: ${e.command} failed (exit ${e.exitCode ?? 'none'})`),
                s.dim(this.indented(e.tail.trimEnd().split('\n').slice(-10).join('\n'))),
              ].join('\n'),
        );
      case 'finished': {
        const colour = s[STATUS_MARK[e.status] ?? 'red'];
        // What the model handed back (attempt_completion's text), else the summary of a run that stopped early.
        const text = e.result ?? e.summary;
        const body = text ? `\n${text.replace(/^/gm, '  ')}` : '';
        return this.block(`${colour(`■ ${e.status}`)}: ${e.reason}${body && e.result === undefined ? s.dim(body) : body}`);
      }
    }
  }

  /** Each line clipped to the terminal's width (setup logs). */
  private clipLines(text: string): string {
    return text
      .split('\n')
      .map((l) => this.clip(l))
      .join('\n');
  }

  /** A log tail indented by two, its long lines wrapped at the terminal's width under the same indent. */
  private indented(text: string): string {
    return wrapIndented(text, this.width, '  ');
  }

  /** A line of the caller's own (e.g. the run's result), after whatever was streaming. */
  line(text: string): void {
    this.block(text);
  }

  close(): void {
    this.spinner.stop();
    this.endLine();
  }

  // ── prose ──────────────────────────────────────────────────────────────────────────────────

  private delta(e: Extract<StreamEvent, { type: 'delta' }>): void {
    const key = `${e.seq}/${e.attempt}`;
    if (key !== this.messageKey || !this.parser) {
      this.endMessage();
      this.messageKey = key;
      this.parser = new XmlToolCallParser(TOOL_NAMES);
    }
    for (const pe of this.parser.push(e.text)) if (pe.type === 'text') this.prose(pe.text);
    // While the model writes a tool block there is no prose to show: say what it is writing.
    const open = this.parser.openToolName;
    if (open) this.busy(`writing ${open}`);
  }

  private prose(text: string): void {
    const t = this.proseInMessage ? text : text.trimStart();
    if (!t) return;
    const trailing = /\s*$/.exec(t)!;
    const body = t.slice(0, trailing.index);
    if (body) {
      this.spinner.stop();
      this.opts.stream.write(this.heldSpace + body);
      this.heldSpace = '';
      this.atLineStart = false;
      this.proseInMessage = true;
    }
    this.heldSpace += trailing[0];
  }

  private endMessage(): void {
    if (this.parser) for (const pe of this.parser.end()) if (pe.type === 'text') this.prose(pe.text);
    this.parser = undefined;
    this.messageKey = '';
    this.proseInMessage = false;
    this.heldSpace = '';
  }

  // ── tools ──────────────────────────────────────────────────────────────────────────────────

  private async toolStarted(e: Extract<StreamEvent, { type: 'tool_started' }>): Promise<void> {
    this.toolStartedAt.set(e.callId, this.now());
    const call = await this.lookup.toolCall(e.callId);
    const s = this.style;
    const [name, ...rest] = (call ? toolLine(call) : e.preview).split(' ');
    const lines = [`${s.cyan('▶')} ${s.bold(name!)} ${this.clip(rest.join(' '))}`.trimEnd()];
    const diff = call && editDiff(call, s);
    if (diff) lines.push(...diff.map((l) => `  ${l}`));
    this.block(lines.join('\n'));
    this.busy(`running ${name}`);
  }

  private async toolCompleted(e: Extract<StreamEvent, { type: 'tool_completed' }>): Promise<void> {
    const s = this.style;
    const started = this.toolStartedAt.get(e.callId);
    this.toolStartedAt.delete(e.callId);
    const took = started === undefined ? '' : ` ${s.dim(formatElapsed(this.now() - started))}`;
    const mark = e.ok ? s.green('✓') : s.red('✗');
    const result = (await this.lookup.toolResult(e.callId)) ?? e.preview;
    if (isCommandResult(e.name)) {
      const outcome = commandOutcome(result);
      const status = outcome.exitCode === 0 ? s.green(outcome.status) : s.red(outcome.status);
      this.block([`  ${mark} ${status}${took}`, ...headAndTail(outcome.lines, s).map((l) => `  ${s.dim('│')} ${this.clip(l)}`)].join('\n'));
      return;
    }
    const lines = result.replace(/\n$/, '').split('\n');
    const shown = e.ok ? lines.slice(0, 1).map((l) => s.dim(this.clip(l))) : lines.slice(0, 4).map((l) => s.red(this.clip(l)));
    this.block([`  ${mark} ${shown[0] ?? ''}${took}`, ...shown.slice(1).map((l) => `    ${l}`)].join('\n'));
  }

  // ── the turn's footer ──────────────────────────────────────────────────────────────────────

  private async footer(e: Extract<StreamEvent, { type: 'turn_completed' }>): Promise<void> {
    const s = this.style;
    const u = e.usage;
    const turnIn = u.promptTokens - this.usageBefore.promptTokens;
    const turnCached = (u.cachedTokens ?? 0) - (this.usageBefore.cachedTokens ?? 0);
    const turnOut = u.completionTokens - this.usageBefore.completionTokens;
    const turnCost = e.costUsd - this.costBefore;
    this.usageBefore = u;
    this.costBefore = e.costUsd;
    const cachedPart = turnCached > 0 ? `, ${formatCached({ promptTokens: turnIn, cachedTokens: turnCached })}` : '';
    const parts = [`turn ${e.turn}`, `${formatInt(turnIn + turnOut)} tokens (${formatInt(turnIn)} in${cachedPart}, ${formatInt(turnOut)} out)`];
    if (this.lastPromptTokens !== undefined) {
      const zone = await this.lookup.safeZone();
      parts.push(
        zone
          ? `context ${formatInt(this.lastPromptTokens)} = ${Math.round((100 * this.lastPromptTokens) / zone)}% of the safe zone (${formatInt(zone)})`
          : `context ${formatInt(this.lastPromptTokens)}`,
      );
    }
    parts.push(`$${turnCost.toFixed(4)} (total $${e.costUsd.toFixed(4)})`);
    if (this.turnStartedAt) parts.push(formatElapsed(this.now() - this.turnStartedAt));
    this.block(s.dim(`  ${parts.join(' · ')}`));
  }

  // ── output ─────────────────────────────────────────────────────────────────────────────────

  /** Start (or relabel) the spinner, on a line of its own. */
  private busy(label: string): void {
    if (this.spinner === NO_SPINNER) return;
    this.endLine();
    this.spinner.start(label);
  }

  private endLine(): void {
    this.heldSpace = '';
    if (!this.atLineStart) {
      this.opts.stream.write('\n');
      this.atLineStart = true;
    }
  }

  /** Whole lines of the renderer's own, after any streaming prose and without the spinner. */
  private block(text: string): void {
    this.spinner.stop();
    this.endLine();
    this.opts.stream.write(text + '\n');
  }

  private clip(line: string): string {
    return line.length > this.width ? line.slice(0, this.width - 1) + '…' : line;
  }
}

function firstLine(s: string): string {
  return s.split('\n', 1)[0]!.trim();
}
