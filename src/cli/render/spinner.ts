// The spinner shown while the model or a tool is busy: ora, with the elapsed time from the
// renderer's clock. Only on a rich terminal; elsewhere the renderer has no spinner at all.
import type { Ora } from 'ora';
import type { Style, TerminalStream } from './style.js';

export interface Spinner {
  /** Resolves once the spinner can draw (its library is loaded only for a rich terminal). */
  ready(): Promise<void>;
  start(label: string): void;
  stop(): void;
  readonly active: boolean;
}

export function formatElapsed(ms: number): string {
  if (ms < 10_000) return `${(Math.max(0, ms) / 1000).toFixed(1)}s`;
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
}

export class OraSpinner implements Spinner {
  private spinner?: Ora;
  private since = 0;
  private label = '';
  private ticker?: NodeJS.Timeout;
  private ora?: typeof import('ora').default;
  private readonly loading: Promise<void>;

  constructor(
    private readonly stream: TerminalStream,
    private readonly style: Style,
    private readonly now: () => number,
  ) {
    // Loaded here, not at import: every CLI command imports the renderer, few draw a spinner.
    this.loading = import('ora').then((m) => void (this.ora = m.default)).catch(() => {}); // no spinner then
  }

  ready(): Promise<void> {
    return this.loading;
  }

  get active(): boolean {
    return this.spinner !== undefined;
  }

  start(label: string): void {
    if (!this.ora) return; // not loaded yet: the first moment goes without a spinner
    if (this.spinner && this.label === label) return;
    this.stop();
    this.label = label;
    this.since = this.now();
    this.spinner = this.ora({
      stream: this.stream as NodeJS.WritableStream,
      text: this.text(),
      color: 'cyan',
      isEnabled: true,
      hideCursor: false,
      discardStdin: false,
    }).start();
    // The elapsed time moves once a second; ora redraws the frame on its own interval.
    this.ticker = setInterval(() => {
      if (this.spinner) this.spinner.text = this.text();
    }, 1000);
    this.ticker.unref();
  }

  stop(): void {
    if (!this.spinner) return;
    clearInterval(this.ticker);
    this.spinner.stop();
    this.spinner = undefined;
  }

  private text(): string {
    return `${this.label} ${this.style.dim(formatElapsed(this.now() - this.since))}`;
  }
}

/** For plain output: nothing moves. */
export const NO_SPINNER: Spinner = { ready: async () => {}, start() {}, stop() {}, active: false };
