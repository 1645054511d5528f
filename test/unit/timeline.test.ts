// The inspect timeline names what each step did, from the summary the workflow gave its activity.
import { describe, expect, it } from 'vitest';
import { timelineOf } from '../../src/client/inspection.js';

const json = (v: unknown) => ({ metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from(JSON.stringify(v)) });

describe('the inspect timeline', () => {
  it('names the tool of each step', () => {
    const { activities } = timelineOf(
      {
        events: [
          {
            eventId: 5 as never,
            userMetadata: { summary: json('turn 2 · execute_command npm test') },
            activityTaskScheduledEventAttributes: {
              activityId: '7',
              activityType: { name: 'toolCall' },
              input: { payloads: [json({ turn: 2, callId: 'c1' })] },
            },
          },
          { eventId: 6 as never, activityTaskScheduledEventAttributes: { activityId: '8', activityType: { name: 'modelTurn' } } },
        ],
      },
      1,
    );
    expect(activities).toMatchObject([{ type: 'toolCall', turn: 2, summary: 'turn 2 · execute_command npm test' }, { type: 'modelTurn' }]);
    expect(activities[1]).not.toHaveProperty('summary');
  });
});
