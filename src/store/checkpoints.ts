// Checkpoints of a workspace and their off-host copies: the per-turn commits, the bundles of
// local workspaces, the bundle bases they start from, and where each workspace is and its disk use.
import { epochOf, fenceAllows, FencedError, notOlderThanStored } from './fence.js';
import { log } from '../log.js';
import { inc } from '../metrics.js';
import type { StreamEvent } from '../types.js';
import type { CheckpointRow } from './types.js';
import { Tables } from './tables.js';

export abstract class CheckpointTables extends Tables {
  /** With `announce`: the stream events written in the same statement (writeAnnounced). */
  async putCheckpoint(conversationId: string, turn: number, commit: string, files: string[], announce: StreamEvent[] = []): Promise<void> {
    const epoch = epochOf(conversationId);
    const sql = `INSERT INTO checkpoints (conversation_id, turn, commit, files) SELECT $1, $2, $3, $4 WHERE ${fenceAllows('$1', '$5')}
       ON CONFLICT (conversation_id, turn) DO UPDATE SET commit = EXCLUDED.commit, files = EXCLUDED.files, at = now()`;
    const params = [conversationId, turn, commit, files, epoch];
    await this.writeFenced(conversationId, epoch, sql, params, `checkpoint of turn ${turn}`, announce);
  }

  /** Ordered by turn. */
  async getCheckpoints(conversationId: string): Promise<CheckpointRow[]> {
    const { rows } = await this.pool.query('SELECT turn, commit, files, at FROM checkpoints WHERE conversation_id = $1 ORDER BY turn', [conversationId]);
    return rows.map((r) => ({ turn: r.turn, commit: r.commit, files: r.files, at: r.at }));
  }

  /**
   * Safe to repeat: a commit already bundled keeps its first bundle. `base`: the bundle needs that
   * bundle base (its prerequisite); false when the base is not stored (gc removed it meanwhile).
   */
  async putCheckpointBundle(
    conversationId: string,
    turn: number,
    commit: string,
    prerequisite: string | undefined,
    bundle: Buffer,
    /** A skipped bundle: its size, with an empty bundle. */
    bytes = bundle.length,
    base?: string,
  ): Promise<boolean> {
    const epoch = epochOf(conversationId);
    // Using a base marks it used now: gc removes only bases nobody used for a while, and a delete
    // under way re-reads the row it waited for, so it never removes one a bundle just named.
    const { rowCount } = await this.pool.query(
      `WITH b AS (UPDATE bundle_bases SET at = now() WHERE commit = $8 RETURNING 1)
       INSERT INTO checkpoint_bundles (conversation_id, turn, commit, prerequisite, bundle, bytes, base)
       SELECT $1, $2, $3, $4, $5, $6, $8 WHERE ${fenceAllows('$1', '$7')} AND ($8::text IS NULL OR EXISTS (SELECT 1 FROM b))
       ON CONFLICT (conversation_id, commit) DO NOTHING`,
      [conversationId, turn, commit, prerequisite ?? null, bundle, bytes, epoch, base ?? null],
    );
    if (rowCount === 0) await this.refusedUnless(conversationId, epoch, 0, `checkpoint bundle of turn ${turn}`);
    if (rowCount !== 0 || base === undefined) return true;
    const { rowCount: there } = await this.pool.query('SELECT 1 FROM checkpoint_bundles WHERE conversation_id = $1 AND commit = $2', [conversationId, commit]);
    return (there ?? 0) > 0;
  }

  /** Null when not (or not completely) stored. `parts` 0: it was above the cap, only its size is kept. */
  async getBundleBase(commit: string): Promise<{ bytes: number; parts: number } | null> {
    const { rows } = await this.pool.query<{ bytes: string; parts: number }>('SELECT bytes, parts FROM bundle_bases WHERE commit = $1', [commit]);
    return rows[0] ? { bytes: Number(rows[0].bytes), parts: rows[0].parts } : null;
  }

