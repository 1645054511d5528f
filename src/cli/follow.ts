// Follow a conversation's live stream from an offset: text as it arrives, tool calls,
// approvals, questions and the end. Resumable: every JSON line carries its offset.
import type { StreamEvent } from '../types.js';
import type { Session } from './session.js';

export interface FollowOptions {
  from?: number;
  json?: boolean;
  /** Return when the conversation waits for a person (headless `run`). */
  stopWhenWaiting?: boolean;
  write?: (s: string) => void;
}

export interface FollowOutcome {
  offset: number;
  finished?: { status: string; reason: string };
  waiting?: boolean;
}

export class EventPrinter {
  private midLine = false;
  constructor(
    private readonly conversationId: string,
    private readonly json: boolean,
    private readonly write: (s: string) => void,
  ) {}

  print(offset: number, event: StreamEvent): void {
    if (this.json) {
      this.write(JSON.stringify({ offset, conversationId: this.conversationId, ...event }) + '\n');
      return;
    }
    if (event.type === 'delta') {
      this.write(event.text);
      this.midLine = !event.text.endsWith('\n');
      return;
    }
    const line = describe(event);
    if (line === undefined) return;
    this.write((this.midLine ? '\n' : '') + line + '\n');
    this.midLine = false;
  }

  line(text: string): void {
    this.write((this.midLine ? '\n' : '') + text + '\n');
    this.midLine = false;
  }
}

function describe(e: StreamEvent): string | undefined {
  switch (e.type) {
    case 'conversation_started':
      return `● started (model ${e.model})`;
    case 'turn_started':
      return `── turn ${e.turn} ──`;
    case 'reasoning':
      return undefined;
    case 'reset':
      return `[attempt ${e.attempt} of this answer replaces the text above]`;
    case 'continuation':
      return `[answer cut off for length: continuing, segment ${e.segment + 1}]`;
    case 'message_completed':
      return undefined;
    case 'tool_started':
      return `▶ ${e.preview}`;
    case 'tool_completed':
      return `${e.ok ? '✓' : '✗'} ${e.name}: ${e.preview.split('\n')[0]!.slice(0, 160)}`;
    case 'approval_requested':
      return `⏸ approval needed for ${e.name} (call ${e.callId}): ${e.reason} — agentrun approve|deny <id>`;
    case 'question_asked':
      return `? ${e.question} — agentrun answer <id> "…"`;
    case 'window':
      return `[context pruned at turn ${e.turn}: ${e.tokensBefore} → ${e.tokensAfter} tokens; ${e.actions.join('; ')}]`;
    case 'turn_completed':
      return `  (turn ${e.turn}: ${e.usage.totalTokens} tokens so far, $${e.costUsd.toFixed(4)})`;
    case 'checkpoint':
      return `  checkpoint ${e.commit.slice(0, 10)}: ${e.files.join(', ')}`;
    case 'rollback':
      return `↺ workspace rolled back to turn ${e.toTurn} (${e.restored.length} restored, ${e.removed.length} removed)`;
    case 'finished':
      return `■ ${e.status}: ${e.reason}${e.summary ? `\n  ${e.summary}` : ''}`;
  }
}

export async function follow(session: Session, conversationId: string, opts: FollowOptions = {}): Promise<FollowOutcome> {
  const write = opts.write ?? ((s: string) => void process.stdout.write(s));
  const printer = new EventPrinter(conversationId, opts.json ?? false, write);
  const handle = session.client.workflow.getHandle(conversationId);
  let offset = opts.from ?? 0;
  let wake: (() => void) | undefined;
  const unsubscribe = await session.store.subscribe(conversationId, () => wake?.());
  let lastCheck = 0;
  try {
    for (;;) {
      const rows = await session.store.readStream(conversationId, offset, 500);
      let sawWaiting = false;
      for (const row of rows) {
        printer.print(row.offset, row.event);
        offset = row.offset;
        if (row.event.type === 'finished') return { offset, finished: { status: row.event.status, reason: row.event.reason } };
        if (row.event.type === 'question_asked' || row.event.type === 'approval_requested') sawWaiting = true;
      }
      if (rows.length === 500) continue;
      if (opts.stopWhenWaiting && sawWaiting) {
        // The event is written just before the workflow starts waiting; give the state a moment.
        for (let i = 0; i < 20; i++) {
          const state = await handle.query('state').catch(() => undefined) as { status?: string } | undefined;
          if (state?.status === 'waiting') return { offset, waiting: true };
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      if (Date.now() - lastCheck > 2000) {
        lastCheck = Date.now();
        const desc = await handle.describe().catch(() => undefined);
        if (desc && desc.status.name !== 'RUNNING') {
          const rest = await session.store.readStream(conversationId, offset, 10_000);
          for (const row of rest) {
            printer.print(row.offset, row.event);
            offset = row.offset;
          }
          return { offset };
        }
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 1000);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
    }
  } finally {
    await unsubscribe();
  }
}
