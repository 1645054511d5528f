// How `run` and `watch` print a conversation's stream: one JSON object per event with --json
// (unchanged: the machine interface), else the terminal renderer.
import type { StreamEvent } from '../../types.js';
import { TerminalRenderer, type RenderLookup } from './terminal.js';
import type { TerminalStream } from './style.js';

export interface Printer {
  /** Resolves when everything the printer draws with is loaded. */
  ready(): Promise<void>;
  print(offset: number, event: StreamEvent): Promise<void> | void;
  /** A line of the caller's own, after whatever was streaming. */
  line(text: string): void;
  /** Stop the spinner and end the current line. */
  close(): void;
}

class JsonPrinter implements Printer {
  constructor(
    private readonly conversationId: string,
    private readonly write: (s: string) => void,
  ) {}

  async ready(): Promise<void> {}

  print(offset: number, event: StreamEvent): void {
    this.write(JSON.stringify({ offset, conversationId: this.conversationId, ...event }) + '\n');
  }

  line(text: string): void {
    this.write(text + '\n');
  }

  close(): void {}
}

export interface PrinterOptions {
  conversationId: string;
  json?: boolean;
  stream: TerminalStream;
  env?: NodeJS.ProcessEnv;
  lookup?: RenderLookup;
  now?: () => number;
}

export function createPrinter(opts: PrinterOptions): Printer {
  if (opts.json) return new JsonPrinter(opts.conversationId, (s) => void opts.stream.write(s));
  return new TerminalRenderer(opts);
}

export { TerminalRenderer, type RenderLookup } from './terminal.js';
export { storeLookup } from './lookup.js';
export { type TerminalStream } from './style.js';
