// The live workflow patches: every `patched()` / `deprecatePatch()` id in workflow code, the day its
// release went out, and a recorded history (test/histories/) that takes the patched path. A patch
// lives through three stages, as Temporal's patching-api sample shows: `patched(id)` (old and new
// runs both replay) → `deprecatePatch(id)` once no open run started before `since` (`agentrun doctor`
// lists them): the old branch, its comments and the histories recorded without the marker are
// deleted, the new branch stays → a release later, the call and its entry here are deleted too,
// once the histories recorded while it was still `patched` (`heldBy`) are re-recorded or gone.
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
  /**
   * At stage `deprecated`: the recorded histories holding its marker from before it was deprecated.
   * Those fail to replay once the `deprecatePatch` call is gone (Temporal refuses a non-deprecated
   * marker the code no longer asks for), so the call and the entry go only once each is re-recorded
   * or deleted with the patch it was recorded for.
   */
  heldBy?: readonly string[];
}

/**
 * No more patches at stage `patched` than this: the count today. Lower it as patches retire; the goal
 * is 4. The ten live ones went out on 2026-11-27 and 2026-11-29: each is deprecated only once
 * `agentrun doctor` shows no open run started before its release, and runs of those days may still
 * be open. (2026-11-29 added two, `search-attributes-on-change` and `subagent-changes-leave-host`,
 * beyond the eight: the release after it deprecates the 2026-11-27 ones that doctor shows free.)
 */
export const PATCH_BUDGET = 10;

export const PATCHES: readonly LivePatch[] = [
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
    id: 'search-attributes-on-change',
    since: '2026-11-29',
    history: 'session-search-attributes-on-change.json',
    stage: 'patched',
    removes: 'upserting every search attribute at each status publish (status.ts publish)',
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
