// Tenants on the web page, the SDK and the CLI's approve/deny: an operator bound to tenants (the
// operators file's `name:sha256:tenant,…`), a page served for one tenant (AGENTRUN_TENANT), an SDK
// client made with `tenants`. The victim (tenant acme) waits for an approval with a canary in its
// transcript and task; the attacker (tenant mallory, its operator and its client) tries to list,
// read, chart, stream and decide it. Each try reads as a conversation that does not exist, nothing
// is decided, and the canary appears in no response the attacker got; acme's own operator and an
// administrator see and decide it. Then the page's other untried surface: a cross-origin POST and
// one without the CSRF token are refused, the stream without a session is refused, and model
// output, a task and tool text made of HTML run no script in a real Chromium.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type AgentrunClient } from '../../src/client/client.js';
import { startUiServer, type UiServer } from '../../src/ui/server.js';
import { addOperator, Operators } from '../../src/ui/operators.js';
import type { ConversationState } from '../../workflows/api.js';
import { CHROMIUM, CHROMIUM_ARGS } from '../helpers/chromium.js';
import { runCli } from '../helpers/dist.js';
import { createHarness, scriptModel, tempRepo, uid, type Harness } from '../helpers/harness.js';
import { tempDir } from '../helpers/temp.js';
import { csrfOf, login } from '../helpers/ui-session.js';

let h: Harness;
let ui: UiServer;
let file: string;
const tokens: Record<'acmeOp' | 'malloryOp' | 'admin', string> = { acmeOp: '', malloryOp: '', admin: '' };
const canary = `canary-${randomBytes(6).toString('hex')}`;
/** Every body and header the attacker was given, for the canary check at the end. */
const seenByAttacker: string[] = [];

beforeAll(async () => {
  h = await createHarness();
  file = join(await tempDir('agentrun-ui-tenants-'), 'operators');
  tokens.acmeOp = addOperator(file, 'acme-op', ['acme']).token;
  tokens.malloryOp = addOperator(file, 'mallory-op', ['mallory', 'mallory-2']).token;
  tokens.admin = addOperator(file, 'admin').token;
  ui = await startUiServer({ store: h.store, client: h.client, port: 0, operators: Operators.load(file) });
});
afterAll(async () => {
  await ui?.close();
  await h?.close();
});

/** A conversation of `tenant` that says `say` and waits on one command needing approval. */
async function waitingOn(tenant: string, say: string, task = 'needs approval') {
  const workspace = await tempRepo();
  const model = await scriptModel({
    turns: [
      { say: `${say}\n<execute_command>\n<command>sudo echo ${tenant}</command>\n<requires_approval>true</requires_approval>\n</execute_command>` },
      { say: '<attempt_completion>\n<result>done</result>\n</attempt_completion>' },
    ],
  });
  const handle = await h.start({ id: uid(tenant), task, workspace, config: { model, tenant } });
  const state = await h.waitForState(handle.workflowId, (s) => s.pendingApproval !== undefined, 60_000);
  return { handle, id: handle.workflowId, pending: state.pendingApproval! };
}

/** A session's cookie and the CSRF token its page carries. */
async function session(server: UiServer, token: string): Promise<{ cookie: string; csrf: string }> {
  const { cookie } = await login(server, token);
  return { cookie, csrf: await csrfOf(server, cookie) };
}

/** A GET or POST as a logged-in browser would send it; the status and the whole body (an SSE stream read until it ends or 2 s). */
async function call(server: UiServer, who: { cookie: string; csrf: string }, path: string, post?: unknown, attacker = false) {
  const r = await fetch(new URL(path, server.url), {
    method: post === undefined ? 'GET' : 'POST',
    headers: { cookie: who.cookie, ...(post === undefined ? {} : { 'content-type': 'application/json', 'x-csrf-token': who.csrf }) },
    body: post === undefined ? undefined : JSON.stringify(post),
    signal: AbortSignal.timeout(30_000),
  });
  let body = '';
  if (r.headers.get('content-type')?.startsWith('text/event-stream')) {
    // A stream the caller may read: take what comes within a moment, enough to hold the transcript's first events.
    const reader = r.body!.getReader();
    const until = Date.now() + 2000;
    while (Date.now() < until) {
      const next = await Promise.race([reader.read(), new Promise<undefined>((res) => setTimeout(res, until - Date.now()))]);
      if (!next || next.done) break;
      body += Buffer.from(next.value).toString('utf8');
    }
    await reader.cancel();
  } else body = await r.text();
  if (attacker) seenByAttacker.push(body, JSON.stringify([...r.headers]));
  return { status: r.status, body };
}

