// The repository-job part of `inspect`: host, moves between hosts, fork origin, result branch.
import { plural } from '../../types.js';
import type { ConversationState } from '../../../workflows/api.js';

export function fleetLines(state: Partial<ConversationState> | undefined): string {
  if (!state) return '';
  const lines: string[] = [];
  if (state.host) lines.push(`  host: ${state.host.hostId} (${state.host.workspace})${state.host.base ? `, base ${state.host.base.slice(0, 12)}` : ''}`);
  for (const f of state.failovers ?? [])
    lines.push(
      f.drained
        ? `  moved at turn ${f.atTurn}: ${f.fromHost} → ${f.toHost} after a graceful drain, with the checkpoint of turn ${f.restoredTurn} (every finished call's changes kept)`
        : `  moved at turn ${f.atTurn}: ${f.fromHost} → ${f.toHost}, restored to turn ${f.restoredTurn} (${f.reason})`,
    );
  if (state.forkedFrom) lines.push(`  forked from ${state.forkedFrom.parentId} at turn ${state.forkedFrom.atTurn}`);
  const b = state.branch;
  if (b)
    lines.push(
      `  branch: ${b.branch} at ${b.commit.slice(0, 12)}${b.pushed ? ' (pushed)' : ' (not pushed)'}, ${plural(b.diffstat.files, 'file')} +${b.diffstat.insertions} -${b.diffstat.deletions}`,
    );
  return lines.length ? lines.join('\n') + '\n' : '';
}
