// Operators are who they say: per-operator tokens (an operators file of name:sha256 lines) traded
// for expiring server-side sessions on the web page, bearer tokens for programs, the recorded
// approver taken from the token, never from the request; approvals that name the arguments they
// saw (argsHash); and the CLI's approve/deny that needs the token once operators are configured.
// Real HTTP, a real Temporal worker and real conversations; the CLI as a child process.
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { argsHash } from '../../src/turn/calls.js';
import { UiAuth } from '../../src/ui/auth.js';
import { startUiServer, type UiServer } from '../../src/ui/server.js';
import { addOperator, Operators, parseOperators } from '../../src/ui/operators.js';
import type { ConversationResult, ConversationState } from '../../workflows/api.js';
import { createHarness, scriptModel, tempRepo, type Harness } from '../helpers/harness.js';
import { tempDir } from '../helpers/temp.js';
import { csrfOf, login } from '../helpers/ui-session.js';
import { runCli } from '../helpers/dist.js';

const _ROOT = fileURLToPath(new URL('../..', import.meta.url));
const _exec = promisify(execFile);

let h: Harness;
let ui: UiServer;
let file: string;
let alice: string;
let bob: string;

beforeAll(async () => {
  h = await createHarness();
  file = join(await tempDir('agentrun-ops-'), 'operators');
  alice = addOperator(file, 'alice').token;
  bob = addOperator(file, 'bob').token;
  ui = await startUiServer({ store: h.store, client: h.client, port: 0, operators: Operators.load(file) });
});
afterAll(async () => {
  await ui?.close();
  await h?.close();
});

/** A conversation waiting on one command that needs approval, then finishing. */
async function waitingOn(command: string, tenant?: string) {
  const workspace = await tempRepo();
  const model = await scriptModel({
    turns: [
      { say: `<execute_command>\n<command>${command}</command>\n<requires_approval>true</requires_approval>\n</execute_command>` },
      { say: '<attempt_completion>\n<result>done</result>\n</attempt_completion>' },
    ],
  });
  const handle = await h.start({ task: 'needs approval', workspace, config: { model, ...(tenant ? { tenant } : {}) } });
  const state = await h.waitForState(handle.workflowId, (s) => s.pendingApproval !== undefined, 60_000);
  return { handle, id: handle.workflowId, pending: state.pendingApproval! };
}

const decided = async (id: string) =>
  (await h.store.readStream(id, 0, 10_000)).map((r) => r.event).filter((e) => e.type === 'approval_decided') as unknown as {
    callId: string;
    approved: boolean;
    by?: string;
  }[];