const pendingOf = async (id: string) => ((await h.client.workflow.getHandle(id).query('state')) as ConversationState).pendingApproval;

describe('tenants on the web page, the SDK and approve/deny', () => {
  let victim: Awaited<ReturnType<typeof waitingOn>>;
  let own: Awaited<ReturnType<typeof waitingOn>>;
  beforeAll(async () => {
    [victim, own] = await Promise.all([waitingOn('acme', `I read ${canary} in the secrets`, `keep ${canary} safe`), waitingOn('mallory', 'mine')]);
  });

  it("an operator bound to tenants cannot list, read, chart, stream (SSE) or approve another tenant's conversation: it reads as absent", async () => {
    const mallory = await session(ui, tokens.malloryOp);
    const list = await call(ui, mallory, '/api/conversations?limit=500', undefined, true);
    expect(list.status).toBe(200);
    const ids = (JSON.parse(list.body) as { conversations: { id: string }[] }).conversations.map((c) => c.id);
    expect(ids).toContain(own.id);
    expect(ids).not.toContain(victim.id);

    // The victim's conversation reads exactly as an id that does not exist, on every route.
    const ghost = uid('no-such');
    for (const [suffix, post] of [
      ['', undefined],
      ['/events?from=0', undefined],
      ['/charts', undefined],
      ['/approve', { callId: victim.pending.callId, argsHash: victim.pending.argsHash }],
      ['/deny', { callId: victim.pending.callId, reason: 'mine now' }],
      ['/answer', { text: 'hello' }],
      ['/cancel', { now: true }],
    ] as const) {
      const theirs = await call(ui, mallory, `/api/conversations/${victim.id}${suffix}`, post, true);
      const none = await call(ui, mallory, `/api/conversations/${ghost}${suffix}`, post, true);
      expect(theirs.status, `${suffix}: ${theirs.body}`).toBe(404);
      expect(none.status, `${suffix}: ${none.body}`).toBe(404);
      expect(theirs.body.replace(victim.id, 'ID')).toBe(none.body.replace(ghost, 'ID'));
    }
    // Nothing was decided or cancelled: the victim's call still waits, undecided.
    expect(await pendingOf(victim.id)).toMatchObject({ callId: victim.pending.callId });
    expect((await h.client.workflow.getHandle(victim.id).describe()).status.name).toBe('RUNNING');

    // Its own conversation it reads, streams and decides.
    const mine = await call(ui, mallory, `/api/conversations/${own.id}/events?from=0`, undefined, true);
    expect(mine.status).toBe(200);
    expect(mine.body).toContain('mine');
    // Eval sets span tenants: an administrator's view.
    expect((await call(ui, mallory, '/api/evals', undefined, true)).status).toBe(403);
    const denied = await call(ui, mallory, `/api/conversations/${own.id}/deny`, { callId: own.pending.callId, reason: 'no' }, true);
    expect(denied.status, denied.body).toBe(200);
  });

  it('a page served for one tenant (AGENTRUN_TENANT) confines even an administrator; bound operators and administrators see theirs', async () => {
    const acmePage = await startUiServer({ store: h.store, client: h.client, port: 0, operators: Operators.load(file), tenants: ['mallory'] });
    try {
      // The administrator's token on a page for tenant mallory: mallory's conversations only.
      const admin = await session(acmePage, tokens.admin);
      const listed = await call(acmePage, admin, '/api/conversations?limit=500', undefined, true);
      expect(listed.body).toContain(own.id);
      expect(listed.body).not.toContain(victim.id);
      expect((await call(acmePage, admin, `/api/conversations/${victim.id}`, undefined, true)).status).toBe(404);
      // acme's operator on mallory's page: bound to acme, served mallory: nothing at all.
      const acme = await session(acmePage, tokens.acmeOp);
      expect((JSON.parse((await call(acmePage, acme, '/api/conversations?limit=500')).body) as { conversations: unknown[] }).conversations).toEqual([]);
      expect((await call(acmePage, acme, `/api/conversations/${victim.id}`)).status).toBe(404);
    } finally {
      await acmePage.close();
    }
    // On the page of every tenant, the administrator and acme's operator see the victim and its canary.
    for (const token of [tokens.admin, tokens.acmeOp]) {
      const who = await session(ui, token);
      const detail = await call(ui, who, `/api/conversations/${victim.id}`);
      expect(detail.status).toBe(200);
      expect(detail.body).toContain(canary);
      expect((await call(ui, who, `/api/conversations/${victim.id}/events?from=0`)).body).toContain(canary);
    }
  });

  it("an SDK client made for tenants cannot list, inspect, watch, query, await or approve another tenant's conversation", async () => {
    const sdk: AgentrunClient = await createClient({ temporal: h.client, database: h.store, taskQueue: h.taskQueue, tenants: 'mallory' });
    try {
      const listed = await sdk.list({ limit: 500 });
      expect(listed.map((c) => c.conversationId)).not.toContain(victim.id);
      expect(listed.map((c) => c.conversationId)).toContain(own.id);
      const absent = new RegExp(`^no conversation with id ${victim.id} of tenant mallory$`);
      await expect(sdk.inspect(victim.id)).rejects.toThrow(absent);
      await expect(sdk.state(victim.id)).rejects.toThrow(absent);
      await expect(sdk.result(victim.id)).rejects.toThrow(absent);
      await expect(sdk.approve(victim.id, { callId: victim.pending.callId, argsHash: victim.pending.argsHash })).rejects.toThrow(absent);
      await expect(sdk.cancel(victim.id)).rejects.toThrow(absent);
      await expect(
        (async () => {
          for await (const e of sdk.watch(victim.id)) seenByAttacker.push(JSON.stringify(e));
        })(),
      ).rejects.toThrow(absent);
      // Starting a conversation for a tenant it does not act for is refused before anything starts.
      await expect(sdk.start({ task: 't', workspace: '/tmp', model: 'x', config: { tenant: 'acme' } })).rejects.toThrow(
        /tenant acme is not one this client acts for \(mallory\)/,
      );
      await expect(createClient({ temporal: h.client, database: h.store, tenants: '../acme' })).rejects.toThrow(/tenant "..\/acme" is refused/);
      expect(await pendingOf(victim.id)).toMatchObject({ callId: victim.pending.callId });
    } finally {
      await sdk.close();
    }
  });

  it('a conversation started but not yet in the store is judged by the tenant it was started for: its own tenant reaches it, another does not', async () => {
    // No worker polls this queue: the first step, which writes the store's row, never runs.
    const idle = uid('idle-queue');
    const [mine, theirs] = await Promise.all(
      (['mallory', 'acme'] as const).map((tenant) =>
        h.start({ id: uid(`unstored-${tenant}`), task: `t ${canary}`, workspace: '/tmp', config: { model: 'x', tenant }, taskQueue: idle }),
      ),
    );
    expect(await h.store.getConversation(mine!.workflowId)).toBeNull();
    const mallory = await session(ui, tokens.malloryOp);
    const own = await call(ui, mallory, `/api/conversations/${mine!.workflowId}`, undefined, true);
    expect(own.status, own.body).toBe(409);
    expect(own.body).toMatch(/has not been recorded in the store yet/);
    const other = await call(ui, mallory, `/api/conversations/${theirs!.workflowId}`, undefined, true);
    expect(other.status, other.body).toBe(404);
    const sdk = await createClient({ temporal: h.client, database: h.store, taskQueue: h.taskQueue, tenants: 'mallory' });
    try {
      await sdk.cancel(mine!.workflowId, 'done here');
      await expect(sdk.cancel(theirs!.workflowId)).rejects.toThrow(/^no conversation with id .* of tenant mallory$/);
    } finally {
      await sdk.close();
    }
    for (const handle of [mine!, theirs!]) await handle.terminate('test over');
  });

  it("the CLI's approve with an operator token bound to tenants, and pending under AGENTRUN_TENANT, touch only theirs; a bad tenant is one line, exit 2", async () => {
    const cli = async (args: string[], env: Record<string, string>) => {
      const full = {
        ...process.env,
        TEMPORAL_ADDRESS: h.temporalAddress,
        DATABASE_URL: h.databaseUrl,
        AGENTRUN_DB_SCHEMA: h.schema,
        AGENTRUN_HOME: await tempDir('agentrun-ui-tenants-cli-'),
        AGENTRUN_TASK_QUEUE: h.taskQueue,
        AGENTRUN_LOG_LEVEL: 'warn',
        AGENTRUN_TENANT: '',
        AGENTRUN_OPERATORS: file,
        ...env,
      };
      const r = await runCli(args, { env: full });
      return { code: r.code, out: r.stdout, err: r.stderr };
    };
    const attack = async (args: string[], env: Record<string, string>) => {
      const r = await cli(args, env);
      seenByAttacker.push(r.out, r.err);
      return r;
    };
    let r = await attack(['approve', victim.id, '--call', victim.pending.callId, '--args-hash', victim.pending.argsHash!], {
      AGENTRUN_OPERATOR_TOKEN: tokens.malloryOp,
    });
    expect(r.code, r.err).toBe(2);
    expect(r.err.trim()).toBe(`agentrun: no conversation with id ${victim.id} of tenants mallory, mallory-2 (see agentrun list)`);
    // `pending` takes an operator's token once operators are configured: none is one line, exit 2.
    r = await attack(['pending', '--json'], { AGENTRUN_TENANT: 'mallory' });
    expect(r.code, r.err).toBe(2);
    expect(r.err.trim()).toMatch(/^agentrun: operators are configured .*give your operator token in AGENTRUN_OPERATOR_TOKEN or --token-file FILE$/);
    for (const env of [{ AGENTRUN_TENANT: 'mallory', AGENTRUN_OPERATOR_TOKEN: tokens.malloryOp }, { AGENTRUN_OPERATOR_TOKEN: tokens.malloryOp }] as Record<
      string,
      string
    >[]) {
      r = await attack(['pending', '--json'], env);
      expect(r.code, r.err).toBe(0);
      expect(r.out).not.toContain(victim.id);
    }
    for (const bad of ['..', 'a b', 'x'.repeat(65), 'acme\nmallory']) {
      r = await cli(['list'], { AGENTRUN_TENANT: bad });
      expect(r.code, r.err).toBe(2);
      expect(r.err.trim().split('\n'), r.err).toHaveLength(1);
      expect(r.err).toMatch(/AGENTRUN_TENANT: tenant .* is refused: a tenant is 1-64 letters/);
    }
    r = await cli(['operator', 'add', 'eve', '--tenant', 'acme/../x'], {});
    expect(r.code, r.err).toBe(2);
    expect(r.err).toMatch(/tenant "acme\/..\/x" is refused/);
    expect(await pendingOf(victim.id)).toMatchObject({ callId: victim.pending.callId });
    // acme's operator decides it, and the record names her.
    r = await cli(['approve', victim.id, '--call', victim.pending.callId, '--args-hash', victim.pending.argsHash!, '--json'], {
      AGENTRUN_OPERATOR_TOKEN: tokens.acmeOp,
    });
    expect(r.code, r.err).toBe(0);
    expect(JSON.parse(r.out.trim().split('\n').at(-1)!)).toMatchObject({ approved: true, by: 'acme-op' });
  });

  it("no canary of the victim's task or transcript is in anything the attacker got", () => {
    expect(seenByAttacker.length).toBeGreaterThan(20);
    for (const text of seenByAttacker) expect(text).not.toContain(canary);
  });
});

