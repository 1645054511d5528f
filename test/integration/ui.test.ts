// The web page (src/ui) in a real headless Chromium against a real conversation: streaming text
// (including a retried attempt's reset), an approval clicked in the page, the final status, the
// list with cost; and the JSON/SSE API's resumption and errors.
import { conversationResult } from '../../src/client/outcome.js';
import { existsSync } from 'node:fs';
import { readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listConversations } from '../../src/client/list.js';
import { summaryWhere } from '../../src/client/workspace-where.js';
import { startUiServer, type UiServer } from '../../src/ui/server.js';
import { type ConversationResult } from '../../workflows/api.js';
import { CHROMIUM, CHROMIUM_ARGS } from '../helpers/chromium.js';
import { startChildWorker, stopChildWorkers, type ChildWorker } from '../helpers/child-worker.js';
import { createHarness, scriptModel, tempRepo, priceScriptedModel, uid, type Harness } from '../helpers/harness.js';
import { tempDir } from '../helpers/temp.js';

const ARGS = CHROMIUM_ARGS;

const SENTENCE = 'The quick brown agent streams this sentence slowly, token by token, into the page.';
const TURN1 = `${SENTENCE}\n<write_to_file>\n<path>notes.txt</path>\n<content>\nhello from the agent\n</content>\n</write_to_file>`;

const TOKEN = 'test-ui-token-' + Math.random().toString(36).slice(2);
/** For the JSON API as a program uses it: the token as a bearer (no cookie, so no CSRF token needed). */
const authFetch = (url: URL, init: RequestInit = {}) =>
  fetch(url, { ...init, headers: { authorization: `Bearer ${TOKEN}`, ...(init.headers as Record<string, string>) } });

let h: Harness;
let ui: UiServer;
let browser: Browser;
let shots: string;

beforeAll(async () => {
  // These tests add up costs: the scripted model gets a price here.
  priceScriptedModel();
  h = await createHarness();
  ui = await startUiServer({ store: h.store, client: h.client, port: 0, token: { token: TOKEN, name: 'test-operator', source: 'env' } });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
  shots = await tempDir('agentrun-ui-');
});
afterAll(async () => {
  await browser?.close();
  await ui?.close();
  await h?.close();
});

/** Width and height from a PNG's IHDR chunk. */
function pngSize(buf: Buffer): { width: number; height: number } {
  expect(buf.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))).toBe(true);
  expect(buf.subarray(12, 16).toString('latin1')).toBe('IHDR');
  return { width: buf.readUInt32BE(16), height: buf.readUInt32BE(20) };
}

