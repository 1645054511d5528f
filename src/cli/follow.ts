// Follow a conversation's live stream from an offset: text as it arrives, tool calls,
// approvals, questions and the end. Resumable: every JSON line carries its offset.
import { createPrinter, storeLookup, type TerminalStream } from './render/index.js';
import type { Session } from './session.js';
import type { StreamEvent } from '../types.js';
import { watchEvents, type WatchEnd } from '../client/watch.js';

export interface FollowOptions {
  from?: number;
  json?: boolean;
  /** Return when the conversation waits for a person (headless `run`). */
  stopWhenWaiting?: boolean;
  /** Where the conversation goes (default stdout); a TTY gets colours and a spinner. */
  stream?: TerminalStream;
  /** Plain output through a function (no TTY): for callers that collect the text. */
  write?: (s: string) => void;
}

export type FollowOutcome = WatchEnd;

export async function follow(session: Session, conversationId: string, opts: FollowOptions = {}): Promise<FollowOutcome> {
  const stream: TerminalStream = opts.write ? { write: opts.write } : (opts.stream ?? process.stdout);
  const printer = createPrinter({ conversationId, json: opts.json, stream, lookup: storeLookup(session.store, conversationId) });
  await printer.ready();
  let told = false;
  const events = watchEvents(session, conversationId, {
    from: opts.from,
    stopWhenWaiting: opts.stopWhenWaiting,
    // Said once, on stderr (stdout may be a --json stream): the conversation stalls until PostgreSQL is back, and so does this.
    onStoreOutage: (err) => {
      if (told) return;
      told = true;
      process.stderr.write(`agentrun: PostgreSQL is unreachable (${err.message}); following again when it is back (Ctrl-C detaches)\n`);
    },
  });
  try {
    for (;;) {
      const next = await events.next();
      if (next.done) return next.value;
      const { offset, conversationId: _id, ...event } = next.value;
      await printer.print(offset, event as StreamEvent);
    }
  } finally {
    printer.close();
    await events.return(undefined as never);
  }
}
