// A V8 CPU profile (.cpuprofile, from BENCH_CPU_PROF=DIR or node --cpu-prof) summed by self time:
// per function and per package or source directory, optionally over a window at the profile's end
// (a bench's last level) and with the inclusive time of the functions matching a pattern.
//   node bench/cpu-profile.mjs FILE [--last S] [--skip-last S] [--top N] [--incl REGEX]
// --last S: only the last S seconds; --skip-last S: leave out the last S seconds (with --last, the
// window before them). The profile samples wall time: a thread waiting for a core, or in a system
// call, counts as busy in what it was running, so compare shares, not milliseconds, between runs.
import { readFileSync } from 'node:fs';

const args = process.argv.slice(2);
const file = args.find((a, i) => !a.startsWith('--') && !args[i - 1]?.startsWith('--'));
if (!file) {
  console.error('usage: node bench/cpu-profile.mjs FILE [--last S] [--skip-last S] [--top N] [--incl REGEX]');
  process.exit(2);
}
const option = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : fallback;
};
const lastUs = Number(option('--last', 0)) * 1e6;
const skipLastUs = Number(option('--skip-last', 0)) * 1e6;
const top = Number(option('--top', 30));
const incl = option('--incl', '');

const profile = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

const short = (url) =>
  url
    .replace(/^file:\/\//, '')
    .replace(/.*\/node_modules\//, '')
    .replace(/.*\/dist\//, '');
const frame = (cf) => `${cf.functionName || '(anonymous)'} ${short(cf.url)}:${cf.lineNumber + 1}`;
const SPECIAL = new Set(['(idle)', '(program)', '(garbage collector)', '(root)']);
function packageOf(cf) {
  if (SPECIAL.has(cf.functionName)) return cf.functionName;
  const url = cf.url;
  if (!url) return '(native)';
  if (url.startsWith('node:')) return url.split('/').slice(0, 2).join('/');
  const pkg = url.match(/node_modules\/(@[^/]+\/[^/]+|[^/]+)/);
  if (pkg) return pkg[1];
  const dir = url.match(/\/(src|activities|worker|workflows)\/([^/]+)/);
  if (dir) return `${dir[1]}/${dir[2]}`;
  return short(url).slice(0, 60);
}

const end = profile.endTime - skipLastUs;
const start = lastUs ? end - lastUs : profile.startTime;
const self = new Map();
const packages = new Map();
const inclusive = new Map();
const pattern = incl ? new RegExp(incl) : undefined;
const add = (m, k, v) => m.set(k, (m.get(k) ?? 0) + v);
let at = profile.startTime;
let total = 0;
let idle = 0;
for (let i = 0; i < profile.samples.length; i++) {
  at += profile.timeDeltas[i];
  if (at < start || at > end) continue;
  // A sample stands for the time until the next one.
  const dt = profile.timeDeltas[i + 1] ?? 0;
  const node = byId.get(profile.samples[i]);
  total += dt;
  if (node.callFrame.functionName === '(idle)') {
    idle += dt;
    continue;
  }
  add(self, frame(node.callFrame), dt);
  add(packages, packageOf(node.callFrame), dt);
  if (pattern) {
    const seen = new Set();
    for (let id = node.id; id !== undefined; id = parent.get(id)) {
      const k = frame(byId.get(id).callFrame);
      if (!seen.has(k) && pattern.test(k)) {
        seen.add(k);
        add(inclusive, k, dt);
      }
    }
  }
}
const busy = total - idle;
console.log(`${file}: ${(total / 1e6).toFixed(1)} s, of which idle ${(idle / 1e6).toFixed(1)} s, busy ${(busy / 1e6).toFixed(1)} s`);
const show = (title, m) => {
  console.log(`-- ${title} (ms, % of busy)`);
  for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top))
    console.log(`${(v / 1000).toFixed(0).padStart(8)} ${((100 * v) / busy).toFixed(1).padStart(5)}%  ${k}`);
};
show('self time by function', self);
show('self time by package or directory', packages);
if (pattern) show(`inclusive time of the functions matching ${incl}`, inclusive);