describe('web page in headless Chromium', () => {
  it('streams text live, survives a retried attempt, takes an approval and shows the end', async () => {
    const workspace = await tempRepo();
    const model = await scriptModel({
      turns: [
        // Slow, and the first attempt is cut off after 30 characters: attempt 2 goes on from what
        // attempt 1 streamed (a continuation, no reset), and the page must show the sentence once.
        { say: TURN1, chunk: 3, delay_ms: 70, faults: [{ attempt: 1, disconnect_after_chars: 30 }] },
        { say: '<execute_command>\n<command>sudo true</command>\n<requires_approval>false</requires_approval>\n</execute_command>' },
        { say: '<attempt_completion>\n<result>done</result>\n</attempt_completion>' },
      ],
    });
    const handle = await h.start({ task: 'Write notes.txt, then check sudo.', workspace, config: { model } });
    const id = handle.workflowId;

    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(ui.loginUrl);
    await page.goto(`${ui.url}c/${encodeURIComponent(id)}`);

    // While it streams: part of the sentence is in the DOM, the message is still streaming and
    // the whole sentence is not there yet.
    const text = page.locator('.msg .text').first();
    await page.waitForFunction(() => (document.querySelector('.msg.streaming .text')?.textContent ?? '').includes('brown agent streams'), undefined, {
      timeout: 60_000,
    });
    const partial = await text.textContent();
    expect(partial!.startsWith('The quick brown agent streams')).toBe(true);
    expect(partial!.length).toBeLessThan(TURN1.length);
    expect(await page.locator('.msg.streaming').count()).toBe(1);
    await page.screenshot({ path: join(shots, 'streaming.png') });

    // The approval arrives; the streamed prose is complete and exactly once.
    await page.locator('#approvalCard').waitFor({ timeout: 60_000 });
    // The card first comes from the stream event, then fills in the whole call from the detail.
    await page.locator('#approvalCard #callText', { hasText: 'sudo true' }).waitFor({ timeout: 20_000 });
    expect(await page.locator('#approvalCard').textContent()).toContain('execute_command');
    expect(await page.locator('#approvalCard').textContent()).toContain('sudo true');
    // As the terminal shows it: the prose alone; the write_to_file call is its card, not markup in the message.
    expect(await text.textContent()).toBe(SENTENCE);
    expect(await page.locator('#transcript').textContent()).not.toContain('<write_to_file>');
    // Nothing was asked twice: no attempt starts over on the page.
    expect(await page.locator('.msg .badge', { hasText: 'attempt 2' }).count()).toBe(0);
    await page.waitForFunction(() => document.querySelector('#status .badge')?.textContent === 'waiting', undefined, { timeout: 20_000 });
    // The checkpoint of turn 1 lists the changed file.
    await page.locator('#details li', { hasText: 'notes.txt' }).first().waitFor({ timeout: 20_000 });
    await page.locator('.tool.ok', { hasText: 'write_to_file' }).waitFor();

    const shot = join(shots, 'approval.png');
    await page.screenshot({ path: shot });
    expect(existsSync(shot)).toBe(true);
    const png = await readFile(shot);
    const size = pngSize(png);
    expect(size).toEqual({ width: 1400, height: 900 });
    expect((await stat(shot)).size).toBeGreaterThan(20_000);

    // The list agrees: waiting, with the cost so far.
    const row = page.locator(`#convs tr[data-id="${id}"]`);
    await page.waitForFunction((cid) => document.querySelector(`#convs tr[data-id="${cid}"] .status .badge`)?.textContent === 'waiting', id, {
      timeout: 20_000,
    });
    expect(await row.locator('.cost').textContent()).toMatch(/^\$0\.\d{4}$/);
    expect(await row.locator('.cost').textContent()).not.toBe('$0.0000');

    // Approve in the page; the conversation completes and the page says so.
    await page.locator('#approve').click();
    await page.locator('#final[data-status="completed"]').waitFor({ timeout: 60_000 });
    const result = await conversationResult(handle);
    expect(result.status).toBe('completed');
    await page.waitForFunction(() => document.querySelector('#status .badge')?.textContent === 'completed', undefined, { timeout: 20_000 });
    expect(await page.locator('#pending').textContent()).toBe('');
    expect(await page.locator('.tool', { hasText: 'execute_command' }).count()).toBe(1);
    await page.screenshot({ path: join(shots, 'completed.png'), fullPage: true });

    // The list shows the conversation with its status and cost (it refreshes by itself).
    await page.waitForFunction((cid) => document.querySelector(`#convs tr[data-id="${cid}"] .status .badge`)?.textContent === 'completed', id, {
      timeout: 20_000,
    });
    const stored = (await h.store.getConversation(id))!;
    expect(stored.costUsd).toBeGreaterThan(0);
    expect(await row.locator('.cost').textContent()).toBe(`$${stored.costUsd.toFixed(4)}`);
    expect(await row.locator('.turns').textContent()).toBe(String(stored.turns));
    expect(await page.locator('#cost').textContent()).toBe(`$${stored.costUsd.toFixed(4)}`);
    expect(errors).toEqual([]);
    await page.close();
    console.log(`screenshots in ${shots}`);
  });
});

