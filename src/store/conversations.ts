// The conversations table: a row per conversation (its config, status, progress, what gc
// collected) and the snapshot of its repository's extensions.
import { text, json, toConversation } from './rows.js';
import type { ConversationInput, ConversationPatch, ConversationRow } from './types.js';
import { Tables } from './tables.js';

export abstract class ConversationTables extends Tables {
  /** Idempotent: a repeated call (retry, continue-as-new) refreshes the fields and keeps created_at and progress. */
  async upsertConversation(c: ConversationInput): Promise<void> {
    await this.pool.query(
      `INSERT INTO conversations (id, task, workspace, model, config, schedule_id)
       VALUES ($1, $2, $3, $4, $5::jsonb, $6)
       ON CONFLICT (id) DO UPDATE SET
         task = EXCLUDED.task, workspace = EXCLUDED.workspace, model = EXCLUDED.model,
         config = EXCLUDED.config, schedule_id = COALESCE(EXCLUDED.schedule_id, conversations.schedule_id),
         updated_at = now()`,
      [c.id, text(c.task), c.workspace, c.model, json(c.config ?? null), c.scheduleId ?? null],
    );
  }

  async updateConversation(id: string, patch: ConversationPatch): Promise<void> {
    const sets: string[] = ['updated_at = now()'];
    const params: unknown[] = [id];
    const add = (column: string, value: unknown, cast = '') => {
      params.push(value);
      sets.push(`${column} = $${params.length}${cast}`);
    };
    if (patch.status !== undefined) add('status', patch.status);
    if (patch.reason !== undefined) add('reason', text(patch.reason));
    if (patch.turns !== undefined) add('turns', patch.turns);
    if (patch.usage !== undefined) add('usage', json(patch.usage), '::jsonb');
    if (patch.costUsd !== undefined) add('cost_usd', patch.costUsd);
    if (patch.finished === true) sets.push('finished_at = COALESCE(finished_at, now())');
    if (patch.finished === false) sets.push('finished_at = NULL');
    const res = await this.pool.query(`UPDATE conversations SET ${sets.join(', ')} WHERE id = $1`, params);
    if (res.rowCount === 0) throw new Error(`conversation ${id} not found in the store`);
  }

  /** Merge fields into a conversation's stored run configuration (a raised budget's limits); undefined fields are removed. */
  async mergeConversationConfig(id: string, fields: Record<string, unknown>): Promise<void> {
    const set = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
    const unset = Object.keys(fields).filter((k) => fields[k] === undefined);
    const res = await this.pool.query(`UPDATE conversations SET config = (config || $2::jsonb) - $3::text[], updated_at = now() WHERE id = $1`, [
      id,
      json(set),
      unset,
    ]);
    if (res.rowCount === 0) throw new Error(`conversation ${id} not found in the store`);
  }

  /**
   * Every row of a conversation, in every table of the schema that has a conversation_id (so
   * tables added later are covered): `run --id X --replace` starts over with nothing of the old one.
   */
  /** Record that `id` is about to be replaced (`--replace`): the old run's tenant, status and task's start, and who replaced it. */
  async recordReplacement(r: { id: string; tenant: string; oldStatus?: string; oldTask?: string; by: string }): Promise<void> {
    await this.pool.query('INSERT INTO conversation_replacements (replaced_id, tenant, old_status, old_task, replaced_by) VALUES ($1, $2, $3, $4, $5)', [
      r.id,
      r.tenant,
      r.oldStatus ?? null,
      r.oldTask?.slice(0, 500) ?? null,
      r.by,
    ]);
  }

  /** The replacements recorded for `id`, oldest first. */
  async getReplacements(id: string): Promise<{ tenant: string; oldStatus: string | null; replacedBy: string; replacedAt: Date }[]> {
    const { rows } = await this.pool.query(
      'SELECT tenant, old_status, replaced_by, replaced_at FROM conversation_replacements WHERE replaced_id = $1 ORDER BY replaced_at',
      [id],
    );
    return rows.map((r) => ({ tenant: r.tenant, oldStatus: r.old_status, replacedBy: r.replaced_by, replacedAt: r.replaced_at }));
  }

