// Preloaded into a bench's `agentrun worker` (node --import): every second it writes the main
// thread's event-loop utilisation so far (ms busy and idle) and the event-loop delay percentiles
// since the last reset to BENCH_PROBE_FILE; a file BENCH_PROBE_FILE.reset resets them (not a
// signal: the Temporal runtime shuts the worker down on SIGUSR2). With them, the worker's waits so far
// (agentrun_wait_seconds_total and agentrun_waits_total by what for, from its own metrics module). Measurement only.
import { existsSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { isMainThread } from 'node:worker_threads';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { join } from 'node:path';

// The main thread only (a preload runs in worker threads too: the workflows' thread is one).
const file = isMainThread ? process.env.BENCH_PROBE_FILE : undefined;
if (file) {
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  // The worker's own module instance (the CLI loads the same file), read once it is loaded.
  const metricsUrl = pathToFileURL(join(fileURLToPath(new URL('..', import.meta.url)), 'dist', 'src', 'metrics.js')).href;
  let metrics;
  import(metricsUrl).then(
    (m) => (metrics = m),
    () => undefined,
  );
  /** { what: { seconds, count } } from the worker's counters. */
  const waits = () => {
    const out = {};
    for (const line of metrics?.renderMetrics().split('\n') ?? []) {
      const m = /^agentrun_wait(s|_seconds)_total\{what="([^"]*)"\} (\S+)$/.exec(line);
      if (!m) continue;
      out[m[2]] ??= { seconds: 0, count: 0 };
      out[m[2]][m[1] === 's' ? 'count' : 'seconds'] = Number(m[3]);
    }
    return out;
  };
  const write = () => {
    if (existsSync(`${file}.reset`)) {
      rmSync(`${file}.reset`, { force: true });
      delay.reset();
    }
    const { active, idle } = performance.eventLoopUtilization();
    const ms = (ns) => (Number.isFinite(ns) ? ns / 1e6 : 0);
    // Whole or not at all for the reader: a new file renamed over the old one.
    writeFileSync(
      `${file}.new`,
      JSON.stringify({ active, idle, delayP50Ms: ms(delay.percentile(50)), delayP99Ms: ms(delay.percentile(99)), delayMaxMs: ms(delay.max), waits: waits() }),
    );
    renameSync(`${file}.new`, file);
  };
  // Once a second: each write renders the metrics and writes and renames a file on the worker's
  // main thread (at 250 ms, about 4% of that thread's time in bench/concurrency.ts at N=40).
  setInterval(write, 1000).unref();
}