describe('a workspace that moved to another host (Chromium)', () => {
  // Its own harness without an in-process worker: two child workers are the hosts (as
  // test/integration/fleet.test.ts runs them), so the workspace is placed on one and moves.
  let fleet: Harness;
  let fleetUi: UiServer;
  const hosts: ChildWorker[] = [];
  beforeAll(async () => {
    fleet = await createHarness({ worker: false });
    fleetUi = await startUiServer({ store: fleet.store, client: fleet.client, port: 0, token: { token: TOKEN, name: 'test-operator', source: 'env' } });
  });
  afterAll(async () => {
    await stopChildWorkers(hosts);
    await fleetUi?.close();
    await fleet?.close();
  });
  const host = async (name: string) => {
    const workspaces = await tempDir(`agentrun-ui-ws-${name}-`);
    hosts.push(await startChildWorker(fleet, { AGENTRUN_HOST_ID: `${name}-${fleet.taskQueue}`, AGENTRUN_WORKSPACES: workspaces }));
    return { worker: hosts.at(-1)!, workspaces };
  };

  it('shows the host and directory holding it now and the path it started with, as `list` does', async () => {
    const workspace = await tempRepo({ 'README.md': 'hello\n' });
    const model = await scriptModel({
      turns: [
        { say: '<execute_command>\n<command>echo ran >> side.txt; sleep 300</command>\n<requires_approval>false</requires_approval>\n</execute_command>' },
        { say: '<attempt_completion>\n<result>done</result>\n</attempt_completion>' },
      ],
    });
    const a = await host('UA');
    const id = uid('moved');
    const handle = await fleet.start({ id, task: 'move', workspace, config: { model, approval: 'never', heartbeatTimeoutMs: 2000, hostTimeoutMs: 3000 } });
    const b = await host('UB');
    const until = Date.now() + 90_000;
    while (!existsSync(join(workspace, 'side.txt'))) {
      if (Date.now() > until) throw new Error('the command never started on host UA');
      await new Promise((r) => setTimeout(r, 100));
    }
    // Host UA dies with its disk: UB rebuilds the workspace from the stored bundles in its own directory.
    await a.worker.kill('SIGKILL');
    await rm(workspace, { recursive: true, force: true });
    expect(((await handle.result()) as ConversationResult).status).toBe('completed');
    const restored = join(b.workspaces, id);
    const line = `${restored} on host UB-${fleet.taskQueue} (first placed at ${workspace})`;
    // `agentrun list`'s line for it, from the same shared code.
    const listed = (await listConversations({ client: fleet.client, store: fleet.store, searchAttributes: false }, { limit: 1000 })).find(
      (r) => r.conversationId === id,
    )!;
    expect(summaryWhere(listed)).toBe(line);

    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(fleetUi.loginUrl);
    await page.goto(`${fleetUi.url}c/${encodeURIComponent(id)}`);
    await page.locator('#where').waitFor({ timeout: 20_000 });
    expect(await page.locator('#where').textContent()).toBe(line);
    const row = page.locator(`#convs tr[data-id="${id}"] .ws`);
    await row.waitFor({ timeout: 20_000 });
    expect(await row.textContent()).toContain(` · ${line}`);
    // The repository filter finds it by the directory it is in now, and by the one it started in.
    await page.fill('#repoFilter', restored);
    expect(await page.locator(`#convs tr[data-id="${id}"]`).isHidden()).toBe(false);
    await page.fill('#repoFilter', workspace);
    expect(await page.locator(`#convs tr[data-id="${id}"]`).isHidden()).toBe(false);
    expect(errors).toEqual([]);
    await page.close();
  }, 300_000);
});

