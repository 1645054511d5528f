// A model step its provider pool holds (paused by an operator, full, refused) waits on a timer and
// asks again. `agentrun pool resume` signals the conversations waiting on the pool, so they ask at
// once instead of sitting out the timer. The wait is a condition with a timeout: the same timer
// command as the plain sleep it replaces, so histories recorded before replay unchanged.
import { condition, defineSignal, setHandler } from '@temporalio/workflow';

/** Sent by `agentrun pool resume` to the conversations waiting for a provider (its payload: the pool). */
export const providerPoolResumedSignal = defineSignal<[{ pool: string }]>('providerPoolResumed');

export class ProviderWake {
  private resumes = 0;

  register(): void {
    setHandler(providerPoolResumedSignal, () => {
      this.resumes += 1;
    });
  }

  /** Wait `ms`, or less when a pool is resumed meanwhile (the step then asks its pool again). */
  async sleep(ms: number): Promise<void> {
    const mark = this.resumes;
    await condition(() => this.resumes > mark, ms);
  }
}
