// The workspace's read/write gate for the `session` workflow: calls that change the workspace
// (writes, commands, rollbacks, verify, writing sub-agents) hold it alone and in the order they
// asked; consecutive read-only calls share it, so the reads of one answer really overlap. It also
// holds turn 0's checkpoint while that is made alongside the first model step: nothing that may
// change the workspace runs before the state a rollback to turn 0 restores exists.
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
  private making?: Promise<void>;

  /**
   * Turn 0's checkpoint while it is being made alongside the first model step; cleared once made,
   * kept when it failed (whoever waits for it next fails with it). Every step that could change the
   * workspace (tool calls that write, control tools, hooks, setup, verify, rollback, a move) awaits
   * it first, and only when it is set: a step with nothing to wait for takes no extra turn of the
   * event loop, so the commands keep the order the recorded histories have.
   */
  get turnZero(): Promise<void> | undefined {
    return this.making;
  }

  /** Turn 0's checkpoint is being made (`made` settles when it is): whoever may change the workspace waits for it. */
  makingTurnZero(made: Promise<void>): void {
    const held: Promise<void> = made.then(() => {
      if (this.making === held) this.making = undefined;
    });
    // A failure surfaces in whichever step waits for it next (the first one after the model step at the latest).
    held.catch(() => undefined);
    this.making = held;
  }

  /** `fn` alone, and after turn 0's checkpoint (a rollback: the state it restores must exist first). */
  exclusiveAfterTurnZero<T>(fn: () => Promise<T>): Promise<T> {
    return this.exclusive(() => (this.making ? this.making.then(fn) : fn()));
  }

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
