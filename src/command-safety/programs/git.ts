// git: which subcommands only read (repeatable), and which rewrite or destroy what others rely on
// (force pushes, history rewrites, deleted refs and reflogs) or change how git runs code
// (configuration, submodules, remotes: the worker runs git in the workspace too).
import type { Word } from '../shell-lex.js';
import { danger, GIT_CODE_REASON, operands, type Rule, type RuleTable, type State } from '../state.js';

const GIT_READ = new Set([
  'status',
  'diff',
  'log',
  'show',
  'rev-parse',
  'ls-files',
  'ls-tree',
  'grep',
  'blame',
  'describe',
  'shortlog',
  'cat-file',
  'rev-list',
  'merge-base',
  'name-rev',
  'whatchanged',
  'reflog',
  'for-each-ref',
  'show-ref',
  'check-ignore',
  'count-objects',
  'version',
  'help',
  'fsck',
  'var',
  'diff-tree',
  'diff-files',
  'diff-index',
  'ls-remote',
  'fetch',
]);

/** Read actions of `git config`: the old flags and the subcommands of git 2.46. */
const GIT_CONFIG_READ = /^(--get|--get-all|--get-regexp|--get-urlmatch|--get-color|--get-colorbool|-l|--list)$/;
const GIT_CONFIG_WRITE = /^(--add|--unset|--unset-all|--replace-all|--rename-section|--remove-section|-e|--edit)$/;
/** Options of `git config` that take a value (so it is not a name or a value of the setting). */
const GIT_CONFIG_VALUED = /^(-f|--file|--blob|--type|--default|--comment|--value)$/;

/** True when `git config ARGS` only reads: a read action, or a single name (`git config user.name`). */
function gitConfigReads(args: Word[]): boolean {
  if (args.some((a) => GIT_CONFIG_WRITE.test(a.text))) return false;
  if (args.some((a) => GIT_CONFIG_READ.test(a.text.replace(/=.*$/, '')))) return true;
  const ops = operands(args, GIT_CONFIG_VALUED);
  const action = ops[0]?.text;
  if (action === 'get' || action === 'list') return true;
  if (action === 'set' || action === 'unset' || action === 'rename-section' || action === 'remove-section' || action === 'edit') return false;
  return ops.length === 1;
}

/** Subcommand rules, given the words after the subcommand. */
const SUBCOMMANDS: Record<string, (rest: Word[], st: State, sub: string) => void> = {
  push(rest, st) {
    st.repeatable = false;
    const force = rest.some((a) => /^--force(-with-lease|-if-includes)?(=.*)?$/.test(a.text) || (/^-[a-zA-Z]+$/.test(a.text) && a.text.includes('f')));
    if (force) danger(st, 'force-pushes, rewriting history on the remote (git push --force)');
    const refspecs = operands(rest, /^(-o|--push-option|--repo|--receive-pack)$/).slice(1);
    if (!force && refspecs.some((r) => r.text.startsWith('+'))) danger(st, 'force-pushes a ref (git push +ref)');
    if (rest.some((a) => a.text === '--delete' || a.text === '-d' || a.text === '--prune') || refspecs.some((r) => r.text.startsWith(':')))
      danger(st, 'deletes refs on the remote (git push --delete)');
    if (rest.some((a) => a.text === '--mirror')) danger(st, 'mirrors onto the remote, overwriting its refs (git push --mirror)');
  },
  'filter-branch': (_rest, st, sub) => danger(st, `rewrites the repository's history (git ${sub})`),
  'filter-repo': (_rest, st, sub) => danger(st, `rewrites the repository's history (git ${sub})`),
  reflog(rest, st) {
    if (rest[0]?.text === 'expire' || rest[0]?.text === 'delete') danger(st, 'destroys the reflog, the record needed to recover commits');
  },
  'update-ref'(rest, st) {
    st.repeatable = false;
    if (rest.some((a) => a.text === '-d') && rest.some((a) => /^refs\/(heads|remotes|tags)\//.test(a.text) || /^(main|master)$/.test(a.text)))
      danger(st, 'deletes a shared ref (git update-ref -d)');
  },
  branch(rest, st) {
    if (rest.length && !rest.every((a) => /^(-a|-r|-v|-vv|--list|--all|--remotes|--show-current|--contains|--merged|--no-merged)$/.test(a.text)))
      st.repeatable = false;
  },
  config(rest, st) {
    if (!gitConfigReads(rest)) danger(st, `changes git configuration (git config ${rest.map((a) => a.text).join(' ')}), ${GIT_CODE_REASON}`);
  },
  submodule(rest, st) {
    st.repeatable = false;
    const op = operands(rest)[0]?.text ?? '';
    if (['add', 'set-url', 'init', 'sync'].includes(op)) danger(st, `changes the repository's submodules (git submodule ${op}), ${GIT_CODE_REASON}`);
  },
  remote(rest, st) {
    const op = operands(rest)[0]?.text;
    // The worker pushes result branches to the remote, and an ext:: URL is a command.
    if (op === 'add' || op === 'set-url') return danger(st, `changes where git fetches and pushes (git remote ${op}), ${GIT_CODE_REASON}`);
    if (rest.length && !rest.every((a) => /^(-v|show)$/.test(a.text))) st.repeatable = false;
  },
  tag: listsOnly,
  stash: listsOnly,
};

function listsOnly(rest: Word[], st: State): void {
  if (rest.length && !rest.every((a) => /^(-l|--list|-v|show|list)$/.test(a.text))) st.repeatable = false;
}

const git: Rule = ({ args, st }) => {
  if (args.some((a) => a.text === '--global' || a.text === '--system')) danger(st, 'changes git configuration outside the workspace (--global/--system)');
  let k = 0;
  while (k < args.length && args[k]!.text.startsWith('-'))
    k += /^-(C|c)$/.test(args[k]!.text) || args[k]!.text === '--git-dir' || args[k]!.text === '--work-tree' ? 2 : 1;
  const sub = args[k]?.text;
  const rule = sub !== undefined && Object.hasOwn(SUBCOMMANDS, sub) ? SUBCOMMANDS[sub] : undefined;
  if (rule) rule(args.slice(k + 1), st, sub!);
  else if (!sub || !GIT_READ.has(sub)) st.repeatable = false;
};

export const GIT_RULES: RuleTable = { programs: { git } };
