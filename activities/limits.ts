// Per-process limit on model calls streaming at once (AGENTRUN_MAX_MODEL_CALLS), for a provider
// whose rate limit counts open streams. Unset, there is none beyond the worker's activity slots:
// a stream is a wait, and a fixed 32 capped a worker at 32 conversations' model steps at once
// (6 turns/s at 5 s latency, with the machine three-quarters idle). Waiting callers heartbeat,
// so a long queue is not mistaken for a dead worker.
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
  const n = Number(process.env.AGENTRUN_MAX_MODEL_CALLS);
  return Number.isInteger(n) && n > 0 ? n : Infinity;
}

export const modelCallSlots = new Slots(limitFromEnv());
