// The live workflow patches: every `patched()` / `deprecatePatch()` id in workflow code, the day its
// release went out, and a recorded history (test/histories/) that takes the patched path. A patch
// lives through three stages, as Temporal's patching-api sample shows: `patched(id)` (old and new
// runs both replay) → `deprecatePatch(id)` in the next release, once no open run started before
// `since` (`agentrun doctor` lists them): what the entry's `removes` names (the old branch, its
// optional fields, pass-throughs and fallbacks, its comments) and the histories recorded without the
// marker are deleted, the new branch stays → a release later, the call and its entry here are
// deleted too, once the histories recorded while it was still `patched` (`heldBy`) are re-recorded
// or gone. test/unit/patches.test.ts checks that code and this table agree. Keep it short: a release
// that adds a patch beyond the budget deprecates one first. Under Worker Versioning a conversation is pinned to
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
 * No more patches at stage `patched` than this. A patch is deprecated within a release of going out,
 * so the live ones are those of the latest release or two (the three of 2026-11-29 were deprecated in
 * one release and deleted in the next, once no recorded history held their markers).
 */
export const PATCH_BUDGET = 4;

export const PATCHES: readonly LivePatch[] = [
  {
    id: 'probe-host-before-retry',
    since: '2026-11-29',
    history: 'fence-frozen-host.json',
    stage: 'patched',
    removes: "StepRunner.probing's unpatched branch (host steps retried by the server after a heartbeat or start-to-close timeout)",
  },
  {
    id: 'probe-setup-before-retry',
    since: '2026-11-30',
    history: 'fence-frozen-setup.json',
    stage: 'patched',
    removes:
      "StepRunner.probing's unpatched branch for setup, setup after a move and verify (retried by the server after a heartbeat or start-to-close timeout), and StepSpec.probedSinceSetupPatch",
  },
];
