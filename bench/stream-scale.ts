// Stream scale: N conversations streaming model output at 60 tokens a second through the real
// writer (StreamWriter → the process's StreamFlusher) into PostgreSQL, with watchers (the store's
// LISTEN connection and readStream, as `agentrun watch` and the page's SSE use them) on a sample.
// For rising N: the flush commits a second, PostgreSQL's CPU (this bench's backends, and every
// postgres process of the host beside it: the machine is shared), and the watchers' delay from
// a token's creation to its reading. The largest N whose p99 stays within the goal is the result.
//
// Processes: WRITERS writer processes (each one "worker": its conversations share one flusher)
// and one watcher process with its own Store. `--per-conversation` makes every conversation write
// its own statement with its own NOTIFY every 50 ms instead (the former writer), for comparison.
// Run: npx tsx bench/stream-scale.ts [--sizes 250,500,1000,2000,3000] [--seconds 12] [--per-conversation] [--profile]
// `--profile` splits the watched tokens' delay into its stages (the flush's wait and statement, the
// notification, the wake, the read), joined across the processes by conversation and token, with
// each process's event-loop delay and CPU.
// Goal: 2,000 conversations or more with p99 ≤ 250 ms.
//
// Measured 2026-11-29 on 2 cores shared with four other engineers' work, 8 s per size. Where the
// p99 went at 2,000 conversations, before (load average 3.9–5.8; p50 170, p99 361 ms): the flush
// statement (1,000 rows, p50 93, p99 189 ms) and the wait for it (the next flush starts when the
// last one ends: p50 44, p99 135), then the watcher's reads (one query per woken conversation,
// 20 per notification on a pool of 4: p50 18, p99 177 ms, and 389 commits a second of them), and
// wakes lost while a read was under way (6% of the reads waited for the next flush); the
// notification itself took under 1 ms at the median. After (the reads one notification asks for
// in one query, the flush committing without waiting for its WAL flush, a wake during a read
// answered at once; load 2.9–3.9; p50 86, p99 167 ms): flush wait p50 28, p99 80; statement p50 53,
// p99 98; notification p99 8; read p50 3, p99 21 ms; 73 commits a second instead of 389.
// Before and after back to back, 250/500/1000/2000 conversations (p99 ms; PostgreSQL % of a core):
//   load 7.5–11.9  before 163/292/375/929 (30/42/43/41%)  after 187/228/111/153 (17/27/49/82%)
//   load 7.8–3.1   before  63/ 86/200/161 (29/44/66/104%) after  57/ 61/ 79/125 (19/33/60/94%)
// and two pairs at 2,000 alone: load 3.8–8.1 before 475, after 250; load 8.1–11.0 before 390,
// after 361 (statement-bound: at a load of 8 and more the flush waits for CPU and the goal is not
// met). With the profile at 3,000 (load 8.7–10.0): before p50 349, p99 768; after p50 211, p99 401.
// The flusher's commits stay at 40 a second (2 processes × 20) up to 2,000; past that the
// statement outlasts the 50 ms timer, flushes grow larger and fewer, and the delay grows with them.
// The former writer (--per-conversation) at 250, earlier the same day at load 13–20: 1,211 commits
// a second, 61% of a core, p50 4.3 s, p99 7.5 s.
import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { nextMessage } from './relay.js';

const TOKENS_PER_SECOND = 60;
const TICK_MS = 10;
const WRITERS = 2;
const WATCHED = 40;
const GOAL_P99_MS = 250;
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const APP = 'agentrun-stream-scale';

const now = () => performance.timeOrigin + performance.now();
const send = (msg: unknown) => new Promise<void>((resolve) => process.send!(msg, undefined, {}, () => resolve()));
const conversationId = (i: number) => `scale-${i}`;

// ── writer: conversations of one worker process ─────────────────────────────────────────────

