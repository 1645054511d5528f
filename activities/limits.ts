// Per-process limit on model calls streaming at once (AGENTRUN_MAX_MODEL_CALLS, default 32),
// so a worker with many conversations does not open more provider streams than its rate limit
// allows. Waiting callers heartbeat, so a long queue is not mistaken for a dead worker.
export class Slots {
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(readonly limit: number) {}

  async acquire(onWait?: () => void): Promise<() => void> {
    while (this.active >= this.limit) {
      const timer = onWait ? setInterval(onWait, 1000) : undefined;
      await new Promise<void>((resolve) => this.waiting.push(resolve));
      clearInterval(timer);
    }
    this.active++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.active--;
      this.waiting.shift()?.();
    };
  }
}

function limitFromEnv(): number {
  const n = Number(process.env.AGENTRUN_MAX_MODEL_CALLS ?? 32);
  return Number.isInteger(n) && n > 0 ? n : 32;
}

export const modelCallSlots = new Slots(limitFromEnv());
