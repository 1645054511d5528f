// Loop detection as in Gemini CLI's loopDetectionService: the same tool call (name + arguments)
// repeated N times in a row, or a cycle of up to 5 calls repeated N times (A,B,A,B,…); and
// "chanting": the same 50-character chunk of output 10 times, close together, outside code
// blocks. Pure JS with serializable state, so it can live in workflow code or be carried through
// continue-as-new.
import { stableStringify } from '../canonical-json.js';

export interface LoopOptions {
  /** Identical calls (or cycles) in a row that count as a loop (Gemini CLI: 5). */
  toolCallThreshold: number;
  /** Characters per content chunk (Gemini CLI: 50). */
  contentChunkSize?: number;
  /** Occurrences of one chunk that count as a loop (Gemini CLI: 10). */
  contentThreshold?: number;
  /** Content history kept, in characters (Gemini CLI: 5,000). */
  contentHistoryChars?: number;
}

export interface LoopState {
  v: 1;
  /** Hashes of the recent tool calls, oldest first. */
  calls: string[];
  /** Recent output outside code blocks (at most contentHistoryChars). */
  history: string;
  inCodeBlock: boolean;
  /** Inside this tool parameter (`content`, `diff`), or ''. */
  inArg?: string;
  /** A marker cut off at the end of the last delta. */
  pending?: string;
}

