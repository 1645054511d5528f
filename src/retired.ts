// The retired `conversation` workflow type. Workers no longer have its code,
// so a run of it still open on a task queue would fail its next workflow task there. `agentrun
// doctor` lists such runs and a worker refuses to start while any is open on its queue; the
// refusal names the command that ends them (docs/deploy.md, "Rolling out a new worker version").

/** The workflow type the session workflow replaced; no worker serves it any more. */
export const RETIRED_WORKFLOW_TYPE = 'conversation';

/** The visibility query of its open runs, on one task queue or (none given) all of them. */
function retiredRunsQuery(taskQueue?: string): string {
  return `WorkflowType = '${RETIRED_WORKFLOW_TYPE}' AND ExecutionStatus = 'Running'${taskQueue ? ` AND TaskQueue = '${taskQueue.replace(/'/g, "\\'")}'` : ''}`;
}

/** The two visibility calls used here, as both the client's Connection and the worker's NativeConnection offer them. */
export interface VisibilityService {
  countWorkflowExecutions(req: { namespace: string; query: string }): Promise<{ count?: unknown }>;
  listWorkflowExecutions(req: {
    namespace: string;
    query: string;
    pageSize: number;
  }): Promise<{ executions?: ({ execution?: { workflowId?: string | null } | null } | null)[] | null }>;
}

export interface RetiredRuns {
  count: number;
  /** Up to `IDS_SHOWN` of their workflow ids. */
  ids: string[];
  query: string;
}

const IDS_SHOWN = 3;

/** Long (the proto's int64) or number. */
const toNumber = (v: unknown): number =>
  typeof v === 'number'
    ? v
    : typeof (v as { toNumber?: () => number })?.toNumber === 'function'
      ? (v as { toNumber: () => number }).toNumber()
      : Number(v ?? 0);

export async function openRetiredRuns(service: VisibilityService, namespace: string, taskQueue?: string): Promise<RetiredRuns> {
  const query = retiredRunsQuery(taskQueue);
  const [counted, listed] = await Promise.all([
    service.countWorkflowExecutions({ namespace, query }),
    service.listWorkflowExecutions({ namespace, query, pageSize: IDS_SHOWN }),
  ]);
  const ids = (listed.executions ?? []).map((e) => e?.execution?.workflowId ?? '').filter(Boolean);
  // Visibility may count a moment behind the list: never report fewer than were listed.
  return { count: Math.max(toNumber(counted.count), ids.length), ids, query };
}

/** Which runs are open: `2 runs of the retired `conversation` workflow are open on task queue q (a, b)`. */
export function retiredRunsProblem(runs: RetiredRuns, taskQueue?: string): string {
  const n = runs.count;
  const more = n > runs.ids.length ? `, … ${n - runs.ids.length} more` : '';
  return (
    `${n} run${n === 1 ? '' : 's'} of the retired \`${RETIRED_WORKFLOW_TYPE}\` workflow ${n === 1 ? 'is' : 'are'} open` +
    `${taskQueue ? ` on task queue ${taskQueue}` : ''} (${runs.ids.join(', ')}${more})`
  );
}

/** How to end them: the previous version's worker, or the Temporal CLI's batch terminate of exactly that query. */
export function retiredRunsFix(runs: RetiredRuns, namespace: string): string {
  const ns = namespace === 'default' ? '' : ` --namespace ${namespace}`;
  return `let a worker of the previous agentrun version finish them, or end them with temporal workflow terminate${ns} --query "${runs.query}" --reason "conversation workflow retired" --yes`;
}

/** The one line naming the open runs and how to end them. */
function retiredRunsLine(runs: RetiredRuns, namespace: string, taskQueue?: string): string {
  return `${retiredRunsProblem(runs, taskQueue)} and this version has no code for them: ${retiredRunsFix(runs, namespace)}`;
}

/** Throws the one line when runs of the retired type are open on `taskQueue`: a worker must not start then. */
export async function refuseWhileRetiredRunsOpen(service: VisibilityService, namespace: string, taskQueue: string): Promise<void> {
  let runs: RetiredRuns;
  try {
    runs = await openRetiredRuns(service, namespace, taskQueue);
  } catch (err) {
    throw new Error(
      `cannot ask Temporal's visibility for open runs of the retired \`${RETIRED_WORKFLOW_TYPE}\` workflow (${(err as Error).message.split('\n')[0]}); check the server and namespace ${namespace}`,
    );
  }
  if (runs.count > 0) throw new Error(`refusing to start the worker: ${retiredRunsLine(runs, namespace, taskQueue)}`);
}