async function writer(schema: string, from: number, count: number, perConversation: boolean, profiled: Set<string> | undefined): Promise<void> {
  const { Store } = await import('../src/store/index.js');
  const { StreamWriter } = await import('../src/turn/stream-writer.js');
  const store = await Store.connect(DATABASE_URL, { schema, max: perConversation ? 20 : 4 });
  const profile = profiled ? profileWriter(store.streamFlusher, profiled) : undefined;
  const ids = Array.from({ length: count }, (_, i) => conversationId(from + i));
  const writers = ids.map((id) => new StreamWriter(store, id, { seq: 1, attempt: 1, segment: 0 }));
  const started = now();
  const sent = new Array<number>(count).fill(0);
  let failures = 0;
  let directCommits = 0;
  // The former writer: each conversation's own batch, statement and NOTIFY every 50 ms.
  const buffers = ids.map(() => '');
  const keys = ids.map(() => 0);
  const direct = perConversation
    ? setInterval(() => {
        for (const [i, id] of ids.entries()) {
          if (!buffers[i]) continue;
          const text = buffers[i]!;
          buffers[i] = '';
          void store.appendStream(id, [{ type: 'delta', seq: 1, attempt: 1, segment: 0, text }], [`1:1:0:${keys[i]!++}`]).then(
            () => directCommits++,
            () => failures++,
          );
        }
      }, 50)
    : undefined;
  // One timer for all conversations: each gets the tokens its 60 a second owe it, stamped now.
  const tick = setInterval(() => {
    const t = now();
    const owed = Math.floor(((t - started) / 1000) * TOKENS_PER_SECOND);
    for (let i = 0; i < count; i++) {
      let text = '';
      while (sent[i]! < owed) {
        sent[i]!++;
        text += `t${t.toFixed(1)} `;
      }
      if (!text) continue;
      if (perConversation) buffers[i] += text;
      else writers[i]!.text(text);
    }
  }, TICK_MS);
  process.on('message', (m: { type: string }) => {
    if (m.type !== 'stop') return;
    clearInterval(tick);
    clearInterval(direct);
    void (async () => {
      await Promise.all(writers.map((w) => w.flush().catch(() => failures++)));
      const commits = perConversation ? directCommits : store.streamFlusher.commits;
      await store.close();
      await send({ type: 'stopped', commits, tokens: sent.reduce((a, b) => a + b, 0), failures, profile: profile?.() });
      process.disconnect();
    })();
  });
  await send({ type: 'ready' });
}

// ── profile: where a token's delay goes, joined across processes by (conversation, token) ─────

/** Per token of a profiled conversation, the writer's times: its flush's start and acknowledged commit. */
type WriterTimes = Record<string, [flushStart: number, committed: number]>;
/** Per token read, the watcher's times: the wake that started the read (0: none), the read's start and end. */
type WatcherTimes = Record<string, [wake: number, readStart: number, readEnd: number]>;
interface LoopLag {
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}
interface WriterProfile {
  tokens: WriterTimes;
  flushes: { ms: number; rows: number; bytes: number }[];
  loop: LoopLag;
}
interface WatcherProfile {
  tokens: WatcherTimes;
  reads: number;
  queries: number;
  wakes: number;
  lostWakes: number;
  readMs: number[];
  loop: LoopLag;
}

const tokenTimes = (text: string) => [...text.matchAll(/t(\d+\.\d)/g)].map((m) => m[1]!);

function loopMonitor(): () => LoopLag {
  const h = monitorEventLoopDelay({ resolution: 5 });
  h.enable();
  return () => {
    h.disable();
    return { p50Ms: h.percentile(50) / 1e6, p99Ms: h.percentile(99) / 1e6, maxMs: h.max / 1e6 };
  };
}

/** Times every flush's statement (the flusher's private insert, wrapped) and the profiled conversations' tokens in it. */
function profileWriter(flusher: object, profiled: Set<string>): () => WriterProfile {
  type Batch = { conversationId: string; events: { type: string; text?: string }[] };
  const f = flusher as { insert(batches: Batch[]): Promise<unknown> };
  const insert = f.insert.bind(flusher);
  const tokens: WriterTimes = {};
  const flushes: WriterProfile['flushes'] = [];
  f.insert = async (batches) => {
    const start = now();
    const out = await insert(batches);
    const end = now();
    let rows = 0;
    let bytes = 0;
    for (const b of batches) {
      rows += b.events.length;
      for (const e of b.events) bytes += e.text?.length ?? 0;
      if (!profiled.has(b.conversationId)) continue;
      for (const e of b.events) for (const t of tokenTimes(e.text ?? '')) tokens[`${b.conversationId}|${t}`] = [start, end];
    }
    flushes.push({ ms: end - start, rows, bytes });
    return out;
  };
  const loop = loopMonitor();
  return () => ({ tokens, flushes, loop: loop() });
}

