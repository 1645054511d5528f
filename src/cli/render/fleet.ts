// The repository-job part of `inspect`: host, moves between hosts, fork origin, result branch.
import { plural } from '../../types.js';
import type { ConversationState, Failover } from '../../../workflows/api.js';

/** What became of a call cut off by a move, as `inspect` says it. */
const RECOVERED: Record<NonNullable<Failover['calls']>[number]['recovery'], string> = {
  reapplied: 'made again from the transcript',
  kept: 'its change was in the restored workspace',
  'ran-again': 'ran again (repeatable)',
  conflict: 'not applied: conflict (the file had changed)',
  interrupted: 'not run again (may not run twice): its change is lost',
  recorded: 'changed nothing; result kept',
  'not-started': 'had not started; ran there',
};

export function fleetLines(state: Partial<ConversationState> | undefined): string {
  if (!state) return '';
  const lines: string[] = [];
  if (state.host) lines.push(`  host: ${state.host.hostId} (${state.host.workspace})${state.host.base ? `, base ${state.host.base.slice(0, 12)}` : ''}`);
  for (const f of state.failovers ?? [])
    lines.push(
      f.drained
        ? `  moved at turn ${f.atTurn}: ${f.fromHost} → ${f.toHost} after a graceful drain, with the checkpoint of turn ${f.restoredTurn} (every finished call's changes kept)`
        : `  moved at turn ${f.atTurn}: ${f.fromHost} → ${f.toHost}, restored to turn ${f.restoredTurn} (${f.reason})`,
      ...(f.calls ?? []).map((c) => `    ${c.tool}${c.target ? ` ${c.target}` : ''}: ${RECOVERED[c.recovery]} (call ${c.callId})`),
    );
  if (state.forkedFrom) lines.push(`  forked from ${state.forkedFrom.parentId} at turn ${state.forkedFrom.atTurn}`);
  const b = state.branch;
  if (b)
    lines.push(
      `  branch: ${b.branch} at ${b.commit.slice(0, 12)}${b.pushed ? ' (pushed)' : ' (not pushed)'}, ${plural(b.diffstat.files, 'file')} +${b.diffstat.insertions} -${b.diffstat.deletions}`,
    );
  return lines.length ? lines.join('\n') + '\n' : '';
}
