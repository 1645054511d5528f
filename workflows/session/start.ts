// The start of a `session` conversation: where its workspace lives (a clone on whichever worker
// takes it, a local directory on the host that sees it, a fork's checkpoint, a parent's host), the
// first messages, and turn 0's checkpoint (made before the first model step, or alongside it for a
// local workspace). Also how a lost workspace is rebuilt from a checkpoint on another host
// (`materialize`, for HostRouting). Deterministic: no Node APIs here.
import { workflowInfo } from '@temporalio/workflow';
import type { RunConfig } from '../../src/config.js';
import type { WorkspaceHost } from '../../src/workspace/routing.js';
import type { ForkOrigin } from '../api.js';
import { HostLost, type Placement } from './host.js';
import type { Status } from './status.js';
import type { StepRunner } from './steps.js';
import type { Ending, SessionCarried, SessionInput } from './types.js';

type PlaceFn = (epoch: number) => Promise<Placement | null>;

export class SessionStart {
  private readonly config: RunConfig;

  constructor(
    private readonly steps: StepRunner,
    private readonly st: SessionCarried,
    private readonly input: SessionInput,
    private readonly status: Status,
    /** The repository's environment (setup, verify), before turn 1 (environment.ts). */
    private readonly environment: (fromSettings: boolean) => Promise<Ending | undefined>,
  ) {
    this.config = input.config;
  }

  /** Re-materialise the workspace from checkpoint `cp` on any live host, as placement `epoch` (HostRouting's move). */
  materialize(from: WorkspaceHost, cp: { turn: number; commit: string }, epoch: number, move: { why: string; drained: boolean }): Promise<Placement> {
    const { config } = this;
    const { conversationId } = this.steps;
    return config.repo !== undefined
      ? this.steps.run('restore', [cp.turn], (a) =>
          a.materializeWorkspace({
            conversationId,
            repo: config.repo,
            base: from.base,
            turn: cp.turn,
            commit: cp.commit,
            epoch,
            ...movedFrom(from.hostId, move),
          }),
        )
      : this.steps.run('restore', [cp.turn], (a) =>
          a.materializeWorkspace({
            conversationId,
            workspace: from.workspace,
            turn: cp.turn,
            commit: cp.commit,
            epoch,
            ...movedFrom(from.hostId, move),
          }),
        );
  }

  /** The first run's start: the workspace placed and initialised, then its environment; an Ending when setup failed. */
  async start(): Promise<Ending | undefined> {
    const { input, config } = this;
    const { conversationId } = this.steps;
    const workspace = input.workspace;
    if (input.fork) {
      await this.startFork(input.fork);
      // A fork's workspace comes from a checkpoint, without what setup made (ignored files): setup again (or the cache).
      return this.environment(true);
    }
    if (input.workspaceHost) return this.startOnParentHost(input.workspaceHost);
    const placeLocal: PlaceFn = (epoch) =>
      // Started with its origin: only a host on that machine that sees that directory takes it, so
      // the placement is retried (briefly, without limit) until one of the hosts there does.
      this.steps.run(input.origin ? 'placeByOrigin' : 'place', [`place ${workspace}`], (a) =>
        a.placeLocalWorkspace({
          conversationId,
          workspace,
          epoch,
          ...(input.origin ? { origin: input.origin } : {}),
        }),
      );
    // Local workspaces too have a host, and checkpoints (bundles in the store) another host can rebuild them from.
    const local = config.repo === undefined;
    const init = local
      ? await this.placeAndInit(placeLocal, true)
      : await this.placeAndInit((epoch) =>
          this.steps.run('place', [`clone ${config.repo}`], (a) => a.prepareWorkspace({ conversationId, task: input.task ?? '', config, epoch })),
        );
    if (init.checkpoint) this.st.checkpointTurns.push(0);
    // Placed on a host, the checkpoint not made yet: it is made now, while the first model step runs.
    else if (local) this.steps.gate.makingTurnZero(this.turnZeroCheckpoint(placeLocal));
    this.status.publish();
    return this.environment('environment' in init && init.environment === true);
  }

  /** A sub-agent works in its parent's workspace, on the parent's host; if that host is lost, the child fails (the parent moves). */
  private async startOnParentHost(host: Placement): Promise<undefined> {
    const { hosts } = this.steps;
    // The child's own conversation: its first placement, nothing earlier to fence off.
    hosts.place(host, hosts.nextEpoch());
    const init = await hosts.onHost(() => this.initWorkspace());
    if (init.checkpoint) this.st.checkpointTurns.push(0);
    this.status.publish();
    return undefined;
  }

  /** `deferCheckpoint`: without the turn-0 checkpoint (made by turnZeroCheckpoint, alongside the first model step). */
  private initWorkspace(deferCheckpoint = false) {
    const { steps } = this;
    return steps.run('init', [deferCheckpoint ? 'workspace and first messages' : 'workspace, checkpoint and first messages'], (a) =>
      a.initConversation({
        ...steps.ref,
        config: this.config,
        task: this.input.task ?? '',
        ...(deferCheckpoint ? { deferCheckpoint } : {}),
        // Only a child workflow has one: what lets a sub-agent work in its parent's directory.
        ...(workflowInfo().parent ? { startedBy: workflowInfo().parent!.workflowId } : {}),
      }),
    );
  }