  /**
   * Safe to repeat. The base exists for readers once `finishBundleBase` recorded it. Written for
   * `conversationId` (whose checkpoint stores it): under its fence, so a superseded host writes no part.
   */
  async putBundleBasePart(commit: string, part: number, data: Buffer, conversationId?: string): Promise<void> {
    const epoch = conversationId === undefined ? null : epochOf(conversationId);
    const { rowCount } = await this.pool.query(
      `INSERT INTO bundle_base_parts (commit, part, data, conversation_id, epoch) SELECT $1, $2, $3, $4, $5 WHERE ${fenceAllows('$4', '$5')}
       ON CONFLICT (commit, part) DO UPDATE SET data = EXCLUDED.data, conversation_id = EXCLUDED.conversation_id, epoch = EXCLUDED.epoch, at = now()
       WHERE ${notOlderThanStored('bundle_base_parts')}`,
      [commit, part, data, conversationId ?? null, epoch],
    );
    if (conversationId === undefined) return;
    await this.refusedUnless(conversationId, epoch, rowCount, `part ${part} of bundle base ${commit}`);
    if (rowCount === 0)
      await this.olderThanStored(
        conversationId,
        epoch,
        'SELECT conversation_id, epoch FROM bundle_base_parts WHERE commit = $1 AND part = $2',
        [commit, part],
        `part ${part} of bundle base ${commit}`,
      );
  }

  async finishBundleBase(commit: string, parts: number, bytes: number, conversationId?: string): Promise<void> {
    const epoch = conversationId === undefined ? null : epochOf(conversationId);
    const { rowCount } = await this.pool.query(
      `INSERT INTO bundle_bases (commit, bytes, parts, conversation_id, epoch) SELECT $1, $2, $3, $4, $5 WHERE ${fenceAllows('$4', '$5')}
       ON CONFLICT (commit) DO UPDATE SET bytes = EXCLUDED.bytes, parts = EXCLUDED.parts, conversation_id = EXCLUDED.conversation_id, epoch = EXCLUDED.epoch, at = now()
       WHERE ${notOlderThanStored('bundle_bases')}`,
      [commit, bytes, parts, conversationId ?? null, epoch],
    );
    if (conversationId === undefined) return;
    await this.refusedUnless(conversationId, epoch, rowCount, `bundle base ${commit}`);
    if (rowCount === 0)
      await this.olderThanStored(conversationId, epoch, 'SELECT conversation_id, epoch FROM bundle_bases WHERE commit = $1', [commit], `bundle base ${commit}`);
  }

  /** An upsert that kept the stored row because the same conversation wrote it under a newer placement: refused like a fenced write. */
  private async olderThanStored(conversationId: string, epoch: number | null, sql: string, params: unknown[], what: string): Promise<void> {
    if (epoch === null) return;
    const { rows } = await this.pool.query<{ conversation_id: string | null; epoch: string | null }>(sql, params);
    const stored = rows[0];
    if (!stored || stored.conversation_id !== conversationId || stored.epoch === null || Number(stored.epoch) <= epoch) return;
    inc('agentrun_fenced_total', { kind: 'write' });
    log.warn({ conversationId, epoch, current: Number(stored.epoch), what }, 'write refused: a newer placement of the workspace wrote it');
    throw new FencedError(conversationId, epoch, Number(stored.epoch), what);
  }

  async getBundleBasePart(commit: string, part: number): Promise<Buffer> {
    const { rows } = await this.pool.query<{ data: Buffer }>('SELECT data FROM bundle_base_parts WHERE commit = $1 AND part = $2', [commit, part]);
    if (!rows[0]) throw new Error(`part ${part} of bundle base ${commit} is missing from the store`);
    return rows[0].data;
  }

  /**
   * Bases no conversation's bundle names and nobody used for `graceMs`, and parts a writer killed
   * midway left; removed unless `dryRun`. Returns what was (or would be) removed.
   */
  async deleteUnusedBundleBases(graceMs: number, dryRun = false): Promise<{ bases: number; bytes: number }> {
    const unused = `FROM bundle_bases b WHERE b.at < now() - ($1::double precision * interval '1 millisecond')
       AND NOT EXISTS (SELECT 1 FROM checkpoint_bundles c WHERE c.base = b.commit)`;
    const { rows } = dryRun
      ? await this.pool.query<{ bytes: string }>(`SELECT b.bytes ${unused}`, [graceMs])
      : await this.pool.query<{ bytes: string }>(`DELETE ${unused} RETURNING b.bytes`, [graceMs]);
    if (!dryRun)
      await this.pool.query(
        `DELETE FROM bundle_base_parts p WHERE p.at < now() - ($1::double precision * interval '1 millisecond')
         AND NOT EXISTS (SELECT 1 FROM bundle_bases b WHERE b.commit = p.commit)`,
        [graceMs],
      );
    return { bases: rows.length, bytes: rows.reduce((n, r) => n + Number(r.bytes), 0) };
  }

