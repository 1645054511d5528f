// `inspect`'s fleet lines: each move of the workspace, and under it what became of every call the move cut off.
import { describe, expect, it } from 'vitest';
import { fleetLines } from '../../src/cli/render/fleet.js';

describe('fleetLines', () => {
  it('lists each cut-off call under its move, with what became of it', () => {
    const text = fleetLines({
      failovers: [
        {
          fromHost: 'A',
          toHost: 'B',
          restoredTurn: 5,
          atTurn: 6,
          reason: 'its heartbeats stopped',
          calls: [
            { callId: 'c6', tool: 'write_to_file', target: 'f6.txt', recovery: 'reapplied' },
            { callId: 'c7', tool: 'execute_command', target: 'echo x >> log', recovery: 'interrupted' },
          ],
        },
        { fromHost: 'B', toHost: 'A', restoredTurn: 8, atTurn: 9, reason: 'it is being drained', drained: true },
      ],
    });
    expect(text.split('\n')).toEqual([
      '  moved at turn 6: A → B, restored to turn 5 (its heartbeats stopped)',
      '    write_to_file f6.txt: made again from the transcript (call c6)',
      '    execute_command echo x >> log: not run again (may not run twice): its change is lost (call c7)',
      "  moved at turn 9: B → A after a graceful drain, with the checkpoint of turn 8 (every finished call's changes kept)",
      '',
    ]);
  });
});
