// What a session shows of itself while it runs: its status (in the state and the search
// attributes) and the Temporal UI's current details, with what it waits for now. Each part that
// makes the session wait (people, the budget, a stalled step, a refusing provider) says in one line
// what it waits for, under the status it set. Deterministic: no Node APIs here.
import { setCurrentDetails, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { SearchAttributeUpdatePair } from '@temporalio/common';
import type { RunConfig } from '../../src/config.js';
import { SA_COST, SA_MODEL, SA_SCHEDULE, SA_STATUS, SA_TENANT, SA_TURNS, SA_WORKSPACE } from '../../src/search-attributes.js';
import type { ConversationStatus, Usage } from '../../src/types.js';
import { currentDetails } from '../summaries.js';

/** The part of the session state the status shows. */
interface Shown {
  status: ConversationStatus;
  turn: number;
  costUsd: number;
  usage: Usage;
}

export class Status {
  /** What the session waits for now while it runs (the model, a tool call), for the UI's current details. */
  private waitingFor?: string;
  /** Per status, the line that says what it waits for (set by the part that waits). */
  private readonly explain: Partial<Record<ConversationStatus, () => string | undefined>> = {
    paused: () => 'resume',
  };

  constructor(
    private readonly st: Shown,
    private readonly config: Pick<RunConfig, 'model' | 'scheduleId' | 'tenant'>,
    private readonly workspace: string,
    /** Upsert typed search attributes (only when they are registered on the namespace). */
    private readonly searchAttributes: boolean,
  ) {}

  get now(): ConversationStatus {
    return this.st.status;
  }

  /** `status` says what it waits for with `line` (people, the budget, a stall, the provider). */
  explainWith(status: ConversationStatus, line: () => string | undefined): void {
    this.explain[status] = line;
  }

  set(status: ConversationStatus): void {
    this.st.status = status;
    this.publish();
  }

  /** The UI's current details (turn, status, cost so far, what the session waits for); `waitingFor` when it changes. */
  show(waitingFor?: string): void {
    if (waitingFor !== undefined) this.waitingFor = waitingFor;
    const st = this.st;
    const waiting =
      st.status === 'running' ? this.waitingFor : st.status === 'waiting' ? (this.explain.waiting?.() ?? this.waitingFor) : this.explain[st.status]?.();
    setCurrentDetails(currentDetails({ turn: st.turn, status: st.status, costUsd: st.costUsd, totalTokens: st.usage.totalTokens, waitingFor: waiting }));
  }

  /** The current details and, when registered, the search attributes. */
  publish(): void {
    this.show();
    if (!this.searchAttributes) return;
    const all: SearchAttributeUpdatePair[] = [
      { key: SA_STATUS, value: this.st.status },
      { key: SA_WORKSPACE, value: this.workspace },
      { key: SA_MODEL, value: this.config.model },
      { key: SA_TURNS, value: this.st.turn },
      { key: SA_COST, value: this.st.costUsd },
      ...(this.config.scheduleId ? [{ key: SA_SCHEDULE, value: this.config.scheduleId }] : []),
      ...(this.config.tenant ? [{ key: SA_TENANT, value: this.config.tenant }] : []),
    ];
    // Each upsert is a billed action on Temporal Cloud: only the values that differ from the run's
    // (those given at its start, carried over a continue-as-new, or upserted since).
    const now = workflowInfo().typedSearchAttributes;
    const changed = all.filter((p) => now.get(p.key) !== p.value);
    if (changed.length) upsertSearchAttributes(changed);
  }
}