/** Longest cycle of calls recognised. */
const MAX_CYCLE = 5;
const DEFAULT_CHUNK = 50;
const DEFAULT_CONTENT_THRESHOLD = 10;
const DEFAULT_HISTORY = 5_000;
/** Code fences and the tool parameters that carry file contents. */
const MARKERS = /```|<\/?(?:content|diff)>/g;

/** 64-bit (two independent 32-bit FNV-1a lanes) hex digest: compact state, negligible collisions. */
function digest(text: string): string {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
    b ^= b >>> 15;
  }
  return (a >>> 0).toString(16).padStart(8, '0') + (b >>> 0).toString(16).padStart(8, '0');
}

export class LoopDetector {
  private readonly threshold: number;
  private readonly chunk: number;
  private readonly contentThreshold: number;
  private readonly historyChars: number;
  private calls: string[] = [];
  private history = '';
  private inCodeBlock = false;
  private inArg = '';
  private pending = '';
  /** Start positions (in `history`) of each chunk seen. Rebuilt from `history`, never serialized. */
  private chunks = new Map<string, number[]>();
  private scanned = 0;

  constructor(opts: LoopOptions) {
    if (!Number.isInteger(opts.toolCallThreshold) || opts.toolCallThreshold < 2) {
      throw new Error(`loop threshold must be an integer >= 2, got ${opts.toolCallThreshold}`);
    }
    this.threshold = opts.toolCallThreshold;
    this.chunk = opts.contentChunkSize ?? DEFAULT_CHUNK;
    this.contentThreshold = opts.contentThreshold ?? DEFAULT_CONTENT_THRESHOLD;
    this.historyChars = Math.max(opts.contentHistoryChars ?? DEFAULT_HISTORY, this.chunk * (this.contentThreshold + 1));
  }

  toJSON(): LoopState {
    return { v: 1, calls: [...this.calls], history: this.history, inCodeBlock: this.inCodeBlock, inArg: this.inArg, pending: this.pending };
  }

  static from(state: LoopState, opts: LoopOptions): LoopDetector {
    const d = new LoopDetector(opts);
    d.calls = state.calls.slice(-d.maxCalls());
    d.inCodeBlock = state.inCodeBlock;
    d.inArg = state.inArg ?? '';
    d.pending = state.pending ?? '';
    // Re-scanning the (≤ 5,000-char) history rebuilds the chunk index exactly, without ever
    // reporting a loop that was already reported.
    d.history = state.history.slice(-d.historyChars);
    d.scan(false);
    return d;
  }

  private maxCalls(): number {
    return MAX_CYCLE * this.threshold;
  }

  /** Record a tool call; true when it completes a loop (same call, or same cycle, N times in a row). */
  observeToolCall(name: string, args: unknown): boolean {
    this.calls.push(digest(`${name}:${stableStringify(args)}`));
    if (this.calls.length > this.maxCalls()) this.calls.splice(0, this.calls.length - this.maxCalls());
    const c = this.calls;
    for (let k = 1; k <= MAX_CYCLE; k++) {
      const span = k * this.threshold;
      if (c.length < span) break;
      let periodic = true;
      for (let i = c.length - span + k; i < c.length && periodic; i++) periodic = c[i] === c[i - k];
      if (periodic) return true;
    }
    return false;
  }

  /**
   * Record streamed or final output text; true when one chunk repeats like a chant. Code blocks
   * and file contents/diffs in tool arguments legitimately repeat lines (tables, test data), so
   * they are skipped, as Gemini CLI skips code blocks. Works on deltas: a marker split between
   * two calls is held back until it is complete.
   */
  observeContent(text: string): boolean {
    let found = false;
    let input = this.pending + text;
    this.pending = '';
    const tail = /(?:<\/?[a-z_]{0,8}|(?<!`)`{1,2})$/.exec(input);
    if (tail) {
      this.pending = tail[0];
      input = input.slice(0, tail.index);
    }
    let last = 0;
    const feed = (part: string) => {
      if (!part || this.inCodeBlock || this.inArg) return;
      this.history += part;
      found = this.scan(true) || found;
    };
    MARKERS.lastIndex = 0;
    for (let m = MARKERS.exec(input); m; m = MARKERS.exec(input)) {
      feed(input.slice(last, m.index));
      last = m.index + m[0].length;
      const marker = m[0];
      if (marker === '```') {
        if (this.inArg) continue;
        this.inCodeBlock = !this.inCodeBlock;
      } else if (marker.startsWith('</')) {
        if (this.inArg && marker === `</${this.inArg}>`) this.inArg = '';
        else continue;
      } else {
        if (this.inCodeBlock || this.inArg) continue;
        this.inArg = marker.slice(1, -1);
      }
      // Text on the two sides of a block is not one continuous output.
      this.resetContent();
    }
    feed(input.slice(last));
    return found;
  }

  /** Forget the output (a new turn, a user message); tool-call history stays. */
  resetContent(): void {
    this.history = '';
    this.chunks.clear();
    this.scanned = 0;
  }

  /** Forget everything (after the model was nudged, the count starts again). */
  reset(): void {
    this.calls = [];
    this.inCodeBlock = false;
    this.inArg = '';
    this.pending = '';
    this.resetContent();
  }

  private scan(report: boolean): boolean {
    // Trimmed in steps (at 1.5× the limit) so streaming small deltas stays linear.
    if (this.history.length > this.historyChars * 1.5) {
      const cut = this.history.length - this.historyChars;
      this.history = this.history.slice(cut);
      this.scanned = Math.max(0, this.scanned - cut);
      for (const [key, positions] of this.chunks) {
        const kept = positions.map((p) => p - cut).filter((p) => p >= 0);
        if (kept.length) this.chunks.set(key, kept);
        else this.chunks.delete(key);
      }
    }
    let found = false;
    for (; this.scanned + this.chunk <= this.history.length; this.scanned++) {
      const key = this.history.slice(this.scanned, this.scanned + this.chunk);
      let positions = this.chunks.get(key);
      if (!positions) {
        positions = [];
        this.chunks.set(key, positions);
      }
      positions.push(this.scanned);
      if (positions.length < this.contentThreshold) continue;
      const recent = positions.slice(-this.contentThreshold);
      const avgDistance = (recent[recent.length - 1]! - recent[0]!) / (this.contentThreshold - 1);
      // Close together means chanting; the same sentence twice in a long text does not count.
      if (avgDistance <= this.chunk * 1.5 && report) found = true;
    }
    return found;
  }
}
