// Connections a conversation's commands made through the egress proxy, allowed or refused.
import { epochOf, fenceAllows } from './fence.js';
import type { NetworkConnectionInput, NetworkConnectionRow } from './types.js';
import { Tables } from './tables.js';

export abstract class NetworkTables extends Tables {
  /**
   * `epoch`: the placement the recording step ran under (the proxy records outside the step's own
   * async context, so it is passed); a superseded host's record is refused.
   */
  async putNetworkConnection(c: NetworkConnectionInput, epoch: number | null = epochOf(c.conversationId)): Promise<void> {
    const { rowCount } = await this.pool.query(
      `INSERT INTO network_connections (conversation_id, call_id, host, port, address, method, allowed, reason, bytes_up, bytes_down, duration_ms, epoch)
       SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12 WHERE ${fenceAllows('$1', '$12')}`,
      [
        c.conversationId,
        c.callId ?? null,
        c.host,
        c.port,
        c.address ?? null,
        c.method,
        c.allowed,
        c.reason ?? null,
        c.bytesUp,
        c.bytesDown,
        Math.round(c.durationMs),
        epoch,
      ],
    );
    await this.refusedUnless(c.conversationId, epoch, rowCount, `the record of a connection to ${c.host}`);
  }

  async getNetworkConnections(conversationId: string, limit = 1000): Promise<NetworkConnectionRow[]> {
    const { rows } = await this.pool.query(
      `SELECT * FROM (SELECT * FROM network_connections WHERE conversation_id = $1 ORDER BY id DESC LIMIT $2) c ORDER BY id`,
      [conversationId, limit],
    );
    return rows.map((r) => ({
      conversationId: r.conversation_id,
      ...(r.call_id ? { callId: r.call_id } : {}),
      host: r.host,
      port: r.port,
      ...(r.address ? { address: r.address } : {}),
      method: r.method,
      allowed: r.allowed,
      ...(r.reason ? { reason: r.reason } : {}),
      bytesUp: Number(r.bytes_up),
      bytesDown: Number(r.bytes_down),
      durationMs: r.duration_ms,
      ...(r.epoch === null ? {} : { epoch: Number(r.epoch) }),
      at: r.at,
    }));
  }
}
