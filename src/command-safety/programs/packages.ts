// Package managers and registries: npm, pnpm, yarn, bun, their npx runners, pip, and the
// publishing commands of twine, gem, cargo and docker. Publishing is dangerous (it cannot be taken
// back); installing changes the workspace (not repeatable); reading and the usual scripts
// (test, lint, build) are repeatable.
import { danger, operands, type Rule, type RuleTable } from '../state.js';

const NPM_READ = ['test', 't', 'ls', 'list', 'outdated', 'view', 'info', 'why', 'explain', 'help', 'config', 'root', 'bin', 'prefix', 'audit'];
const NPM_SCRIPT = /^(test|lint|build|typecheck|type-check|check|tsc|compile|format:check|lint:.*|test:.*|build:.*|check:.*)$/;

const npm: Rule = ({ prog, args, st }) => {
  const sub = operands(args)[0]?.text;
  if (sub === 'publish' || sub === 'unpublish' || sub === 'deprecate') return danger(st, `publishes to a package registry (${prog} ${sub})`);
  const script = sub === 'run' || sub === 'run-script' ? operands(args)[1]?.text : sub;
  const readOnly = NPM_READ.includes(sub ?? '') && !args.some((a) => a.text === 'fix' || a.text === 'set');
  if (args.some((a) => a.text === '-v' || a.text === '--version')) return;
  if (!(readOnly || (script !== undefined && NPM_SCRIPT.test(script)))) st.repeatable = false;
};

/** npx and its kin run the package named: judged as that command. */
const npx: Rule = ({ args, judge }) => {
  const inner = operands(args, /^(-p|--package)$/);
  if (inner.length) judge(inner);
};

const PIP_READ = ['list', 'show', 'freeze', 'check', 'help', 'inspect'];

const pip: Rule = ({ args, st }) => {
  const sub = operands(args)[0]?.text;
  if (sub === undefined ? args.some((a) => a.text === '--version' || a.text === '-V') : PIP_READ.includes(sub)) return;
  st.repeatable = false;
};

/** `twine upload`, `gem push`, `docker push`: otherwise these change things (not repeatable). */
const publishes =
  (words: string[], reason: (prog: string) => string): Rule =>
  ({ prog, args, st }) => {
    if (args.some((a) => words.includes(a.text))) return danger(st, reason(prog));
    st.repeatable = false;
  };

export const PACKAGE_RULES: RuleTable = {
  programs: {
    npm,
    pnpm: npm,
    yarn: npm,
    bun: npm,
    npx,
    pnpx: npx,
    bunx: npx,
    pip,
    pip3: pip,
    twine: publishes(['upload', 'push'], (p) => `publishes to a package registry (${p})`),
    gem: publishes(['upload', 'push'], (p) => `publishes to a package registry (${p})`),
    docker: publishes(['push'], () => 'pushes an image to a registry (docker push)'),
  },
};
