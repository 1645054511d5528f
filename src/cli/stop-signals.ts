// Ctrl-C, SIGTERM (timeout, systemd, Kubernetes, CI) and SIGHUP (a closed terminal or SSH session)
// stop a command the same way: what it started (a worker, embedded Temporal and PostgreSQL, a page)
// is stopped, a command that follows something durable says how to follow it again, and the process
// exits 128 + the signal's number, as a shell reports a process a signal ended.
import { constants } from 'node:os';

const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
export type StopSignal = (typeof STOP_SIGNALS)[number];

/** 130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP. */
export const exitCodeForSignal = (signal: StopSignal): number => 128 + constants.signals[signal];

let received: StopSignal | undefined;
let announceStop: (signal: StopSignal) => void = () => undefined;
const stopped = new Promise<StopSignal>((resolve) => (announceStop = resolve));
/** Commands waiting on the signal themselves (they detach, stop what they run, and return). */
let claims = 0;
/** What a command that does not wait on the signal has started: stopped before the process exits. */
const cleanups = new Set<() => Promise<void>>();

function onSignal(signal: StopSignal): void {
  if (received) {
    // Dying now would leave the servers this command started running, orphaned.
    process.stderr.write(`agentrun: ${signal}: still stopping what this command started\n`);
    return;
  }
  received = signal;
  announceStop(signal);
  if (claims === 0) void stopAndExit(signal);
}

async function stopAndExit(signal: StopSignal): Promise<void> {
  await Promise.allSettled([...cleanups].map((c) => c()));
  process.exit(exitCodeForSignal(signal));
}

/** Handle the three signals for the rest of the process (every command but `worker`, which drains on SIGTERM). */
export function installStopSignals(): void {
  for (const signal of STOP_SIGNALS) process.on(signal, () => onSignal(signal));
}

/** The signal that stopped this command, if one did. */
export const stopSignalReceived = (): StopSignal | undefined => received;

/**
 * For a command that waits on the signal itself: `signal` resolves with the first stop signal, and
 * until `release()` the process is not ended for it (the command stops what it started and returns).
 */
export function whenStopped(): { signal: Promise<StopSignal>; release(): void } {
  claims += 1;
  let released = false;
  return {
    signal: stopped,
    release() {
      if (released) return;
      released = true;
      claims -= 1;
    },
  };
}

/** Stop `cleanup`'s servers before the process exits on a signal nobody waits on; the function forgets it. */
export function stopOnSignal(cleanup: () => Promise<void>): () => void {
  cleanups.add(cleanup);
  return () => void cleanups.delete(cleanup);
}