  /**
   * The commits bundled so far, oldest first (without the bundles). `skipped`: a bundle above
   * AGENTRUN_MAX_BUNDLE_BYTES, recorded with its size and an empty bundle (src/workspace/offhost.ts).
   */
  async getBundledCommits(conversationId: string): Promise<{ turn: number; commit: string; bytes: number; skipped?: true; base?: string }[]> {
    const { rows } = await this.pool.query(
      'SELECT turn, commit, bytes, octet_length(bundle) = 0 AS skipped, base FROM checkpoint_bundles WHERE conversation_id = $1 ORDER BY id',
      [conversationId],
    );
    return rows.map((r) => ({
      turn: r.turn,
      commit: r.commit,
      bytes: r.bytes,
      ...(r.skipped ? { skipped: true as const } : {}),
      ...(r.base ? { base: r.base as string } : {}),
    }));
  }

  /** One bundle (of commit `commit`), or undefined when there is none (never stored, removed by gc, or skipped: empty). */
  async getCheckpointBundle(conversationId: string, commit: string): Promise<Buffer | undefined> {
    const { rows } = await this.pool.query<{ bundle: Buffer }>(
      'SELECT bundle FROM checkpoint_bundles WHERE conversation_id = $1 AND commit = $2 AND octet_length(bundle) > 0',
      [conversationId, commit],
    );
    return rows[0]?.bundle;
  }

  /** Returns the rows and bytes removed. */
  async deleteCheckpointBundles(conversationId: string): Promise<{ bundles: number; bytes: number }> {
    const { rows } = await this.pool.query<{ bytes: number }>('DELETE FROM checkpoint_bundles WHERE conversation_id = $1 RETURNING bytes', [conversationId]);
    return { bundles: rows.length, bytes: rows.reduce((n, r) => n + r.bytes, 0) };
  }

  /**
   * The host holding a conversation's workspace, and its size when measured (a later measure
   * replaces it). Fenced like the other host writes: `epoch` (the placement the host holds the
   * workspace under; by default the running activity's) older than the conversation's fence is
   * refused in the same statement, so a host declared lost that wakes up does not put its host
   * and directory back in `list`.
   */
  async putWorkspaceUsage(
    conversationId: string,
    u: { host: string; workspace: string; diskBytes?: number },
    epoch: number | null = epochOf(conversationId),
  ): Promise<void> {
    const { rowCount } = await this.pool.query(
      `INSERT INTO workspace_usage (conversation_id, host, workspace, disk_bytes) SELECT $1, $2, $3, $4::bigint WHERE ${fenceAllows('$1', '$5')}
       ON CONFLICT (conversation_id) DO UPDATE SET host = EXCLUDED.host, workspace = EXCLUDED.workspace,
         disk_bytes = COALESCE(EXCLUDED.disk_bytes, CASE WHEN workspace_usage.workspace = EXCLUDED.workspace THEN workspace_usage.disk_bytes END), at = now()`,
      [conversationId, u.host, u.workspace, u.diskBytes ?? null, epoch],
    );
    await this.refusedUnless(conversationId, epoch, rowCount, `the workspace usage (host ${u.host}, ${u.workspace})`);
  }

  /** Host and disk use of many conversations in one query (for list). */
  async getWorkspaceUsage(conversationIds: string[]): Promise<Map<string, { host: string; workspace: string; diskBytes?: number }>> {
    const out = new Map<string, { host: string; workspace: string; diskBytes?: number }>();
    if (!conversationIds.length) return out;
    const { rows } = await this.pool.query('SELECT conversation_id, host, workspace, disk_bytes FROM workspace_usage WHERE conversation_id = ANY($1)', [
      conversationIds,
    ]);
    for (const r of rows)
      out.set(r.conversation_id, { host: r.host, workspace: r.workspace, ...(r.disk_bytes === null ? {} : { diskBytes: Number(r.disk_bytes) }) });
    return out;
  }
}