describe("the page's untried surface", () => {
  it('refuses a cross-origin POST, a POST without the CSRF token or as a form, and the event stream without a session', async () => {
    const w = await waitingOn('default', 'csrf');
    const admin = await session(ui, tokens.admin);
    const url = new URL(`/api/conversations/${w.id}/approve`, ui.url);
    const body = JSON.stringify({ callId: w.pending.callId, argsHash: w.pending.argsHash });
    const post = (headers: Record<string, string>) => fetch(url, { method: 'POST', headers: { cookie: admin.cookie, ...headers }, body });
    // Another site's page, holding the victim's cookie (a browser sends it) and even the CSRF token.
    let r = await post({ 'content-type': 'application/json', 'x-csrf-token': admin.csrf, origin: 'http://evil.example' });
    expect(r.status).toBe(403);
    expect(await r.text()).toMatch(/cross-origin requests are refused/);
    r = await post({ 'content-type': 'application/json', origin: ui.url.replace(/\/$/, '') });
    expect(r.status).toBe(403);
    expect(await r.text()).toMatch(/missing or wrong CSRF token/);
    // A form a cross-site page can send without a preflight.
    r = await post({ 'content-type': 'text/plain', 'x-csrf-token': admin.csrf });
    expect(r.status).toBe(415);
    expect(await pendingOf(w.id)).toMatchObject({ callId: w.pending.callId });
    // The stream: no cookie, a forged one, a logged-out one: refused before any event.
    const events = new URL(`/api/conversations/${w.id}/events?from=0`, ui.url);
    for (const cookie of [undefined, 'agentrun_ui=forged', admin.cookie.replace(/=.*/, '=' + 'A'.repeat(43))]) {
      const s = await fetch(events, { headers: cookie ? { cookie, accept: 'text/event-stream' } : { accept: 'text/event-stream' } });
      expect(s.status).toBe(401);
      expect(s.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await s.text()).not.toContain('csrf');
    }
    // The same request with the session streams (the refusal above was the session's doing).
    const ok = await call(ui, admin, `/api/conversations/${w.id}/events?from=0`);
    expect(ok.status).toBe(200);
    expect(ok.body).toContain('csrf');
    await w.handle.cancel();
  });

  it('model output, a task and tool text made of HTML are shown as text and run no script (a real Chromium)', async () => {
    const xss = (n: number) => `<img src=x onerror="window.__xss=${n}"><script>window.__xss=${n}</script>`;
    const workspace = await tempRepo();
    const model = await scriptModel({
      turns: [
        {
          say: `look: ${xss(1)} <svg onload="window.__xss=2"></svg>`,
          tool_calls: [{ name: 'execute_command', arguments: { command: `echo '${xss(3)}'`, requires_approval: true } }],
        },
        { tool_calls: [{ name: 'attempt_completion', arguments: { result: `finished ${xss(4)}` } }] },
      ],
    });
    const id = `xss-${randomBytes(4).toString('hex')}`;
    await h.start({ id, task: `task ${xss(5)}`, workspace, config: { model, toolFormat: 'native' } });
    await h.waitForState(id, (s) => s.pendingApproval !== undefined, 60_000);
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    try {
      const page = await browser.newPage();
      const dialogs: string[] = [];
      page.on('dialog', (d) => {
        dialogs.push(d.message());
        void d.dismiss();
      });
      await page.goto(`${ui.url}?token=${encodeURIComponent(tokens.admin)}`);
      await page.goto(`${ui.url}c/${encodeURIComponent(id)}`);
      // The model's words, the pending command and the task all arrive, as the literal text written.
      await page.waitForFunction(() => document.body.innerText.includes('look: <img src=x onerror="window.__xss=1">'), undefined, { timeout: 30_000 });
      await page.waitForFunction(() => document.body.innerText.includes(`echo '<img src=x onerror="window.__xss=3">`), undefined, { timeout: 30_000 });
      await page.waitForFunction(() => document.body.innerText.includes('task <img src=x onerror="window.__xss=5">'), undefined, { timeout: 30_000 });
      const dom = await page.evaluate(() => ({
        xss: (window as unknown as { __xss?: number }).__xss,
        // Elements the text would have made, had it been parsed as HTML.
        imgs: document.querySelectorAll('img[src="x"], img[onerror]').length,
        svgs: document.querySelectorAll('svg[onload]').length,
        scripts: [...document.scripts].filter((s) => s.textContent?.includes('__xss')).length,
      }));
      expect(dom).toEqual({ xss: undefined, imgs: 0, svgs: 0, scripts: 0 });
      expect(dialogs).toEqual([]);
    } finally {
      await browser.close();
      await h.client.workflow.getHandle(id).cancel();
    }
  });
});
