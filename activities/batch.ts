// A batch's own steps: pausing the schedule that started it when its brake halts it
// (`schedule create … --pause-on-failure`). Temporal's pauseOnFailure policy alone was not seen to
// pause a schedule for a failed run that was triggered by hand, so the batch pauses it itself, then fails.
import { Context } from '@temporalio/activity';
import { ScheduleNotFoundError } from '@temporalio/client';
import type { BatchActivities } from './types.js';

export function batchActivities(): BatchActivities {
  return {
    /** Safe to run twice: a paused schedule stays paused; one deleted meanwhile is left alone. */
    async pauseSchedule(input: { scheduleId: string; note: string }): Promise<void> {
      try {
        await Context.current().client.schedule.getHandle(input.scheduleId).pause(input.note.slice(0, 1000));
      } catch (err) {
        if (!(err instanceof ScheduleNotFoundError)) throw err;
      }
    },
  };
}