describe('operators on the web page', () => {
  it('records the operator of the session or bearer token, never a name in the body; a wrong argsHash is refused and the call stays pending', async () => {
    const [one, two] = await Promise.all([waitingOn('sudo echo one'), waitingOn('sudo echo two')]);
    expect(one.pending.argsHash).toMatch(/^[0-9a-f]{12}$/);
    // The hash is over the call's arguments, computed where the calls are summarised.
    expect(one.pending.argsHash).toBe(argsHash({ command: 'sudo echo one', requires_approval: true }));
    expect(two.pending.argsHash).not.toBe(one.pending.argsHash);

    // Alice logs in with the form: the cookie is a session id, not her token.
    const { cookie, setCookie } = await login(ui, alice);
    expect(setCookie).toMatch(/; HttpOnly/);
    expect(setCookie).toMatch(/; SameSite=Strict/);
    expect(setCookie).toMatch(/; Path=\//);
    expect(setCookie).not.toMatch(/Secure/); // plain http, no --secure-cookie
    expect(setCookie).not.toContain(alice);
    expect(setCookie).not.toContain(encodeURIComponent(alice));
    const page = await (await fetch(ui.url, { headers: { cookie } })).text();
    expect(page).toContain('signed in as alice');
    const csrf = await csrfOf(ui, cookie);
    const post = (id: string, what: string, body: unknown, headers: Record<string, string>) =>
      fetch(new URL(`/api/conversations/${id}/${what}`, ui.url), {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
    const asAlice = { cookie, 'x-csrf-token': csrf };

    // The page shows the pending call with its hash.
    const detail = (await (await fetch(new URL(`/api/conversations/${one.id}`, ui.url), { headers: { cookie } })).json()) as {
      state: { pendingApproval: { callId: string; argsHash: string } };
    };
    expect(detail.state.pendingApproval).toMatchObject({ callId: one.pending.callId, argsHash: one.pending.argsHash });

    // A stale or forged argsHash: refused, nothing decided, the call still waits.
    let r = await post(one.id, 'approve', { callId: one.pending.callId, argsHash: 'deadbeef0000' }, asAlice);
    expect(r.status).toBe(409);
    expect(((await r.json()) as { error: string }).error).toMatch(/arguments of call .* changed since you looked.*run agentrun pending again/);
    // Approving without the hash is refused too (the page always sends what it rendered).
    r = await post(one.id, 'approve', { callId: one.pending.callId }, asAlice);
    expect(r.status).toBe(400);
    expect(((await r.json()) as { error: string }).error).toMatch(/"argsHash" is required/);
    const still = (await h.client.workflow.getHandle(one.id).query('state')) as ConversationState;
    expect(still.pendingApproval).toMatchObject({ callId: one.pending.callId });
    expect(await decided(one.id)).toEqual([]);

    // Alice approves one (a `by` in the body is ignored); Bob, a program with his bearer token, denies two.
    r = await post(one.id, 'approve', { callId: one.pending.callId, argsHash: one.pending.argsHash, by: 'mallory' }, asAlice);
    expect(r.status, await r.clone().text()).toBe(200);
    expect(await r.json()).toMatchObject({ callId: one.pending.callId, approved: true, by: 'alice' });
    r = await post(two.id, 'deny', { callId: two.pending.callId, argsHash: two.pending.argsHash, reason: 'not today' }, { authorization: `Bearer ${bob}` });
    expect(r.status, await r.clone().text()).toBe(200);
    expect(await r.json()).toMatchObject({ approved: false, by: 'bob' });

    expect(((await one.handle.result()) as ConversationResult).status).toBe('completed');
    expect(((await two.handle.result()) as ConversationResult).status).toBe('completed');
    expect(await decided(one.id)).toMatchObject([{ callId: one.pending.callId, approved: true, by: 'alice' }]);
    expect(await decided(two.id)).toMatchObject([{ callId: two.pending.callId, approved: false, by: 'bob' }]);
    // The workflow history holds the decision with the operator's name, as sent by the server.
    const accepted = (await h.client.workflow.getHandle(one.id).fetchHistory()).events!.flatMap((e) =>
      (e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.args?.payloads ?? []).map((p) =>
        JSON.parse(Buffer.from(p.data!).toString('utf8')),
      ),
    );
    expect(accepted).toEqual([{ callId: one.pending.callId, argsHash: one.pending.argsHash, approved: true, by: 'alice' }]);
  });

  it('refuses unknown tokens with 401, and a page without a session asks for the token', async () => {
    let r = await fetch(new URL('/login', ui.url), {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'token=not-an-operator',
    });
    expect(r.status).toBe(401);
    expect(((await r.json()) as { error: string }).error).toMatch(/unknown token/);
    r = await fetch(new URL('/?token=not-an-operator', ui.url), { redirect: 'manual', headers: { accept: 'text/html' } });
    expect(r.status).toBe(401);
    expect(await r.text()).toContain('name="token"');
    r = await fetch(new URL('/api/conversations', ui.url), { headers: { authorization: 'Bearer not-an-operator' } });
    expect(r.status).toBe(401);
    // A bearer token of the operators file works for programs, with no cookie and no CSRF token.
    r = await fetch(new URL('/api/conversations', ui.url), { headers: { authorization: `Bearer ${bob}` } });
    expect(r.status).toBe(200);
    // A made-up session id is no session.
    r = await fetch(new URL('/api/conversations', ui.url), { headers: { cookie: 'agentrun_ui=' + 'x'.repeat(43) } });
    expect(r.status).toBe(401);
    expect(r.headers.get('set-cookie')).toMatch(/Max-Age=0/);
  });

  it('expires sessions: an old cookie is refused and the page asks for the token again', async () => {
    const short = await startUiServer({ store: h.store, client: h.client, port: 0, operators: Operators.load(file), sessionTtlMs: 1000 });
    try {
      const { cookie, setCookie } = await login(short, alice);
      expect(setCookie).toMatch(/Max-Age=1(;|$)/);
      expect((await fetch(new URL('/api/conversations', short.url), { headers: { cookie } })).status).toBe(200);
      await new Promise((r) => setTimeout(r, 1300));
      const api = await fetch(new URL('/api/conversations', short.url), { headers: { cookie } });
      expect(api.status).toBe(401);
      expect(((await api.json()) as { error: string }).error).toMatch(/session expired/);
      const page = await fetch(short.url, { headers: { cookie, accept: 'text/html' } });
      expect(page.status).toBe(401);
      const html = await page.text();
      expect(html).toMatch(/session expired/);
      expect(html).toContain('<form method="post" action="/login">');
      expect(page.headers.get('set-cookie')).toMatch(/^agentrun_ui=;.*Max-Age=0/);
      // Logging in again works.
      const again = await login(short, alice);
      expect((await fetch(new URL('/api/conversations', short.url), { headers: { cookie: again.cookie } })).status).toBe(200);
    } finally {
      await short.close();
    }
  });

  it('marks the cookie Secure behind https, and in single-token mode the cookie holds a session, not the token', async () => {
    const token = 'single-token-' + Math.random().toString(36).slice(2);
    const single = await startUiServer({ store: h.store, client: h.client, port: 0, token: { token, name: 'carol', source: 'env' }, secureCookie: true });
    try {
      const r = await fetch(single.loginUrl, { redirect: 'manual' });
      expect(r.status).toBe(303);
      const set = r.headers.get('set-cookie')!;
      expect(set).toMatch(/; HttpOnly; SameSite=Strict; Path=\/; Max-Age=43200; Secure$/);
      expect(set).not.toContain(token);
      const cookie = set.split(';')[0]!;
      expect(await (await fetch(single.url, { headers: { cookie } })).text()).toContain('signed in as carol');
      // The operators' tokens mean nothing here.
      expect((await fetch(new URL('/api/conversations', single.url), { headers: { authorization: `Bearer ${alice}` } })).status).toBe(401);
    } finally {
      await single.close();
    }
  });
});

describe('an authenticating proxy on this host (--trusted-user-header)', () => {
  it('takes the user from the header of a loopback peer, with the CSRF token on POSTs, and ignores it from elsewhere', async () => {
    const proxied = await startUiServer({
      store: h.store,
      client: h.client,
      port: 0,
      token: { token: 'unused-' + Math.random(), name: 'nobody', source: 'env' },
      trustedUserHeader: 'X-Forwarded-User',
    });
    try {
      const w = await waitingOn('sudo echo proxied');
      const as = { 'x-forwarded-user': 'erin' };
      const html = await (await fetch(proxied.url, { headers: as })).text();
      expect(html).toContain('signed in as erin');
      const csrf = /name="csrf-token" content="([^"]+)"/.exec(html)![1]!;
      const deny = (headers: Record<string, string>) =>
        fetch(new URL(`/api/conversations/${w.id}/deny`, proxied.url), {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body: JSON.stringify({ callId: w.pending.callId, argsHash: w.pending.argsHash }),
        });
      expect((await deny(as)).status).toBe(403); // no CSRF token: a cross-site form cannot post as erin
      const r = await deny({ ...as, 'x-csrf-token': csrf });
      expect(r.status, await r.clone().text()).toBe(200);
      expect(await r.json()).toMatchObject({ approved: false, by: 'erin' });
      expect(((await w.handle.result()) as ConversationResult).status).toBe('completed');
      expect(await decided(w.id)).toMatchObject([{ approved: false, by: 'erin' }]);
      expect((await fetch(proxied.url, { headers: { 'x-forwarded-user': 'not a name' } })).status).toBe(401);
    } finally {
      await proxied.close();
    }
    // From a peer that is not this host, the header proves nothing.
    const auth = new UiAuth({ token: { token: 't', name: 'n', source: 'env' }, trustedUserHeader: 'X-Forwarded-User' }, new Set());
    const from = (remoteAddress: string) => ({ headers: { 'x-forwarded-user': 'eve' }, socket: { remoteAddress } }) as unknown as IncomingMessage;
    expect(auth.authenticate(from('10.1.2.3'))).toBeUndefined();
    expect(auth.authenticate(from('::ffff:127.0.0.1'))).toMatchObject({ name: 'eve', via: 'proxy' });
  });
});

describe('the operators file', () => {
  it('names the file and the line of a malformed entry', () => {
    expect(() => parseOperators('# ok\nalice:' + 'a'.repeat(64) + '\nbob ' + 'b'.repeat(64) + '\n', '/etc/ops')).toThrow(
      /^\/etc\/ops line 3: expected name:sha256hex/,
    );
    expect(() => parseOperators('alice:xyz\n', 'F')).toThrow(/^F line 1: the hash of alice's token must be 64 hex digits/);
    expect(() => parseOperators(`a:${'c'.repeat(64)}\nb:${'c'.repeat(64)}\n`, 'F')).toThrow(/^F line 2: the same token hash as line 1/);
  });
});

describe('the CLI with an operators file', () => {
  const cli = async (args: string[], env: Record<string, string>) => {
    const home = await tempDir('agentrun-ops-cli-');
    const full = {
      ...process.env,
      TEMPORAL_ADDRESS: h.temporalAddress,
      DATABASE_URL: h.databaseUrl,
      AGENTRUN_DB_SCHEMA: h.schema,
      AGENTRUN_HOME: home,
      AGENTRUN_TASK_QUEUE: h.taskQueue,
      AGENTRUN_LOG_LEVEL: 'warn',
      AGENTRUN_OPERATOR_TOKEN: '',
      ...env,
    };
    return runCli(args, { env: full });
  };

  it('refuses --as without a token, and unknown tokens or a broken file, with one line and exit 2; records the token’s name', async () => {
    const w = await waitingOn('sudo echo cli');
    const ops = { AGENTRUN_OPERATORS: file };
    let r = await cli(['approve', w.id, '--as', 'someone'], ops);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/--as someone is not accepted: operators are configured .*AGENTRUN_OPERATOR_TOKEN or --token-file/);
    r = await cli(['approve', w.id], { ...ops, AGENTRUN_OPERATOR_TOKEN: 'made-up' });
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toMatch(/^agentrun: unknown operator token: its hash is not in /);
    r = await cli(['approve', w.id, '--as', 'alice'], { ...ops, AGENTRUN_OPERATOR_TOKEN: bob });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--as alice does not match your token, which belongs to bob/);
    const broken = join(await tempDir('agentrun-ops-'), 'operators');
    await writeFile(broken, `alice:${'a'.repeat(64)}\nthis is not a line\n`);
    r = await cli(['deny', w.id], { AGENTRUN_OPERATORS: broken, AGENTRUN_OPERATOR_TOKEN: alice });
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe(`agentrun: ${broken} line 2: expected name:sha256hex[:tenant,…] (make one with \`agentrun operator add NAME\`)`);
    expect(((await h.client.workflow.getHandle(w.id).query('state')) as ConversationState).pendingApproval).toMatchObject({ callId: w.pending.callId });

    // `pending` shows the hash; approving with a stale one is refused and the call still waits.
    const seen = await cli(['pending'], { ...ops, AGENTRUN_OPERATOR_TOKEN: alice });
    expect(seen.stdout).toContain(`${w.id}  approval --call ${w.pending.callId} --args-hash ${w.pending.argsHash}: `);
    const tokenFile = join(await tempDir('agentrun-ops-'), 'token');
    await writeFile(tokenFile, alice + '\n', { mode: 0o600 });
    r = await cli(['approve', w.id, '--call', w.pending.callId, '--args-hash', '000000000000', '--token-file', tokenFile], ops);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/changed since you looked.*run agentrun pending again/);
    expect(((await h.client.workflow.getHandle(w.id).query('state')) as ConversationState).pendingApproval).toMatchObject({ callId: w.pending.callId });
    // With her token, Alice's approval is recorded under her name.
    r = await cli(['approve', w.id, '--call', w.pending.callId, '--token-file', tokenFile, '--json'], ops);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout.trim().split('\n').at(-1)!)).toMatchObject({ callId: w.pending.callId, approved: true, by: 'alice' });
    expect(((await w.handle.result()) as ConversationResult).status).toBe('completed');
    expect(await decided(w.id)).toMatchObject([{ approved: true, by: 'alice' }]);
  });

  it("`pending` takes an operator's token as approve does: a tenant-bound operator sees only its tenants' waiting calls, a missing or wrong token is one line and exit 2", async () => {
    const [acme, globex] = await Promise.all([waitingOn('sudo echo acme-canary', 'acme'), waitingOn('sudo echo globex-canary', 'globex')]);
    const f = join(await tempDir('agentrun-ops-'), 'operators');
    const carol = addOperator(f, 'carol', ['acme']).token;
    const admin = addOperator(f, 'admin').token;
    const ops = { AGENTRUN_OPERATORS: f };

    // No token, an unknown one, an unreadable token file: refused before anything is listed.
    for (const [args, env, line] of [
      [['pending'], ops, /^agentrun: operators are configured \(.*\); give your operator token in AGENTRUN_OPERATOR_TOKEN or --token-file FILE$/],
      [['pending'], { ...ops, AGENTRUN_OPERATOR_TOKEN: 'made-up' }, /^agentrun: unknown operator token: its hash is not in /],
      [['pending', '--token-file', join(f, 'absent')], ops, /^agentrun: cannot read --token-file /],
      [['pending', '--operators', join(f, 'absent')], { AGENTRUN_OPERATOR_TOKEN: carol }, /^agentrun: cannot read the operators file /],
    ] as const) {
      const r = await cli([...args], env);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr.trim()).toMatch(line);
      expect(r.stdout).not.toContain('canary');
      expect(r.stdout).not.toContain(acme.id);
    }

    // Carol, bound to acme, sees acme's waiting call and nothing of globex's, text or JSON.
    let r = await cli(['pending'], { ...ops, AGENTRUN_OPERATOR_TOKEN: carol });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`${acme.id}  approval --call ${acme.pending.callId} --args-hash ${acme.pending.argsHash}: `);
    expect(r.stdout).toContain('acme-canary');
    expect(r.stdout).not.toContain(globex.id);
    expect(r.stdout).not.toContain('globex-canary');
    r = await cli(['pending', '--json'], { ...ops, AGENTRUN_OPERATOR_TOKEN: carol });
    const items = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { conversationId: string });
    expect(items.map((i) => i.conversationId)).toEqual([acme.id]);
    // A CLI confined to another tenant and Carol's token see the intersection: nothing.
    r = await cli(['pending'], { ...ops, AGENTRUN_OPERATOR_TOKEN: carol, AGENTRUN_TENANT: 'globex' });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toContain('canary');
    // An administrator's token sees both.
    r = await cli(['pending'], { ...ops, AGENTRUN_OPERATOR_TOKEN: admin });
    expect(r.stdout).toContain(acme.id);
    expect(r.stdout).toContain(globex.id);

    // The SDK's pending goes through the same scope.
    const { createClient } = await import('../../src/client/client.js');
    const sdk = await createClient({ temporal: h.client, database: h.store, taskQueue: h.taskQueue, tenants: 'globex' });
    expect((await sdk.pending()).map((i) => i.conversationId)).toEqual([globex.id]);

    for (const w of [acme, globex]) await w.handle.terminate('test over');
  });

  it('`agentrun operator add` prints a token once and appends its hash', async () => {
    const f = join(await tempDir('agentrun-ops-'), 'operators');
    const r = await cli(['operator', 'add', 'dana', '--operators', f], {});
    expect(r.code, r.stderr).toBe(0);
    const token = r.stdout.trim();
    expect(Operators.load(f).operatorOf(token)?.name).toBe('dana');
    expect(r.stderr).toMatch(/added dana to /);
  });
});