// ── watcher: a sample of the conversations, woken by the store's notification ───────────────

async function watcher(schema: string, ids: string[], profiling: boolean): Promise<void> {
  const { Store } = await import('../src/store/index.js');
  const store = await Store.connect(DATABASE_URL, { schema, max: 4 });
  const delays: number[] = [];
  const prof = { tokens: {} as WatcherTimes, reads: 0, wakes: 0, lostWakes: 0, readMs: [] as number[] };
  let queries0 = store.streamReader.queries;
  let loop = profiling ? loopMonitor() : undefined;
  let stopping = false;
  const follow = async (id: string, wake: { next: () => Promise<void>; at: number; reading: boolean; notified: boolean }) => {
    let offset = 0;
    while (!stopping) {
      const woke = wake.at;
      wake.at = 0;
      wake.reading = true;
      wake.notified = false;
      const readStart = now();
      const rows = await store.readStream(id, offset, 1000);
      const t = now();
      wake.reading = false;
      prof.reads++;
      if (profiling) prof.readMs.push(t - readStart);
      for (const r of rows) {
        offset = r.offset;
        if (r.event.type !== 'delta') continue;
        for (const m of tokenTimes(r.event.text)) {
          delays.push(t - Number(m));
          if (profiling) prof.tokens[`${id}|${m}`] = [woke, readStart, t];
        }
      }
      // As followStream: a notification during the read names rows it may have missed.
      if (rows.length < 1000 && !wake.notified) await wake.next();
    }
  };
  const unsubscribe: (() => Promise<void>)[] = [];
  const loops: Promise<void>[] = [];
  for (const id of ids) {
    let resolve: (() => void) | undefined;
    const wake = {
      at: 0,
      reading: false,
      notified: false,
      // Woken by the notification, or after a second, as followStream waits.
      next: () => new Promise<void>((r) => ((resolve = r), setTimeout(r, 1000))),
    };
    unsubscribe.push(
      await store.subscribe(id, () => {
        prof.wakes++;
        // A notification while the read is under way: the loop reads again as soon as this read ends.
        if (wake.reading) prof.lostWakes++;
        wake.at ||= now();
        wake.notified = true;
        resolve?.();
      }),
    );
    loops.push(follow(id, wake));
  }
  process.on('message', (m: { type: string }) => {
    if (m.type === 'reset') {
      delays.length = 0;
      Object.assign(prof, { tokens: {}, reads: 0, wakes: 0, lostWakes: 0, readMs: [] });
      queries0 = store.streamReader.queries;
      if (profiling) loop = loopMonitor();
    }
    if (m.type === 'delays')
      void send({
        type: 'delays',
        delays: delays.splice(0),
        profile: profiling ? { ...prof, queries: store.streamReader.queries - queries0, loop: loop!() } : undefined,
      });
    if (m.type === 'stop') {
      stopping = true;
      void (async () => {
        await Promise.all(unsubscribe.map((u) => u()));
        await Promise.race([Promise.all(loops), new Promise((r) => setTimeout(r, 1500))]);
        await store.close();
        process.disconnect();
      })();
    }
  });
  await send({ type: 'ready' });
}

