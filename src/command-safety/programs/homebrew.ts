// Homebrew, the machine's package manager on macOS (and Linuxbrew's): installing, upgrading,
// removing, linking, cleaning up, tapping and starting services change the programs every shell on
// the machine runs and run the packages' build and post-install code, as `port install` and `apt
// install` do. Reading forms (list, info, config, doctor, search, deps, outdated, `--prefix`), the
// development commands that only check Homebrew's own code (style, audit, typecheck, tests) and
// dry runs pass; a verb no list here knows counts as a change.
import type { Word } from '../shell-lex.js';
import { checkWriteTarget, danger, operands, type Rule, type RuleTable } from '../state.js';
import { line } from './macos.js';

/** Verbs that only read the installation, the formulae or the taps (or print the environment to `eval`). */
const READS =
  /^(list|ls|info|abv|config|doctor|dr|search|desc|deps|uses|outdated|leaves|missing|options|home|homepage|docs|log|cat|formulae|casks|commands|command|tap-info|shellenv|help|fetch|--prefix|--cellar|--cache|--caskroom|--repository|--repo|--env|which-formula|livecheck|unbottled|contributions)$/;
/**
 * Homebrew's own development commands, which check or test its code or a tap's in place (style,
 * audit, typecheck, tests, readall, an update run in a temporary clone, an installed formula's own
 * test block) or vendor its gems into its own repository without committing.
 */
const DEVELOPS = /^(style|audit|typecheck|tc|tests?|readall|update-test|vendor-gems|install-bundler-gems|prof|ruby|irb-help|determine-test-runners)$/;
/** Options of `brew bundle` that take the next word. */
const BUNDLE_VALUED = /^(--file|--global)$/;

/**
 * `brew bundle`: with no verb (or `install`) it installs, upgrades and starts what the Brewfile
 * lists; `check`, `list`, `env` and `cleanup` without `--force` only read; `dump` writes the
 * Brewfile; `exec` runs a command in the bundle's environment (and starts services with
 * `--services`).
 */
function bundle(args: Word[], judge: (words: Word[]) => void): string | undefined {
  const verb = operands(args, BUNDLE_VALUED)[1]?.text;
  if (verb === undefined || /^(install|upgrade|add|remove|edit)$/.test(verb)) return 'installs, upgrades or removes what a Brewfile lists';
  if (verb === 'cleanup') return args.some((a) => /^(--force|-f|--zap)$/.test(a.text)) ? 'uninstalls what the Brewfile does not list' : undefined;
  if (verb === 'exec' || verb === 'sh') {
    if (args.some((a) => a.text === '--services' || a.text.startsWith('--services='))) return "starts the Brewfile's services";
    const k = args.findIndex((a) => a.text === 'exec');
    const rest = args.slice(k + 1);
    const start = rest.findIndex((a) => a.text === '--' || !a.text.startsWith('-'));
    const words = start < 0 ? [] : rest.slice(rest[start]!.text === '--' ? start + 1 : start);
    if (verb === 'exec' && words.length) judge(words);
    else if (verb === 'sh') return 'opens a shell in the Brewfile environment';
    return undefined;
  }
  if (/^(check|list|env|dump)$/.test(verb)) return undefined;
  return 'changes what the Brewfile installs';
}

const brew: Rule = ({ prog, args, st, judge }) => {
  st.repeatable = false;
  const ops = operands(args);
  // The verb is the first word, or an option that stands for one (`brew --prefix openssl`).
  const verb = args.find((a) => !a.text.startsWith('-') || /^--(prefix|cellar|cache|caskroom|repository|repo|env)$/.test(a.text))?.text;
  if (verb === undefined) return;
  const dryRun = args.some((a) => a.text === '--dry-run' || (verb === 'cleanup' && a.text === '-n'));
  const out = args.find((a) => a.text.startsWith('--file='));
  const k = args.findIndex((a) => a.text === '--file');
  const file = out ? { ...out, text: out.text.slice(7) } : k >= 0 ? args[k + 1] : undefined;
  let why: string | undefined;
  if (READS.test(verb) || DEVELOPS.test(verb) || dryRun) why = undefined;
  else if (verb === 'bundle') {
    why = bundle(args, judge);
    if (!why && operands(args, BUNDLE_VALUED)[1]?.text === 'dump' && file) checkWriteTarget(file, st, 'writes a Brewfile to');
  } else if (verb === 'services') {
    const sub = ops[1]?.text;
    if (sub !== undefined && !/^(list|info|help)$/.test(sub)) why = "starts, stops or changes the machine's services";
  } else if (verb === 'tap') {
    if (ops.length > 1) why = 'adds a tap, a repository of formulae the machine installs from';
  } else if (verb === 'analytics' || verb === 'developer') {
    if (ops[1] !== undefined && ops[1].text !== 'state') why = "changes Homebrew's settings";
  } else if (verb === 'test-bot') {
    // Its setup and tap-syntax steps only check; the others build, install and clean up formulae.
    if (!args.some((a) => /^--only-(setup|tap-syntax)$/.test(a.text))) why = 'builds, installs and cleans up formulae on the machine';
  } else why = "installs, upgrades, removes, links or cleans up the machine's software";
  if (why) danger(st, `${why} (${line(prog, args)})`);
};

export const HOMEBREW_RULES: RuleTable = { programs: { brew } };