  async deleteConversation(id: string): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const { rows } = await client.query<{ table_name: string }>(
        `SELECT DISTINCT table_name FROM information_schema.columns WHERE table_schema = $1 AND column_name = 'conversation_id'`,
        [this.schema],
      );
      for (const r of rows) await client.query(`DELETE FROM ${client.escapeIdentifier(r.table_name)} WHERE conversation_id = $1`, [id]);
      await client.query('DELETE FROM conversations WHERE id = $1', [id]);
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }

  async getConversation(id: string): Promise<ConversationRow | null> {
    const { rows } = await this.pool.query('SELECT * FROM conversations WHERE id = $1', [id]);
    return rows[0] ? toConversation(rows[0]) : null;
  }

  /** A conversation's sub-agents (config.agent.parentId, workflows/session/delegate.ts), oldest first. */
  async getChildConversations(parentId: string): Promise<ConversationRow[]> {
    const { rows } = await this.pool.query(`SELECT * FROM conversations WHERE config->'agent'->>'parentId' = $1 ORDER BY created_at, id`, [parentId]);
    return rows.map(toConversation);
  }

  /**
   * Conversations of another tenant than `tenant` whose local workspace is `dir`, lies beneath it or
   * holds it (a repository source, or a local workspace, must be none of them). A run without a
   * tenant is `default`'s. One that ended without a checkpoint never worked there (refused at its
   * first step): it claims nothing, so naming a directory cannot shut its owner out of it.
   */
  async otherTenantsWorkspacesAt(dir: string, tenant: string): Promise<{ id: string; tenant: string }[]> {
    const { rows } = await this.pool.query<{ id: string; tenant: string }>(
      `SELECT id, coalesce(config->>'tenant', 'default') AS tenant FROM conversations
        WHERE workspace LIKE '/%' AND (workspace = $1 OR starts_with($1, workspace || '/') OR starts_with(workspace, $1 || '/'))
          AND coalesce(config->>'tenant', 'default') <> $2
          AND (status NOT IN ('completed', 'failed', 'cancelled', 'budget_exhausted', 'loop_detected', 'context_overflow')
               OR EXISTS (SELECT 1 FROM checkpoints c WHERE c.conversation_id = conversations.id)) LIMIT 5`,
      [dir, tenant],
    );
    return rows;
  }

  /** Those of `ids` whose conversation has ended (a final status recorded). */
  async endedConversations(ids: string[]): Promise<string[]> {
    const { rows } = await this.pool.query<{ id: string }>(
      `SELECT id FROM conversations WHERE id = ANY($1::text[]) AND status IN ('completed', 'failed', 'cancelled', 'budget_exhausted', 'loop_detected', 'context_overflow')`,
      [ids],
    );
    return rows.map((r) => r.id);
  }

  /** Newest first. */
  /** Newest first; `tenants`: only theirs (a run without a tenant is `default`'s), absent: every tenant's. */
  async listConversations(opts: { status?: string; limit?: number; tenants?: readonly string[] } = {}): Promise<ConversationRow[]> {
    const { rows } = await this.pool.query(
      `SELECT * FROM conversations WHERE ($1::text IS NULL OR status = $1)
         AND ($3::text[] IS NULL OR coalesce(nullif(config->>'tenant', ''), 'default') = ANY($3))
       ORDER BY created_at DESC, id LIMIT $2`,
      [opts.status ?? null, opts.limit ?? 100, opts.tenants ?? null],
    );
    return rows.map(toConversation);
  }

  /** What gc removed of a conversation (src/workspace/gc.ts), kept on its row. */
  async recordCollected(conversationId: string, collected: Record<string, unknown>): Promise<void> {
    await this.pool.query('UPDATE conversations SET collected = $2 WHERE id = $1', [conversationId, JSON.stringify(collected)]);
  }

  /** Keep a conversation's repository extensions once: the first write wins; returns what is stored. */
  async putRepositoryExtensions(conversationId: string, snapshot: object): Promise<unknown> {
    const { rows } = await this.pool.query<{ snapshot: unknown }>(
      `WITH ins AS (
         INSERT INTO repository_extensions (conversation_id, snapshot) VALUES ($1, $2) ON CONFLICT (conversation_id) DO NOTHING RETURNING snapshot
       )
       SELECT snapshot FROM ins UNION ALL SELECT snapshot FROM repository_extensions WHERE conversation_id = $1 LIMIT 1`,
      [conversationId, JSON.stringify(snapshot)],
    );
    return rows[0]?.snapshot;
  }

  async getRepositoryExtensions(conversationId: string): Promise<{ snapshot: unknown; setupPlan?: unknown } | undefined> {
    const { rows } = await this.pool.query<{ snapshot: unknown; setup_plan: unknown }>(
      'SELECT snapshot, setup_plan FROM repository_extensions WHERE conversation_id = $1',
      [conversationId],
    );
    const r = rows[0];
    return r ? { snapshot: r.snapshot, ...(r.setup_plan !== null ? { setupPlan: r.setup_plan } : {}) } : undefined;
  }

  /** The plan of a conversation's first setup, kept once (a retried or later setup does not change it); returns what is stored. */
  async putSetupPlan(conversationId: string, plan: object): Promise<unknown> {
    const { rows } = await this.pool.query<{ setup_plan: unknown }>(
      `INSERT INTO repository_extensions (conversation_id, snapshot, setup_plan) VALUES ($1, '{"enabled":false,"found":[]}', $2)
       ON CONFLICT (conversation_id) DO UPDATE SET setup_plan = COALESCE(repository_extensions.setup_plan, EXCLUDED.setup_plan)
       RETURNING setup_plan`,
      [conversationId, JSON.stringify(plan)],
    );
    return rows[0]?.setup_plan;
  }
}