  /**
   * Whichever worker takes the clone (or the local placement) becomes the workspace host; turn 0's
   * checkpoint leaves it at once. `deferCheckpoint`: the checkpoint is not made here
   * (turnZeroCheckpoint makes it); a worker that made it all the same (older code) is kept to it.
   */
  private async placeAndInit(place: PlaceFn, deferCheckpoint = false) {
    const { hosts } = this.steps;
    for (;;) {
      const epoch = hosts.nextEpoch();
      const placed = await place(epoch);
      // A local workspace taken by a worker without a host queue: the shared queue, as before hosts.
      if (!placed) return this.initWorkspace();
      hosts.place(placed, epoch);
      try {
        return await hosts.onHost(async () => {
          const init = await this.initWorkspace(deferCheckpoint);
          if (init.checkpoint) await this.saveOffHost(0, init.checkpoint.commit);
          return init;
        });
      } catch (err) {
        // The new host died before the job started there: clone again elsewhere.
        if (!(err instanceof HostLost)) throw err;
      }
    }
  }

  /**
   * The turn-0 checkpoint of a placed local workspace on its host, then off it (the bundle base, for
   * a large directory most of the first turn's work), while the first model step runs. Retried
   * activities are safe (a checkpoint made already is kept while the files are the same; a stored
   * bundle is kept). The host lost meanwhile: the workspace is placed again (as the first placement
   * was) and the checkpoint made there; the first model step, if it lost the host too, waits for
   * this and runs again.
   */
  private async turnZeroCheckpoint(place: PlaceFn): Promise<void> {
    const { steps, st } = this;
    for (;;) {
      try {
        const made = await steps.hosts.onHost(async () => {
          const cp = await steps.run('turnZeroCheckpoint', [0, 'on the host, alongside the first model step'], (a) => a.checkpointTurnZero(steps.ref));
          if (cp) await this.saveOffHost(0, cp.commit);
          return cp !== undefined;
        });
        if (made && !st.checkpointTurns.includes(0)) st.checkpointTurns.unshift(0);
        return;
      } catch (err) {
        if (!(err instanceof HostLost)) throw err;
      }
      const again = await this.placeAndInit(place, true);
      // Placed on a worker without a host queue: it made the checkpoint on the shared queue.
      if (again.checkpoint) {
        if (!st.checkpointTurns.includes(0)) st.checkpointTurns.unshift(0);
        return;
      }
    }
  }

  /** A fork: the parent's first turns as this conversation's transcript, that turn's checkpoint as the workspace. */
  private async startFork(fork: ForkOrigin): Promise<void> {
    const { parentId, atTurn } = fork;
    const { st, config } = this;
    const { hosts, conversationId } = this.steps;
    const copy = await this.steps.run('place', [`fork of ${parentId} at turn ${atTurn}`], (a) =>
      a.forkConversation({ conversationId, parentId, atTurn, task: this.input.task ?? '', config }),
    );
    const cp = copy.checkpoints[copy.checkpoints.length - 1]!;
    Object.assign(st, { nextSeq: copy.nextSeq, turn: atTurn, checkpointTurns: copy.checkpoints.map((c) => c.turn), forkedFrom: fork });
    const epoch = hosts.nextEpoch();
    hosts.place(
      await this.steps.run('restore', [cp.turn], (a) =>
        a.materializeWorkspace({ conversationId, fromConversationId: parentId, repo: config.repo!, turn: cp.turn, commit: cp.commit, epoch }),
      ),
      epoch,
    );
    // Under the fork's own name too, so the fork can fail over without its parent's refs.
    await hosts.onHost(() => this.saveOffHost(cp.turn, cp.commit));
    if (fork.message) st.pending.push({ role: 'user', kind: 'user', content: fork.message, turn: atTurn });
    this.status.publish();
  }

  private async saveOffHost(turn: number, commit: string): Promise<void> {
    const { steps } = this;
    const repo = this.config.repo !== undefined ? { repo: this.config.repo } : {};
    await steps.run('saveOffHost', [turn, 'off the host'], (a) =>
      a.saveCheckpointOffHost({ conversationId: steps.conversationId, ...repo, workspace: steps.ref.workspace, turn, commit, ...steps.hosts.fencedPush(turn) }),
    );
    this.st.offHost = { turn, commit };
  }
}

/** Why a move happened, for its stream event: only a drain adds it, so the inputs of moves after a loss stay as they were. */
function movedFrom(hostId: string, move: { why: string; drained: boolean }): { fromHost?: string; drained?: boolean } {
  return move.drained ? { fromHost: hostId, drained: true } : {};
}