/** The delay of the tokens read, split into its stages (quantiles of each over the same tokens). */
function printProfile(writers: WriterProfile[], watched: WatcherProfile, nodeCpu: number[], quantile: (xs: number[], q: number) => number): void {
  const written: WriterTimes = Object.assign({}, ...writers.map((w) => w.tokens));
  const stages: Record<string, number[]> = {
    'flush wait (token → flush starts)': [],
    'flush statement (start → commit acknowledged)': [],
    'notification (commit acknowledged → watcher woken)': [],
    'woken → read starts': [],
    'read (readStream round trip)': [],
    'commit acknowledged → read starts (any cause)': [],
    'total (token → read)': [],
  };
  let unmatched = 0;
  let unwoken = 0;
  for (const [key, [wake, readStart, readEnd]] of Object.entries(watched.tokens)) {
    const w = written[key];
    if (!w) {
      unmatched++;
      continue;
    }
    const t = Number(key.split('|')[1]);
    const [flushStart, committed] = w;
    stages['flush wait (token → flush starts)']!.push(flushStart - t);
    stages['flush statement (start → commit acknowledged)']!.push(committed - flushStart);
    stages['read (readStream round trip)']!.push(readEnd - readStart);
    stages['commit acknowledged → read starts (any cause)']!.push(readStart - committed);
    stages['total (token → read)']!.push(readEnd - t);
    if (wake && wake >= flushStart) {
      stages['notification (commit acknowledged → watcher woken)']!.push(wake - committed);
      stages['woken → read starts']!.push(readStart - wake);
    } else unwoken++;
  }
  const q = (xs: number[]) =>
    `${quantile(xs, 0.5).toFixed(1).padStart(8)}${quantile(xs, 0.9).toFixed(1).padStart(8)}${quantile(xs, 0.99).toFixed(1).padStart(8)}`;
  console.log(`  profile: ${Object.keys(watched.tokens).length} token stamps read (${unmatched} unmatched, ${unwoken} read without a wake of their flush)`);
  console.log(`  ${'stage'.padEnd(52)}${'p50'.padStart(8)}${'p90'.padStart(8)}${'p99'.padStart(8)}  ms`);
  for (const [name, xs] of Object.entries(stages)) console.log(`  ${name.padEnd(52)}${q(xs)}`);
  const flushes = writers.flatMap((w) => w.flushes);
  console.log(
    `  flushes: ${flushes.length}, statement ms ${q(flushes.map((f) => f.ms))}; rows per flush ${q(flushes.map((f) => f.rows))}; text bytes per flush ${quantile(
      flushes.map((f) => f.bytes),
      0.5,
    ).toFixed(0)}`,
  );
  console.log(
    `  watcher: ${watched.reads} reads in ${watched.queries} queries, ${watched.wakes} wakes (${watched.lostWakes} arrived during a read); read ms ${q(watched.readMs)}`,
  );
  const lag = (l: LoopLag) => `p50 ${l.p50Ms.toFixed(1)} p99 ${l.p99Ms.toFixed(1)} max ${l.maxMs.toFixed(1)} ms`;
  console.log(`  event-loop delay: writers ${writers.map((w) => lag(w.loop)).join('; ')}; watcher ${lag(watched.loop)}`);
  const pct = (x: number) => `${(x * 100).toFixed(0)}%`;
  console.log(`  node CPU (of a core): writers ${nodeCpu.slice(0, -1).map(pct).join(', ')}; watcher ${pct(nodeCpu[nodeCpu.length - 1]!)}`);
}

// ── the bench ───────────────────────────────────────────────────────────────────────────────

function forkRole(args: string[]): ChildProcess {
  return fork(fileURLToPath(import.meta.url), args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], env: { ...process.env, PGAPPNAME: APP } });
}

const TICKS = 100; // USER_HZ
/** CPU seconds (user + system) of a process, from /proc. */
function cpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS;
  } catch {
    return 0;
  }
}

/** Every postgres process of this host. */
function postgresPids(): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (readFileSync(`/proc/${d}/comm`, 'utf8').trim() === 'postgres') out.push(Number(d));
    } catch {
      // ended meanwhile
    }
  }
  return out;
}

