// What a failed check's output says about the failure. Its end alone can be the last, passing
// package of a workspace run (npm workspaces, a monorepo's test runner), the FAIL block far above:
// the lines that name failures, each with the lines that follow it, come first, then the end.
import { stripAnsi } from './ansi.js';

/** A line that names a failure in the common runners' words (jest, vitest, mocha, pytest, go test, tap, cargo, compilers). */
const NAMES_A_FAILURE =
  /\bFAIL(?:ED|URE|S)?\b|\bERROR\b|\b[Ee]rror(?:\[\w+\])?:|\bfailed\b|\bfailures?\b|[✕✗✖×●]|\bnot ok\b|^Traceback\b|\bpanic:|AssertionError/;
/** Summary lines that use the words without naming a failure (`0 failed`, `no errors`). */
const NAMES_NONE = /\b(?:0|no) (?:failed|failures?|errors?)\b/i;
/** Lines kept after each failure line: a jest block's test name and expectation, a traceback's frames. */
const LINES_AFTER = 8;
/** At most this much of failure lines (the first ones: a run's first failure usually explains the rest). */
const FAILURE_BYTES = 1200;
/** The excerpt with failure lines, whole: the model is shown the last 3,000 characters of a check's output. */
const EXCERPT_CHARS = 3000;
const LINE_CHARS = 400;

/** Fed a check's output as it comes; `text()` is what the model, the result and `inspect` show of it. */
export class FailureExcerpt {
  private partial = '';
  private lineNo = 0;
  /** Characters of the output in complete lines seen so far. */
  private consumed = 0;
  private outputChars = 0;
  private following = 0;
  private lastKept = -1;
  private firstFailureAt: number | undefined;
  private readonly failures: string[] = [];
  private failureBytes = 0;
  private full = false;
  private tail = '';

  constructor(private readonly tailBytes: number) {}

  push(text: string): void {
    this.outputChars += text.length;
    this.tail = (this.tail + text).slice(-this.tailBytes);
    const lines = (this.partial + text).split('\n');
    this.partial = lines.pop()!;
    for (const line of lines) this.line(line);
  }

  private line(raw: string): void {
    const n = this.lineNo++;
    const start = this.consumed;
    this.consumed += raw.length + 1;
    const line = stripAnsi(raw).replace(/\r$/, '');
    if (NAMES_A_FAILURE.test(line) && !NAMES_NONE.test(line)) {
      this.following = LINES_AFTER;
      this.firstFailureAt ??= start;
    } else if (this.following > 0) this.following -= 1;
    else return;
    if (this.full) return;
    const kept = line.length > LINE_CHARS ? `${line.slice(0, LINE_CHARS)}…` : line;
    if (this.failureBytes + kept.length + 1 > FAILURE_BYTES) {
      this.full = true;
      this.failures.push('[… further lines that name failures are left out]');
      return;
    }
    if (this.lastKept >= 0 && n > this.lastKept + 1) this.failures.push('…');
    this.failures.push(kept);
    this.failureBytes += kept.length + 1;
    this.lastKept = n;
  }

  /** The failure lines, then the end of the output; only the end when it holds them all (or none names a failure). */
  text(): string {
    if (this.partial) {
      this.line(this.partial);
      this.partial = '';
    }
    const tail = stripAnsi(this.tail);
    if (this.firstFailureAt === undefined || this.firstFailureAt >= this.outputChars - this.tail.length) return tail;
    const head = `[lines that name failures]\n${this.failures.join('\n')}\n[the end of the output]\n`;
    return head + tail.slice(-Math.max(0, EXCERPT_CHARS - head.length));
  }
}
