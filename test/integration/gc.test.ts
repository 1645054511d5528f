// `gc`: removes what it says for finished conversations, and nothing of running ones.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { Store } from '../../src/store/index.js';
import { collectGarbage } from '../../src/workspace/gc.js';
import { removeSpareWorkspaces } from '../../src/environment/disk.js';
import { gitOut, tempRepo, uid } from '../helpers/harness.js';
import { tempDir } from '../helpers/temp.js';

let store: Store;
const schema = uid('gc').replace('-', '_');
beforeAll(async () => {
  store = await Store.connect(inject('databaseUrl'), { schema });
});
afterAll(async () => {
  await store.pool.query(`drop schema if exists ${schema} cascade`).catch(() => {});
  await store.close();
});

async function conversation(id: string, repo: string, workspaces: string, finishedDaysAgo?: number) {
  await store.upsertConversation({ id, task: 't', workspace: repo, model: 'm', config: { repo } as never });
  await store.appendStream(id, [
    { type: 'turn_started', turn: 1 },
    { type: 'turn_started', turn: 2 },
  ]);
  await store.putContext(id, 1, { plan: true }, 10);
  await mkdir(join(workspaces, id), { recursive: true });
  await writeFile(join(workspaces, id, 'file.txt'), 'x'.repeat(5000));
  const commit = gitOut(repo, 'rev-parse', 'HEAD');
  execFileSync('git', ['-C', repo, 'update-ref', `refs/agentrun/${id}/turn-1`, commit]);
  // Off-host checkpoints of a local workspace: bundles in the store.
  await store.putCheckpointBundle(id, 1, commit, undefined, Buffer.from('bundle'));
  if (finishedDaysAgo !== undefined) {
    await store.updateConversation(id, { status: 'completed', finished: true });
    await store.pool.query(`UPDATE conversations SET finished_at = now() - ($2 || ' days')::interval WHERE id = $1`, [id, String(finishedDaysAgo)]);
  }
}

describe('gc', () => {
  it('dry-runs, then removes workspaces, stream rows, context plans and checkpoint refs of old finished conversations only', async () => {
    const repo = await tempRepo({ 'a.txt': 'a' });
    const workspaces = await tempDir('agentrun-gc-');
    await conversation('old-done', repo, workspaces, 10);
    await conversation('new-done', repo, workspaces, 1);
    await conversation('running', repo, workspaces);

    // What the workspace takes on disk, as du counts it (its directory and the 5000-byte file's blocks).
    const taken = Number(execFileSync('du', ['-s', '-B1', join(workspaces, 'old-done')], { encoding: 'utf8' }).split('\t')[0]);
    expect(taken).toBeGreaterThanOrEqual(5000);
    const dry = await collectGarbage(store, { olderThanMs: 7 * 86_400_000, dryRun: true, workspacesDir: workspaces });
    expect(dry.items.map((i) => i.conversationId)).toEqual(['old-done']);
    expect(dry).toMatchObject({ dryRun: true, streamRows: 2, contexts: 1, refs: 1, bundles: 1, bundleBytes: 6 });
    expect(await store.getBundledCommits('old-done')).toHaveLength(1);
    expect(dry.bytes).toBe(taken);
    expect(existsSync(join(workspaces, 'old-done'))).toBe(true);
    expect(gitOut(repo, 'for-each-ref', '--format=%(refname)', 'refs/agentrun/old-done/')).toBe('refs/agentrun/old-done/turn-1');

    const done = await collectGarbage(store, { olderThanMs: 7 * 86_400_000, dryRun: false, workspacesDir: workspaces });
    expect(done).toMatchObject({ dryRun: false, bytes: taken, streamRows: 2, contexts: 1, refs: 1, bundles: 1 });
    expect(await store.getBundledCommits('old-done')).toEqual([]);
    expect(existsSync(join(workspaces, 'old-done'))).toBe(false);
    expect(await store.readStream('old-done')).toHaveLength(0);
    expect(await store.getContext('old-done', 1)).toBeNull();
    expect(gitOut(repo, 'for-each-ref', '--format=%(refname)', 'refs/agentrun/old-done/')).toBe('');
    // Untouched: the running one and the recently finished one.
    for (const id of ['running', 'new-done']) {
      expect(existsSync(join(workspaces, id, 'file.txt'))).toBe(true);
      expect(await store.readStream(id)).toHaveLength(2);
      expect(await store.getBundledCommits(id)).toHaveLength(1);
      expect(gitOut(repo, 'for-each-ref', '--format=%(refname)', `refs/agentrun/${id}/`)).toBe(`refs/agentrun/${id}/turn-1`);
    }
    // A second run finds nothing more.
    expect((await collectGarbage(store, { olderThanMs: 7 * 86_400_000, dryRun: false, workspacesDir: workspaces })).items).toEqual([]);

    // A worker's pass: a finished job's workspace kept past its time (12 h here) goes, running and unknown ones stay.
    await mkdir(join(workspaces, 'unknown-conv'));
    expect(await removeSpareWorkspaces(store, workspaces, await tempDir('agentrun-gc-home-'), 12 * 3600_000)).toEqual(['new-done']);
    expect(existsSync(join(workspaces, 'running'))).toBe(true);
    expect(existsSync(join(workspaces, 'unknown-conv'))).toBe(true);
  });
});
