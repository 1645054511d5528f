// Drain: a worker told to stop (SIGTERM) hands the conversations whose workspaces it holds to
// other hosts at once, instead of letting them wait for the host-queue timeout.
import { Client, Connection } from '@temporalio/client';
import { hostedConversations } from '../activities/workspace.js';
import { log } from '../src/log.js';
import { hostIncarnation } from '../src/workspace/host.js';
import { externalTemporalTls } from '../src/runtime/tls.js';
import { hostDrainingSignal } from '../workflows/api.js';

export async function handOverConversations(opts: { address: string; namespace?: string; hostId: string }): Promise<number> {
  // This process is what drains, not the id: a worker restarted under the id is a usable host again.
  const incarnation = hostIncarnation();
  const ids = [...hostedConversations];
  if (!ids.length) return 0;
  const connection = await Connection.connect({ address: opts.address, ...externalTemporalTls() });
  try {
    const client = new Client({ connection, namespace: opts.namespace ?? 'default' });
    let told = 0;
    for (const id of ids) {
      try {
        await client.workflow.getHandle(id).signal(hostDrainingSignal, { hostId: opts.hostId, incarnation });
        told++;
      } catch (err) {
        // Finished conversations cannot take signals; nothing to hand over.
        log.debug({ conversationId: id, err: (err as Error).message }, 'not handed over');
      }
    }
    log.info({ host: opts.hostId, conversations: told }, 'drained: conversations handed over to other hosts');
    return told;
  } finally {
    await connection.close();
  }
}
