// bench/environment: what the repository environment costs (issue 22).
// Proxy part: the egress proxy's added latency per connection and its throughput, as a command
// sees them: curl inside the real bwrap sandbox (network `on`) → the forwarder on the sandbox's
// loopback → the proxy's Unix socket → the proxy in this process → a loopback HTTP server (in its
// own process, as a remote host would be), beside the same curl run directly on the host.
// Latency: p50 of curl's time_total over N sequential requests for a tiny body, each a new
// connection (plain HTTP through the proxy, and CONNECT with --proxytunnel, the https path).
// Throughput: a 100 MB download, median of R runs. Goals: ≤ 5 ms added at p50, ≥ 0.5× direct.
// The loopback server stands for a public host through the proxy's test-only allowance.
// Run: npx tsx bench/environment.ts [--requests 200] [--runs 3] [--mb 100]
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { EgressProxy, setEgressProxy } from '../src/environment/proxy.js';
import { startCommand, type SandboxSettings } from '../src/sandbox/index.js';

const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const REQUESTS = arg('--requests', 200);
const RUNS = arg('--runs', 3);
const MB = arg('--mb', 100);
const GOAL_ADDED_MS = 5;
const GOAL_THROUGHPUT = 0.5;

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
const median = (xs: number[]) => pct(xs, 50);

/** The HTTP server in a child process: /small answers "ok", /big streams MB megabytes. */
async function startServer(): Promise<{ port: number; stop(): void }> {
  const js = `
    const http = require('http');
    const chunk = Buffer.alloc(1 << 20, 120);
    const total = ${MB};
    http.createServer((req, res) => {
      if (req.url === '/big') {
        res.writeHead(200, { 'content-length': total * chunk.length });
        let sent = 0;
        const more = () => { while (sent < total) { sent++; if (!res.write(chunk)) return res.once('drain', more); } res.end(); };
        more();
      } else res.end('ok');
    }).listen(0, '127.0.0.1', function () { process.stdout.write(this.address().port + '\\n'); });`;
  const child = spawn(process.execPath, ['-e', js], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve) => child.stdout!.once('data', (d: Buffer) => resolve(Number(d.toString().trim()))));
  return { port, stop: () => child.kill() };
}

/** A shell loop printing one curl figure per line. */
const curlLoop = (n: number, curlArgs: string, format: string) =>
  `for i in $(seq ${n}); do curl -s -o /dev/null -w '${format}\\n' ${curlArgs} || echo FAIL; done`;

async function onHost(script: string): Promise<string> {
  return (await promisify(execFile)('bash', ['-c', script], { maxBuffer: 16 << 20, env: { PATH: process.env.PATH, NO_PROXY: '*' } })).stdout;
}

async function inSandbox(ws: string, script: string): Promise<string> {
  const settings: SandboxSettings = { policy: 'workspace-write', network: 'on', env: [] };
  const cmd = startCommand({ command: script, workspace: ws, settings, timeoutSec: 600 });
  let out = '';
  cmd.child.stdout!.on('data', (d: Buffer) => (out += d));
  cmd.child.stderr!.on('data', (d: Buffer) => (out += d));
  await new Promise((r) => cmd.child.once('close', r));
  cmd.cleanup();
  return out;
}

function figures(out: string): number[] {
  const lines = out.trim().split('\n');
  if (lines.some((l) => l === 'FAIL' || !Number.isFinite(Number(l)))) throw new Error(`curl failed:\n${out.slice(0, 2000)}`);
  return lines.map(Number);
}

export async function proxyBench(): Promise<void> {
  const server = await startServer();
  setEgressProxy(new EgressProxy({ allowLoopbackPorts: [server.port] }));
  const ws = mkdtempSync(path.join(os.tmpdir(), 'agentrun-bench-env-'));
  try {
    const small = `http://127.0.0.1:${server.port}/small`;
    const big = `http://127.0.0.1:${server.port}/big`;
    const ms = (out: string) => figures(out).map((s) => s * 1000);
    const direct = ms(await onHost(curlLoop(REQUESTS, small, '%{time_total}')));
    const plain = ms(await inSandbox(ws, curlLoop(REQUESTS, small, '%{time_total}')));
    const tunnel = ms(await inSandbox(ws, curlLoop(REQUESTS, `--proxytunnel ${small}`, '%{time_total}')));
    const p50 = median(direct);
    console.log(`latency per connection, ${REQUESTS} sequential requests each (curl time_total):`);
    console.log(`  direct on the host:                 p50 ${p50.toFixed(2)} ms  p99 ${pct(direct, 99).toFixed(2)} ms`);
    for (const [name, xs] of [
      ['sandbox → proxy, plain HTTP:', plain],
      ['sandbox → proxy, CONNECT tunnel:', tunnel],
    ] as const) {
      const added = median(xs) - p50;
      console.log(
        `  ${name.padEnd(35)} p50 ${median(xs).toFixed(2)} ms  p99 ${pct(xs, 99).toFixed(2)} ms  added at p50 ${added.toFixed(2)} ms (goal ≤ ${GOAL_ADDED_MS} ms: ${added <= GOAL_ADDED_MS ? 'met' : 'NOT met'})`,
      );
    }
    const speed = (out: string) => median(figures(out));
    const dDirect = speed(await onHost(curlLoop(RUNS, big, '%{speed_download}')));
    const dPlain = speed(await inSandbox(ws, curlLoop(RUNS, big, '%{speed_download}')));
    const dTunnel = speed(await inSandbox(ws, curlLoop(RUNS, `--proxytunnel ${big}`, '%{speed_download}')));
    const mbs = (b: number) => `${(b / (1 << 20)).toFixed(0)} MB/s`;
    console.log(`throughput, ${MB} MB download, median of ${RUNS}:`);
    console.log(`  direct on the host:                 ${mbs(dDirect)}`);
    for (const [name, b] of [
      ['sandbox → proxy, plain HTTP:', dPlain],
      ['sandbox → proxy, CONNECT tunnel:', dTunnel],
    ] as const) {
      const ratio = b / dDirect;
      console.log(`  ${name.padEnd(35)} ${mbs(b)}  ${ratio.toFixed(2)}× direct (goal ≥ ${GOAL_THROUGHPUT}×: ${ratio >= GOAL_THROUGHPUT ? 'met' : 'NOT met'})`);
    }
  } finally {
    setEgressProxy(undefined);
    server.stop();
    rmSync(ws, { recursive: true, force: true });
  }
}

console.log(`bench/environment on ${os.cpus().length} cores (load ${os.loadavg()[0]!.toFixed(2)})`);
await proxyBench();
process.exit(0);
