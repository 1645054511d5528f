// The command sandbox with the real bwrap: policies, hidden secrets, a fresh /proc, the network,
// resource limits, and no process left when the worker is killed.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS, effectiveSandbox, probeSandbox, type SandboxSettings } from '../../src/sandbox/index.js';
import { runTool, type ToolContext } from '../../src/tools/index.js';
import { EgressProxy, setEgressProxy } from '../../src/sandbox/proxy.js';
import { processesWith } from '../helpers/processes.js';
import { tempDirSync } from '../helpers/temp.js';

let ws: string;
let outside: string;
let home: string;
let server: Server;
let port: number;
beforeAll(async () => {
  ws = tempDirSync('agentrun-sbx-');
  execFileSync('git', ['init', '-q', ws]);
  // Outside the workspace and outside /tmp (which is private in the sandbox anyway).
  outside = tempDirSync('agentrun-outside-', '/var/tmp');
  writeFileSync(path.join(outside, 'canary'), 'canary-outside');
  home = tempDirSync('agentrun-home-', '/var/tmp');
  writeFileSync(path.join(home, 'dev.json'), '{"databaseUrl":"postgres://u:canary-pw@h/db"}');
  server = createServer((_req, res) => res.end('reached-the-host'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
  for (const d of [ws, outside, home]) rmSync(d, { recursive: true, force: true });
});

const sandbox = (s: Partial<SandboxSettings> = {}): SandboxSettings => ({ policy: 'workspace-write', network: 'off', env: [], home, ...s });
const run = (command: string, ctx: Partial<ToolContext> = {}, timeout = 60) =>
  runTool('execute_command', { requires_approval: 'false', command, timeout_seconds: String(timeout) }, { workspace: ws, sandbox: sandbox(), ...ctx });

describe('sandbox policies', () => {
  it('workspace-write: writes in the workspace land, writes anywhere else fail', async () => {
    const r = await run(`echo hi > in.txt && cat in.txt; echo x > ${outside}/canary; echo y > ${outside}/new; touch /etc/agentrun-x; echo done`);
    expect(r.output).toContain('hi\n');
    expect(readFileSync(path.join(ws, 'in.txt'), 'utf8')).toBe('hi\n');
    expect(r.output).toMatch(/Read-only file system/);
    expect(readFileSync(path.join(outside, 'canary'), 'utf8')).toBe('canary-outside');
    expect(existsSync(path.join(outside, 'new'))).toBe(false);
    expect(existsSync('/etc/agentrun-x')).toBe(false);
  });

  it('leaves a workspace that is not a git repository without a .git (its checkpoints live under AGENTRUN_HOME)', async () => {
    const plain = tempDirSync('agentrun-plain-');
    try {
      const r = await run('echo ok > made.txt && echo done', { workspace: plain });
      expect(r.output).toContain('done');
      expect(readFileSync(path.join(plain, 'made.txt'), 'utf8')).toBe('ok\n');
      expect(existsSync(path.join(plain, '.git'))).toBe(false);
    } finally {
      rmSync(plain, { recursive: true, force: true });
    }
  });

  it('read-only: the workspace cannot be written, only read; plan mode means read-only', async () => {
    writeFileSync(path.join(ws, 'ro.txt'), 'before');
    const r = await run('cat ro.txt; echo after > ro.txt', { sandbox: sandbox({ policy: 'read-only' }) });
    expect(r.ok).toBe(false);
    expect(r.output).toContain('before');
    expect(r.output).toMatch(/Read-only file system/);
    expect(readFileSync(path.join(ws, 'ro.txt'), 'utf8')).toBe('before');
    expect(effectiveSandbox({ sandbox: 'workspace-write', planMode: true }).policy).toBe('read-only');
    expect(effectiveSandbox({ sandbox: 'off', planMode: true }).policy).toBe('off');
    expect(effectiveSandbox({}).policy).toBe('workspace-write');
  });

  it('a private /tmp: the host /tmp (and the workspace next to it) stay apart', async () => {
    const sibling = tempDirSync('agentrun-sibling-');
    writeFileSync(path.join(sibling, 'f'), 'sibling');
    const r = await run(`ls ${sibling} 2>&1; echo t > /tmp/mine && cat /tmp/mine`);
    expect(r.output).toMatch(/No such file or directory/);
    expect(r.output).toContain('t\n');
    expect(existsSync('/tmp/mine')).toBe(false);
    rmSync(sibling, { recursive: true });
  });

  it('hides the worker home, AGENTRUN_HOME and the checkpoint refs stay read-only', async () => {
    const r = await run(`ls -A ${os.homedir()} | wc -l; cat ${home}/dev.json; echo HOME=$HOME; touch .git/refs/agentrun/forged && echo forged`);
    expect(r.output).toMatch(/^0$/m);
    expect(r.output).not.toContain('canary-pw');
    expect(r.output).toContain('HOME=/tmp/home');
    expect(r.output).not.toMatch(/^forged$/m);
    expect(existsSync(path.join(ws, '.git/refs/agentrun/forged'))).toBe(false);
  });

  it('a fresh /proc in a new PID namespace: no worker process, no worker environment', async () => {
    process.env.AGENTRUN_TEST_CANARY = 'canary-env-value';
    try {
      const r = await run(
        'ls /proc | grep -c "^[0-9]"; cat /proc/1/environ /proc/$PPID/environ | tr "\\0" "\\n"; env; kill -0 ' + process.pid + ' && echo SEES-WORKER',
      );
      expect(Number(/^(\d+)$/m.exec(r.output)![1])).toBeLessThan(10);
      expect(r.output).not.toContain('canary-env-value');
      expect(r.output).not.toContain('SEES-WORKER');
    } finally {
      delete process.env.AGENTRUN_TEST_CANARY;
    }
  });

  it("network off cannot reach a server on the host loopback; --network on goes through the proxy, which refuses the worker's loopback", async () => {
    const cmd = `curl -sS -m 3 http://127.0.0.1:${port}/`;
    const off = await run(cmd);
    expect(off.ok).toBe(false);
    expect(off.output).not.toContain('reached-the-host');
    const on = await run(cmd, { sandbox: sandbox({ network: 'on' }) });
    expect(on.output).not.toContain('reached-the-host');
    expect(on.output).toContain('agentrun egress proxy: 127.0.0.1 is a loopback address');
    // With the test-only allowance the same loopback server stands for a public host.
    setEgressProxy(new EgressProxy({ allowLoopbackPorts: [port] }));
    try {
      const allowed = await run(cmd, { sandbox: sandbox({ network: 'on' }) });
      expect(allowed.ok).toBe(true);
      expect(allowed.output).toContain('reached-the-host');
    } finally {
      setEgressProxy(undefined);
    }
  });

  it('off runs unconfined, as asked', async () => {
    const r = await run(`test -e /proc/${process.pid} && echo SEES-WORKER`, { sandbox: sandbox({ policy: 'off' }) });
    expect(r.output).toContain('SEES-WORKER');
    expect(r.meta?.sandbox).toBe('off');
  });
});

describe('limits', () => {
  it('yes > big ends at the file size limit', async () => {
    const r = await run('yes > big', { limits: { ...DEFAULT_LIMITS, fileSizeKb: 10 * 1024 } });
    expect(r.ok).toBe(false);
    expect(statSync(path.join(ws, 'big')).size).toBeLessThanOrEqual(10 * 1024 * 1024);
    rmSync(path.join(ws, 'big'));
  });

  it('a memory hog meets the address-space limit in its own process: the command fails at once, the worker keeps serving', async () => {
    // Asks for 4 GiB under a 1 GiB limit: refused by the kernel before any page is touched (safe on a shared machine).
    const hog = `node -e "const a=[]; for (let i=0;i<64;i++) a.push(new Uint8Array(64<<20).fill(1)); console.log('hog-'+'survived')"`;
    const r = await run(hog, { limits: { ...DEFAULT_LIMITS, addressSpaceKb: 1024 * 1024 } }, 30);
    expect(r.ok).toBe(false);
    expect(r.output).not.toContain('hog-survived');
    expect(r.output).toMatch(/Array buffer allocation failed|out of memory/i);
    expect(process.memoryUsage().rss).toBeLessThan(2 * 1024 ** 3);
    expect((await run('echo still-works')).output).toContain('still-works');
  });

  it("memory hogs in many processes, each under its address-space limit, meet the command's memory limit together: the kernel kills within the command, the worker keeps serving", async () => {
    // Eight processes of 64 MiB each (touched, so resident) against 192 MiB for the command: at most 256 MiB on a shared machine.
    const one = `node -e "const a=new Uint8Array(64<<20).fill(1); setTimeout(()=>console.log('hog-'+'alive', a.length), 3000)"`;
    const hogs = `for i in 1 2 3 4 5 6 7 8; do ${one} & done; wait; echo all-waited`;
    const r = await run(hogs, { limits: { ...DEFAULT_LIMITS, memoryKb: 192 * 1024 } }, 60);
    const alive = r.output.split('hog-alive').length - 1;
    // Without a memory cgroup (an unprivileged worker) all eight live; with one, some were killed.
    if (process.getuid?.() === 0) expect(alive, r.output).toBeLessThan(8);
    expect(r.output).toContain('all-waited');
    expect((await run('echo still-works')).output).toContain('still-works');
  });

  it('a fork bomb ends the command, not the worker, and leaves nothing behind', async () => {
    const t0 = Date.now();
    const r = await run('bomb() { sleep 304.5 & bomb | bomb & }; bomb; sleep 100', { limits: { ...DEFAULT_LIMITS, processes: 200 } }, 5);
    expect(r.ok).toBe(false);
    expect(Date.now() - t0).toBeLessThan(20_000);
    await new Promise((res) => setTimeout(res, 300));
    expect(processesWith('sleep 304.5')).toEqual([]);
    expect((await run('echo still-works')).output).toContain('still-works');
  });
});

describe('the worker killed mid-command', () => {
  it('SIGKILL of the worker leaves no process of the command and nothing writing to the workspace', async () => {
    const command = 'sleep 305.5 & while true; do date >> ticks; sleep 0.05; done';
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, '../helpers/run-command.ts'), ws, command], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      await new Promise<void>((res) => child.stdout!.on('data', (d: Buffer) => d.toString().includes('started') && res()));
      expect(processesWith('sleep 305.5').length).toBeGreaterThan(0);
    } finally {
      child.kill('SIGKILL');
    }
    await new Promise((res) => child.once('exit', res));
    await new Promise((res) => setTimeout(res, 500));
    expect(processesWith('sleep 305.5')).toEqual([]);
    const size = statSync(path.join(ws, 'ticks')).size;
    await new Promise((res) => setTimeout(res, 500));
    expect(statSync(path.join(ws, 'ticks')).size).toBe(size);
  });
});

describe('the worker start check', () => {
  it('passes here, and names the fixes when bwrap is missing', () => {
    expect(probeSandbox()).toEqual({ ok: true });
    const missing = probeSandbox('/nonexistent/bwrap');
    expect(missing.ok).toBe(false);
    expect(missing.error).toMatch(/bwrap is not installed/);
    expect(missing.error).toContain('apt-get install bubblewrap');
    expect(missing.error).toContain('--sandbox off');
    expect(missing.error!.split('\n')).toHaveLength(1);
  });
});
