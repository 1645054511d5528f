// The live workflow patches: every `patched()` / `deprecatePatch()` id in workflow code, the day its
// release went out, and a recorded history (test/histories/) that takes the patched path. A patch
// lives through three stages, as Temporal's patching-api sample shows: `patched(id)` (old and new
// runs both replay) → `deprecatePatch(id)` once no open run started before `since` (`agentrun doctor`
// lists them): the old branch, its comments and the histories recorded without the marker are
// deleted, the new branch stays → a release later, the call and its entry here are deleted too.
// test/unit/patches.test.ts checks that code and this table agree. Keep it short: a release that adds
// a patch beyond the budget retires one first. Under Worker Versioning a conversation is pinned to
// its build until its next continue-as-new, which starts on the current build: a change that only
// matters from a turn boundary on needs no patch for versioned workers, only a new build (a patch
// still guards unversioned workers and runs moved by hand; CONTRIBUTING.md, a workflow change).

export interface LivePatch {
  /** The id passed to `patched()` / `deprecatePatch()`. */
  id: string;
  /** When the release with the patch went out (UTC date): runs started earlier may lack the marker. */
  since: string;
  /** A recorded history under test/histories/ whose run took the patched path (it holds the marker). */
  history: string;
  /** `deprecated`: the code calls `deprecatePatch(id)`; the next release deletes it. */
  stage: 'patched' | 'deprecated';
  /** At stage `patched`: what deprecating it deletes (the old branch, its optional fields, pass-throughs and fallbacks). */
  removes?: string;
}

/**
 * No more patches at stage `patched` than this: the count today, so from now on a release that adds
 * a patch deprecates one in the same release. Lower it as patches retire. (Raised from 8 to 9 for
 * `subagent-changes-leave-host`: the next release deprecates one, e.g. `drain-loses-nothing`.)
 */
export const PATCH_BUDGET = 9;

export const PATCHES: readonly LivePatch[] = [
  { id: 'continue-as-new-auto-upgrade', since: '2026-11-23', history: 'session-continue-as-new-auto-upgrade.json', stage: 'deprecated' },
  { id: 'local-workspace-host', since: '2026-11-23', history: 'fleet-local-origin.json', stage: 'deprecated' },
  { id: 'stop-hook', since: '2026-11-23', history: 'session-stop-hook.json', stage: 'deprecated' },
  { id: 'turn-record-with-next-step', since: '2026-11-23', history: 'fleet-rolling-restart.json', stage: 'deprecated' },
  { id: 'rollback-moves', since: '2026-11-23', history: 'fleet-rollback-move.json', stage: 'deprecated' },
  { id: 'turn-zero-alongside-first-step', since: '2026-11-25', history: 'fleet-turn-zero-alongside.json', stage: 'deprecated' },
  { id: 'environment-setup', since: '2026-11-25', history: 'fleet-setup-after-move.json', stage: 'deprecated' },
  { id: 'verify-step', since: '2026-11-25', history: 'session-environment.json', stage: 'deprecated' },
  { id: 'answer-call-setup-failed-after-move', since: '2026-11-25', history: 'fleet-setup-failed-after-move.json', stage: 'deprecated' },
  { id: 'delegate-on-parent-host', since: '2026-11-25', history: 'session-delegate-on-parent-host.json', stage: 'deprecated' },
  { id: 'delegate-reads-on-host', since: '2026-11-25', history: 'fleet-subagent-host-lost.json', stage: 'deprecated' },
  { id: 'host-incarnations', since: '2026-11-25', history: 'fleet-rolling-restart.json', stage: 'deprecated' },
  { id: 'placement-epochs', since: '2026-11-25', history: 'fleet-local-origin.json', stage: 'deprecated' },
  { id: 'subagent-stays-on-parent-host', since: '2026-11-25', history: 'fleet-subagent-host-lost-child.json', stage: 'deprecated' },
  { id: 'setup-after-move', since: '2026-11-25', history: 'fleet-setup-after-move.json', stage: 'deprecated' },
  {
    id: 'reads-before-turn-zero',
    since: '2026-11-26',
    history: 'fleet-turn-zero-reads-first.json',
    stage: 'deprecated',
    removes: "the first turn's wait for turn 0's checkpoint before any call (loop.ts readsFirst)",
  },
  {
    id: 'drain-loses-nothing',
    since: '2026-11-27',
    history: 'fleet-drain-loses-nothing.json',
    stage: 'patched',
    removes: "answering a call cut off by a drain as interrupted (calls.ts), the drain-less move notice (host.ts), HostLost.drained's fallback",
  },
  {
    id: 'parallel-reads',
    since: '2026-11-27',
    history: 'fleet-drain-loses-nothing.json',
    stage: 'patched',
    removes: 'the exclusive gate for read-only calls (steps.ts `byCall`): reads always share the gate',
  },
  {
    id: 'outcome-as-workflow-status',
    since: '2026-11-27',
    history: 'session-outcome-failed.json',
    stage: 'patched',
    removes: 'the plain return of failed, out-of-budget and cancelled conversations (outcome.ts)',
  },
  {
    id: 'budget-pause',
    since: '2026-11-27',
    history: 'fleet-budget-pause.json',
    stage: 'patched',
    removes: 'the ending at a budget limit for `--on-budget pause` runs started before (budget.ts pauses())',
  },
  {
    id: 'batch-waves',
    since: '2026-11-27',
    history: 'batch-waves-halt-resume.json',
    stage: 'patched',
    removes: "the batch's lanes without waves (batch/workflow.ts runJob loop), and its state query handler there",
  },
  {
    id: 'provider-wait',
    since: '2026-11-27',
    history: 'pools-provider-wait.json',
    stage: 'patched',
    removes: "model steps scheduled without `waitForProvider` and the activity's fallback of failing on a refusing provider",
  },
  {
    id: 'model-step-priority',
    since: '2026-11-27',
    history: 'pools-model-step-priority.json',
    stage: 'patched',
    removes: 'model steps scheduled without priority keys (model-priority.ts options())',
  },
  {
    id: 'calls-run-again-after-loss',
    since: '2026-11-29',
    history: 'fleet-host-loss-pinned-write.json',
    stage: 'patched',
    removes:
      'answering a call cut off by a lost host as interrupted whatever its kind (calls.ts callsRunAgain), the move notice without recovered calls (host.ts)',
  },
  {
    id: 'subagent-changes-leave-host',
    since: '2026-11-29',
    history: 'fleet-subagent-changes-kept.json',
    stage: 'patched',
    removes:
      "answering a writing sub-agent's delegate call without its changes stored off the host first (delegate.ts saveChanges), and its answers that do not say a lost host took them",
  },
];
