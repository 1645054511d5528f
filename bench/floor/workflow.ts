// The smallest conversation Temporal can run: per turn one "model" activity (it waits the
// model's latency) and one no-op "tool" activity, nothing else. bench/temporal-floor.ts runs it
// to measure what Temporal alone costs per turn on this machine.
import { proxyActivities } from '@temporalio/workflow';

interface FloorActivities {
  model(latencyMs: number): Promise<string>;
  tool(call: string): Promise<string>;
}

const act = proxyActivities<FloorActivities>({ startToCloseTimeout: '1m', retry: { maximumAttempts: 3 } });

/** Returns when each turn began (workflow time, ms), and when the last one ended. */
export async function floorConversation(turns: number, latencyMs: number): Promise<number[]> {
  const at = [Date.now()];
  for (let t = 0; t < turns; t++) {
    const call = await act.model(latencyMs);
    await act.tool(call);
    at.push(Date.now());
  }
  return at;
}