async function main(): Promise<void> {
  process.env.AGENTRUN_LOG_LEVEL ??= 'warn';
  const args = process.argv.slice(2);
  const opt = (name: string) => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const sizes = (opt('--sizes') ?? '250,500,1000,2000,3000').split(',').map(Number);
  const seconds = Number(opt('--seconds') ?? 12);
  const perConversation = args.includes('--per-conversation');
  const profiling = args.includes('--profile');
  if (sizes.some((n) => !Number.isInteger(n) || n < WRITERS) || !(seconds > 2)) {
    console.error('usage: stream-scale.ts [--sizes 250,500,…] [--seconds S>2] [--per-conversation]');
    process.exit(2);
  }
  const { quantile } = await import('./harness.js');
  const { Store } = await import('../src/store/index.js');
  const admin = new pg.Client({ connectionString: DATABASE_URL });
  await admin.connect();
  const mode = perConversation ? 'one statement and NOTIFY per conversation every 50 ms (former writer)' : 'one flush per writer process';
  console.log(`Stream scale: ${TOKENS_PER_SECOND} tokens/s per conversation, ${WRITERS} writer processes, ${WATCHED} watched; ${mode}`);
  console.log(
    `  load average at start ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')} (${cpus().length} cores, shared with other work)`,
  );
  console.log(
    `${'N'.padStart(6)}${'tokens/s'.padStart(10)}${'commits/s'.padStart(11)}${'db commits/s'.padStart(14)}${'pg cpu (ours)'.padStart(15)}${'pg cpu (all)'.padStart(14)}${'p50 ms'.padStart(9)}${'p99 ms'.padStart(9)}${'watched'.padStart(9)}${'rows/s'.padStart(9)}${'B/row'.padStart(7)}`,
  );
  const results: {
    n: number;
    commitsPerSecond: number;
    dbCommitsPerSecond: number;
    pgCpuOurs: number;
    pgCpuAll: number;
    p50Ms: number;
    p99Ms: number;
    tokensPerSecond: number;
    delays: number;
  }[] = [];
  let failed = false;
  for (const n of sizes) {
    const schema = `stream_scale_${process.pid}_${n}`;
    const setup = await Store.connect(DATABASE_URL, { schema });
    await setup.close();
    const per = Math.ceil(n / WRITERS);
    const sample = Array.from({ length: Math.min(WATCHED, n) }, (_, i) => conversationId(Math.floor((i * n) / Math.min(WATCHED, n))));
    const writers = Array.from({ length: WRITERS }, (_, w) =>
      forkRole(['writer', schema, String(w * per), String(Math.min(per, n - w * per)), perConversation ? '1' : '0', ...(profiling ? [sample.join(',')] : [])]),
    );
    const watch = forkRole(['watcher', schema, sample.join(','), profiling ? '1' : '0']);
    await Promise.all([...writers, watch].map((c) => nextMessage(c, 'ready')));
    // Warm-up: the first seconds fill caches and connections.
    await new Promise((r) => setTimeout(r, 2000));
    watch.send({ type: 'reset' });
    const ours = (
      await admin.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE application_name = $1 OR application_name = $2`, [
        APP,
        `agentrun-listen:${schema}`,
      ])
    ).rows.map((r) => r.pid);
    const all = postgresPids();
    const cpu0 = { ours: ours.reduce((a, p) => a + cpuSeconds(p), 0), all: all.reduce((a, p) => a + cpuSeconds(p), 0) };
    const nodeCpu0 = [...writers, watch].map((c) => cpuSeconds(c.pid!));
    const db0 = Number((await admin.query(`SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()`)).rows[0].xact_commit);
    const t0 = now();
    await new Promise((r) => setTimeout(r, seconds * 1000));
    const elapsed = (now() - t0) / 1000;
    const cpu1 = { ours: ours.reduce((a, p) => a + cpuSeconds(p), 0), all: all.reduce((a, p) => a + cpuSeconds(p), 0) };
    const nodeCpu = [...writers, watch].map((c, i) => (cpuSeconds(c.pid!) - nodeCpu0[i]!) / elapsed);
    const db1 = Number((await admin.query(`SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()`)).rows[0].xact_commit);
    watch.send({ type: 'delays' });
    const { delays, profile: watched } = await nextMessage<{ delays: number[]; profile?: WatcherProfile }>(watch, 'delays');
    const stopped = Promise.all(writers.map((c) => nextMessage<{ commits: number; tokens: number; failures: number; profile?: WriterProfile }>(c, 'stopped')));
    for (const c of writers) c.send({ type: 'stop' });
    const done = await stopped;
    watch.send({ type: 'stop' });
    await new Promise((r) => watch.once('close', r));
    // What the stream costs on disk: the table with its indexes, per row (before WAL and pruning).
    const size = (
      await admin.query<{ bytes: string; rows: string }>(
        `SELECT pg_total_relation_size('${schema}.stream') AS bytes, (SELECT count(*) FROM ${schema}.stream) AS rows`,
      )
    ).rows[0]!;
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    // Commits over the whole run of the writers (warm-up included), per second of that run.
    const runSeconds = elapsed + 2;
    const commits = done.reduce((a, d) => a + d.commits, 0);
    const tokens = done.reduce((a, d) => a + d.tokens, 0);
    const r = {
      n,
      tokensPerSecond: tokens / runSeconds,
      commitsPerSecond: commits / runSeconds,
      dbCommitsPerSecond: (db1 - db0) / elapsed,
      pgCpuOurs: (cpu1.ours - cpu0.ours) / elapsed,
      pgCpuAll: (cpu1.all - cpu0.all) / elapsed,
      p50Ms: quantile(delays, 0.5),
      p99Ms: quantile(delays, 0.99),
      delays: delays.length,
      bytesPerRow: Number(size.bytes) / Math.max(1, Number(size.rows)),
      rowsPerSecond: Number(size.rows) / runSeconds,
    };
    results.push(r);
    const failures = done.reduce((a, d) => a + d.failures, 0);
    console.log(
      `${String(n).padStart(6)}${r.tokensPerSecond.toFixed(0).padStart(10)}${r.commitsPerSecond.toFixed(1).padStart(11)}${r.dbCommitsPerSecond.toFixed(0).padStart(14)}${`${(r.pgCpuOurs * 100).toFixed(0)}%`.padStart(15)}${`${(r.pgCpuAll * 100).toFixed(0)}%`.padStart(14)}${r.p50Ms.toFixed(1).padStart(9)}${r.p99Ms.toFixed(1).padStart(9)}${String(r.delays).padStart(9)}${r.rowsPerSecond.toFixed(0).padStart(9)}${r.bytesPerRow.toFixed(0).padStart(7)}${failures ? `  ${failures} failed writes` : ''}`,
    );
    if (watched)
      printProfile(
        done.map((d) => d.profile!),
        watched,
        nodeCpu,
        quantile,
      );
    // A size whose watchers read nothing measured nothing.
    if (delays.length === 0) failed = true;
    if (r.p99Ms > GOAL_P99_MS * 4) break;
  }
  await admin.end();
  const within = results.filter((r) => r.delays > 0 && r.p99Ms <= GOAL_P99_MS);
  const best = within.length ? within.reduce((a, b) => (b.n > a.n ? b : a)) : undefined;
  console.log(
    `  goal: ≥ 2000 conversations with p99 ≤ ${GOAL_P99_MS} ms: ${best && best.n >= 2000 ? 'met' : 'NOT met'}; load average at end ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`,
  );
  console.log(JSON.stringify({ bench: 'stream-scale', mode: perConversation ? 'per-conversation' : 'flusher', results, loadAverage: loadavg() }));
  console.log(
    JSON.stringify({ bench: 'stream-scale', maxConversations: best?.n ?? 0, p99Ms: best?.p99Ms ?? null, commitsPerSecond: best?.commitsPerSecond ?? null }),
  );
  if (failed || !best) process.exitCode = 1;
}

const [role, ...rest] = process.argv.slice(2);
if (role === 'writer') await writer(rest[0]!, Number(rest[1]), Number(rest[2]), rest[3] === '1', rest[4] ? new Set(rest[4].split(',')) : undefined);
else if (role === 'watcher') await watcher(rest[0]!, rest[1]!.split(','), rest[2] === '1');
else await main();