describe('API', () => {
  let id: string;
  beforeAll(async () => {
    const workspace = await tempRepo();
    const model = await scriptModel({ turns: [{ say: 'Done.\n<attempt_completion>\n<result>ok</result>\n</attempt_completion>' }] });
    const r = await h.run({ task: 'api', workspace, config: { model } });
    id = r.conversationId;
  });

  async function sse(path: string, headers: Record<string, string> = {}) {
    const res = await authFetch(new URL(path, ui.url), { headers: { accept: 'text/event-stream', ...headers } });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const body = await res.text(); // ends after `finished`
    const events = body
      .split('\n\n')
      .filter((b) => b.includes('data: '))
      .map((b) => ({
        id: /^id: (\d+)$/m.exec(b)?.[1],
        event: /^event: (.+)$/m.exec(b)?.[1] ?? 'message',
        data: JSON.parse(/^data: (.*)$/m.exec(b)![1]!),
      }));
    return events;
  }

  it('serves the live stream as SSE, resumable by offset and Last-Event-ID', async () => {
    const all = await sse(`/api/conversations/${id}/events`);
    const msgs = all.filter((e) => e.event === 'message');
    expect(msgs[0]!.data.type).toBe('conversation_started');
    expect(msgs.at(-1)!.data.type).toBe('finished');
    expect(all.at(-1)!.event).toBe('end');
    for (const m of msgs) expect(Number(m.id)).toBe(m.data.offset);
    const mid = msgs[Math.floor(msgs.length / 2)]!;
    const fromQuery = await sse(`/api/conversations/${id}/events?from=${mid.id}`);
    const fromHeader = await sse(`/api/conversations/${id}/events?from=0`, { 'last-event-id': mid.id! });
    const after = msgs.filter((m) => Number(m.id) > Number(mid.id)).map((m) => m.id);
    expect(fromQuery.filter((e) => e.event === 'message').map((e) => e.id)).toEqual(after);
    expect(fromHeader.filter((e) => e.event === 'message').map((e) => e.id)).toEqual(after);
  });

  it('lists and describes conversations', async () => {
    const list = (await (await authFetch(new URL('/api/conversations?status=completed', ui.url))).json()) as {
      conversations: { id: string; status: string; costUsd: number; turns: number; outcome: unknown }[];
    };
    const c = list.conversations.find((x) => x.id === id)!;
    // Its outcome, read back from Temporal as `list` and `inspect` do (no branch: not a repository job).
    expect(c).toMatchObject({ status: 'completed', turns: 1, outcome: { status: 'completed' }, outcomeText: '' });
    expect(c.costUsd).toBeGreaterThan(0);
    expect(list.conversations.every((x) => x.status === 'completed')).toBe(true);
    // The host holding the workspace and its disk use: none for this one (its worker polls no host
    // queue, and it changed no file); what a host records (test/integration/fleet.test.ts) is shown.
    type Listed = { conversations: { id: string; host: string | null; diskBytes: number | null }[] };
    const listed = async () => ((await (await authFetch(new URL('/api/conversations', ui.url))).json()) as Listed).conversations.find((x) => x.id === id)!;
    expect(await listed()).toMatchObject({ host: null, diskBytes: null });
    await h.store.putWorkspaceUsage(id, { host: 'host-7', workspace: '/w', diskBytes: 123_456 });
    expect(await listed()).toMatchObject({ host: 'host-7', diskBytes: 123_456 });
    const detail = (await (await authFetch(new URL(`/api/conversations/${id}`, ui.url))).json()) as {
      conversation: { id: string; status: string };
      state: unknown;
    };
    expect(detail.conversation).toMatchObject({ id, status: 'completed', outcome: { status: 'completed' } });
    expect(detail.state).toBeNull();
  });

  it("describes setup and verify: their commands, outcomes and the end of setup's log", async () => {
    const workspace = await tempRepo();
    const model = await scriptModel({ turns: [{ say: '<attempt_completion>\n<result>ok</result>\n</attempt_completion>' }] });
    const r = await h.run({ task: 'env', workspace, config: { model, setup: ['echo set up here'], verify: 'true' } });
    expect(r.status).toBe('completed');
    const detail = (await (await authFetch(new URL(`/api/conversations/${r.conversationId}`, ui.url))).json()) as {
      environment: { setup?: { commands: string[]; log: string; finished?: { ok: boolean } }; verify: { command: string; passed: boolean }[] };
    };
    expect(detail.environment.setup).toMatchObject({ commands: ['echo set up here'], finished: { ok: true } });
    expect(detail.environment.setup!.log).toContain('set up here');
    expect(detail.environment.verify).toMatchObject([{ command: 'true', passed: true }]);
  });

  it('answers with clear JSON errors', async () => {
    const post = (path: string, body: string, type = 'application/json', extra: Record<string, string> = {}) =>
      authFetch(new URL(path, ui.url), { method: 'POST', headers: { 'content-type': type, ...extra }, body });
    let r = await post(`/api/conversations/${id}/approve`, 'callId=x', 'application/x-www-form-urlencoded');
    expect(r.status).toBe(415);
    expect(((await r.json()) as { error: string }).error).toMatch(/application\/json/);
    r = await post(`/api/conversations/${id}/approve`, '{}', 'application/json', { origin: 'http://evil.example' });
    expect(r.status).toBe(403);
    r = await post(`/api/conversations/${id}/answer`, '{not json');
    expect(r.status).toBe(400);
    r = await post(`/api/conversations/${id}/answer`, '{}');
    expect(r.status).toBe(400);
    expect(((await r.json()) as { error: string }).error).toMatch(/"text" is required/);
    r = await post(`/api/conversations/${id}/approve`, '{}');
    expect(r.status).toBe(409);
    expect(((await r.json()) as { error: string }).error).toMatch(/not running any more/);
    r = await post(`/api/conversations/nope-${Date.now()}/cancel`, '{}');
    expect(r.status).toBe(404);
    r = await authFetch(new URL(`/api/conversations/nope-${Date.now()}`, ui.url));
    expect(r.status).toBe(404);
    r = await authFetch(new URL(`/api/conversations/${id}/events?from=abc`, ui.url));
    expect(r.status).toBe(400);
  });

  it('tells a running conversation that nothing waits for approval', async () => {
    const workspace = await tempRepo();
    const model = await scriptModel({
      turns: [
        { say: 'thinking slowly ' + 'x'.repeat(200), chunk: 2, delay_ms: 50 },
        { say: '<attempt_completion>\n<result>ok</result>\n</attempt_completion>' },
      ],
    });
    const handle = await h.start({ task: 'slow', workspace, config: { model } });
    await h.waitForState(handle.workflowId, (s) => s.turn >= 1);
    const r = await authFetch(new URL(`/api/conversations/${handle.workflowId}/approve`, ui.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(r.status).toBe(409);
    expect(((await r.json()) as { error: string }).error).toMatch(/no tool call is waiting/);
    const c = await authFetch(new URL(`/api/conversations/${handle.workflowId}/cancel`, ui.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ reason: 'test over', now: true }),
    });
    expect(c.status).toBe(200);
    expect((await conversationResult(handle)).status).toBe('cancelled');
  });
});

