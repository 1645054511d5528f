// The workspace's read/write gate for the `session` workflow: calls that change the workspace
// (writes, commands, rollbacks, verify, writing sub-agents) hold it alone and in the order they
// asked; consecutive read-only calls share it, so the reads of one answer really overlap.
// Deterministic: promises only, no timers, no Node APIs.

/** One run of readers that hold the gate together. */
interface ReadBatch {
  /** Members that joined and have not finished. */
  running: number;
  /** Resolves when every member finished: what whoever queued after the batch waits for. */
  release: () => void;
  /** Cleared once released: a reader that comes later starts a batch of its own. */
  open: boolean;
  /** What the batch waits for before its members run (everything queued before it). */
  start: Promise<void>;
}

export class WorkspaceGate {
  private tail: Promise<void> = Promise.resolve();
  /** The last thing queued, when it is a batch of readers still open to more. */
  private batch?: ReadBatch;

  /**
   * `fn` alone: after everything queued before it, before everything queued after. With only
   * exclusive callers this is exactly a FIFO mutex (the same chain of promises), so histories made
   * before shared reads replay unchanged.
   */
  async exclusive<T>(fn: () => Promise<T>): Promise<T> {
    this.batch = undefined;
    const previous = this.tail;
    let release!: () => void;
    this.tail = new Promise<void>((r) => (release = r));
    await previous;
    try {
      return await fn();
    } finally {
      release();
    }
  }

  /**
   * `fn` beside the other readers queued right before it (no writer between them); a writer that
   * asked earlier goes first, one that asks later waits for all of them.
   */
  async shared<T>(fn: () => Promise<T>): Promise<T> {
    let batch = this.batch;
    if (!batch?.open) {
      let release!: () => void;
      const done = new Promise<void>((r) => (release = r));
      batch = { running: 0, release, open: true, start: this.tail };
      this.tail = done;
      this.batch = batch;
    }
    const joined = batch;
    joined.running++;
    await joined.start;
    try {
      return await fn();
    } finally {
      if (--joined.running === 0) {
        joined.open = false;
        if (this.batch === joined) this.batch = undefined;
        joined.release();
      }
    }
  }
}