describe('operators are authenticated (Chromium)', () => {
  it('refuses the page without the token, logs in with it, and needs the CSRF token on POST', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    expect((await page.goto(ui.url))!.status()).toBe(401);
    expect((await page.goto(`${ui.url}api/conversations`))!.status()).toBe(401);
    expect((await page.goto(`${ui.url}?token=wrong`))!.status()).toBe(401);
    // The page without a session asks for the token, and the form logs in.
    expect((await page.goto(ui.url))!.status()).toBe(401);
    await page.fill('#token', TOKEN);
    const [posted] = await Promise.all([page.waitForResponse((r) => r.url().endsWith('/login')), page.click('#login')]);
    expect(posted.status(), await posted.text().catch(() => '')).toBe(303);
    await page.locator('#convs').waitFor();
    expect(await page.locator('#operator').textContent()).toBe('signed in as test-operator');
    await context.clearCookies();
    const ok = await page.goto(ui.loginUrl);
    expect(ok!.status()).toBe(200);
    expect(page.url()).toBe(ui.url); // the token left the address bar
    const cookie = (await context.cookies()).find((c) => c.name === 'agentrun_ui')!;
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
    expect(cookie.value).not.toContain(TOKEN); // a session id, not the token
    await page.locator('#convs').waitFor();
    const statuses = await page.evaluate(async () => {
      const post = (headers: Record<string, string>) =>
        fetch('/api/conversations/nope/cancel', { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: '{}' }).then(
          (r) => r.status,
        );
      const csrf = document.querySelector<HTMLMetaElement>('meta[name="csrf-token"]')!.content;
      return { without: await post({}), wrong: await post({ 'x-csrf-token': 'forged' }), with: await post({ 'x-csrf-token': csrf }) };
    });
    // Without or with a wrong CSRF token: refused; with it, the request reaches the API (no such conversation).
    expect(statuses).toEqual({ without: 403, wrong: 403, with: 404 });
    await context.close();
  });

  it('refuses a Host that is not this server (DNS rebinding)', async () => {
    const port = new URL(ui.url).port;
    // The attacker's name resolves to 127.0.0.1, as after a DNS rebinding.
    const rebound = await chromium.launch({ executablePath: CHROMIUM, args: [...ARGS, '--host-resolver-rules=MAP rebind.example 127.0.0.1'] });
    try {
      const page = await rebound.newPage();
      expect((await page.goto(`http://rebind.example:${port}/?token=${TOKEN}`))!.status()).toBe(403);
      expect((await page.goto(`http://rebind.example:${port}/api/conversations`))!.status()).toBe(403);
      expect((await page.goto(`http://localhost:${port}/?token=${TOKEN}`))!.status()).toBe(200);
    } finally {
      await rebound.close();
    }
    const r = await fetch(new URL('/healthz', ui.url));
    expect(r.status).toBe(200);
  });

  it('shows the whole command to approve, with a marker and a way to see the rest when long', async () => {
    const workspace = await tempRepo();
    const long = 'echo ' + Array.from({ length: 400 }, (_, i) => `word${i}`).join(' ') + ' && rm -rf /tmp/agentrun-ui-never';
    const model = await scriptModel({
      turns: [
        { tool_calls: [{ name: 'execute_command', arguments: { command: long, requires_approval: true } }] },
        { tool_calls: [{ name: 'attempt_completion', arguments: { result: 'done' } }] },
      ],
    });
    const handle = await h.start({ task: 'long command', workspace, config: { model, toolFormat: 'native' } });
    const page = await browser.newPage();
    await page.goto(ui.loginUrl);
    await page.goto(`${ui.url}c/${encodeURIComponent(handle.workflowId)}`);
    await page.locator('#approvalCard #showAll').waitFor({ timeout: 60_000 });
    expect(await page.locator('#showAll').textContent()).toMatch(new RegExp(`${long.length - 2000} more characters not shown`));
    expect(await page.locator('#callText').textContent()).toBe(long.slice(0, 2000));
    await page.locator('#showAll').click();
    expect(await page.locator('#callText').textContent()).toBe(long);
    await page.locator('#deny').click();
    expect(((await handle.result()) as ConversationResult).status).toBe('completed');
    await page.close();
  });
});
