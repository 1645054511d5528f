// File operations: deleting (rm, find -delete, shred), writing (dd, tee, cp, mv, ln, sed -i),
// permissions (chmod, chown), and the directory the next command runs in (cd). Each is dangerous
// when it reaches outside the workspace, the home directory or the root, or arms a git hook.
import path from 'node:path';
import type { Word } from '../shell-lex.js';
import {
  base,
  checkWriteTarget,
  classify,
  COMMAND_OPTION_NAME,
  danger,
  GIT_CODE_REASON,
  gitCodePath,
  hasFlag,
  HOME_CWD,
  MAKE_VARIABLE,
  nestsOnlyVariable,
  operands,
  PATH_WORDS,
  namedTempPath,
  underTempDir,
  URL_TARGET,
  word,
  type Rule,
  type RuleTable,
  type State,
} from '../state.js';
import { CREDENTIAL_FILTER, KEY_SHAPE, SECRET_SEARCH, TEXT_SEARCHERS } from '../secrets.js';
import { judgeUnknownProgram, TEXT_EDITORS } from './unknown.js';

const remove: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  const recursive = (prog === 'rm' && hasFlag(args, 'r', ['--recursive'])) || hasFlag(args, 'R');
  if (args.some((a) => a.text === '--no-preserve-root')) danger(st, 'deletes with --no-preserve-root');
  for (const t of operands(args)) {
    if (t.procSub) continue;
    const c = classify(t, st);
    if (c.cls === 'inside' || namedTempPath(c.abs, t.text)) continue;
    if (c.cls === 'all' && !recursive) continue;
    if ((c.cls === 'variable' || c.cls === 'unknown') && !recursive) continue;
    // A Makefile's own build directory (`rm -rf $(BUILD_DIR) dist`, `$(RM) -r $(RELDIR)`): a recipe's
    // variable names what the build made; its install directories are classified apart, as outside.
    const recipeVariable = MAKE_VARIABLE.exec(t.text)?.[1];
    if (c.cls === 'variable' && recipeVariable !== undefined && recipeVariable !== 'HOME' && nestsOnlyVariable(t, recipeVariable)) continue;
    danger(st, `${recursive ? 'recursively deletes' : 'deletes'} ${PATH_WORDS[c.cls]} (${t.text})`);
  }
};

/** File names that hold keys and credentials, the browsers' cookie and login stores and Erlang's cluster cookie among them. */
const SECRET_FILE_NAME =
  /(\.(pem|key|p12|pfx|jks|keystore|kdbx|asc|gpg|ovpn)|id_(rsa|dsa|ecdsa|ed25519)\*?|credentials?(\.\w+)?|\.env|\.netrc|\.npmrc|\.pypirc|secrets?(\.\w+)?|\*token\*|\*secret\*|\*password\*|shadow|kubeconfig|\.kube|\.aws|\.ssh|\.docker|\.git-credentials|\.?htpasswd|wp-config\.php|cookies(\.sqlite)?|login data|logins\.json|key[34]\.db|\.erlang\.cookie)["']?$/i;

/** Programs that print or search a file's contents. */
const CONTENT_READERS = /^(cat|tac|head|tail|less|more|strings|xxd|od|hexdump|base64|grep|egrep|fgrep|rg|zgrep|zcat|awk|sed)$/;

const find: Rule = ({ args, st }) => {
  const exprAt = args.findIndex((a) => /^[-(!]/.test(a.text));
  const starts = (exprAt < 0 ? args : args.slice(0, exprAt)).filter((a) => !a.text.startsWith('-'));
  const deletes =
    args.some((a) => a.text === '-delete') || args.some((a, k) => /^-(exec|execdir|ok|okdir)$/.test(a.text) && /^(rm|shred|unlink)$/.test(base(args[k + 1])));
  const writes = args.some((a) => /^-(delete|exec|execdir|ok|okdir|fprint|fprint0|fprintf|fls)$/.test(a.text));
  if (writes) st.repeatable = false;
  const names = args.filter((a, k) => /^-(i?name|i?path|i?regex)$/.test(args[k - 1]?.text ?? ''));
  // What -exec runs on each file: a program that prints or searches a file's contents.
  const reader = args.find((a, k) => /^-(exec|execdir|ok|okdir)$/.test(args[k - 1]?.text ?? '') && CONTENT_READERS.test(base(a)));
  for (const s of starts) {
    const c = classify(s, st);
    if (c.cls !== 'inside' && c.cls !== 'all' && names.some((n) => SECRET_FILE_NAME.test(n.text)))
      danger(st, `looks for key or credential files in ${PATH_WORDS[c.cls]} (${s.text})`);
    // Every file's contents across the machine or a home (`find / -name .htpasswd -exec cat {} \;`,
    // `find / -name '*.conf' -exec grep -Hn $keyword {} \;`): the other users' and services' secrets with them.
    if (reader && (c.cls === 'root' || c.cls === 'home'))
      danger(st, `reads the contents of the files it finds in ${PATH_WORDS[c.cls]} (find ${s.text} -exec ${reader.text})`);
  }
  // Every file found given new permissions or owners (`find "$TARGET_DIR" -type f -exec chmod 644 {} \;`), as `chmod -R` gives them.
  const modes = args.find((a, k) => /^-(exec|execdir|ok|okdir)$/.test(args[k - 1]?.text ?? '') && /^(chmod|chown|chgrp)$/.test(base(a)));
  if (!deletes && !modes) return;
  for (const s of starts.length ? starts : [word('.')]) {
    const c = classify(s, st);
    if (c.cls === 'inside' || c.cls === 'all') continue;
    if (deletes) danger(st, `deletes files found in ${PATH_WORDS[c.cls]} (${s.text})`);
    if (modes) danger(st, `changes the permissions or owners of the files found in ${PATH_WORDS[c.cls]} (find ${s.text} -exec ${modes.text})`);
  }
};

/** The words of a credential's kinds a search for secrets looks for. */
const SECRET_KIND = /passw(or)?d|\bpwd\b|secret|token|api[_-]?key|credential|private[ _-]?key|bearer|access[_-]?key/gi;
/** A password's word in a search pattern, not inside a longer name (`PasswordAuthentication`, `AllowNoPassword`, `PASSWD_NOTREQD`) nor a path (`/etc/passwd`). */
const PASSWORD_WORD = /(?<![A-Za-z/]|[A-Z]_)[Pp][Aa][Ss][Ss](?:[Ww][Oo][Rr][Dd]|[Ww][Dd])(?![A-Za-z_])/;
/** A password's short word as one of a pattern's alternatives beside a login's (`"pass\|user\|db"`, `'user|pass'`). */
const PASSWORD_ALTERNATIVE = /^(?=.*(^|\|)(user(name)?|login)(\\?\||$)).*(^|\|)(pass|pwd)(\\?\||$)/i;
/** grep -r, rg, ag, ack: a search for a credential's word (password, token, key) across places outside the workspace. */
const search: Rule = ({ prog, args, st, namesFromInput }) => {
  const recursive = !/^z?e?f?grep$/.test(prog) || hasFlag(args, 'r', ['--recursive', '--dereference-recursive']) || hasFlag(args, 'R');
  const explicit = args.findIndex((a) => /^(-[a-zA-Z]*e|--regexp|-f|--file)$/.test(a.text) || /^--regexp=/.test(a.text));
  const ops = operands(args, /^-(e|f|m|A|B|C|g|t|T|j|d|-regexp|-file|-glob|-type|-max-count)$/);
  const patterns =
    explicit >= 0 ? args.filter((a, k) => /^(-[a-zA-Z]*e|--regexp)$/.test(args[k - 1]?.text ?? '') || /^--regexp=/.test(a.text)) : ops.slice(0, 1);
  // A password picked out of one text (`journalctl -u app | grep password`, `strings heapdump | grep -i password=`,
  // `grep html_password /box/box.ini`): what it prints is the password's line. A search of the project's tree
  // for the word (recursive, or over the files find lists, `-exec grep password {}`, `| xargs grep password`)
  // is a code search and stays judged by where it looks.
  const oneText = !recursive && !namesFromInput && !st.payload;
  if (oneText && patterns.some((p) => PASSWORD_WORD.test(p.text) || PASSWORD_ALTERNATIVE.test(p.text)))
    danger(st, `picks passwords out of the text it reads (${prog} ${patterns.map((p) => p.text).join(' ')})`);
  // So is a private key or a token by its shape (`strings memory.img | grep -A2 "PRIVATE KEY"`, `… | grep -E 'ghp_|AKIA'`).
  if (oneText && patterns.some((p) => KEY_SHAPE.test(p.text)))
    danger(st, `picks private keys or tokens out of the text it reads (${prog} ${patterns.map((p) => p.text).join(' ')})`);
  // A glob is many files at once (`grep 'pass*' /etc/*.conf`): a sweep as a recursive search is.
  if (!recursive && !args.some((a) => /[*?]/.test(a.text) && a.text.startsWith('/'))) return;
  if (!patterns.some((p) => CREDENTIAL_FILTER.test(p.text) || SECRET_SEARCH.test(p.text))) return;
  // Several kinds of credential at once (`grep -RniE 'password|secret|token' .`) is a sweep for secrets, wherever it looks.
  const kinds = new Set(patterns.flatMap((p) => [...p.text.matchAll(SECRET_KIND)].map((m) => m[0].toLowerCase().replace(/^passw(or)?d$/, 'pass'))));
  if (recursive && kinds.size >= 2) danger(st, `sweeps the files for several kinds of credential (${prog} ${patterns.map((p) => p.text).join(' ')})`);
  for (const s of explicit >= 0 ? ops : ops.slice(1)) {
    if (!recursive && !/[*?]/.test(s.text)) continue;
    const c = classify(s, st);
    if (c.cls === 'root' || c.cls === 'home' || c.cls === 'outside') danger(st, `searches ${PATH_WORDS[c.cls]} for credentials (${prog} ${s.text})`);
  }
};

/**
 * Archivers that extract into a directory an option names (`7z x -o/usr/bin`, `unzip -d DIR`,
 * `tar -x -C DIR`): that directory is written.
 */
const extract: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  if (/^7z[a-z]?$/.test(prog)) {
    for (const a of args) if (/^-o./.test(a.text)) checkWriteTarget({ ...a, text: a.text.slice(2) }, st, 'extracts to');
    return;
  }
  // tar's `-P` keeps the leading `/` of the names it stores and extracts: an archive so made or
  // unpacked writes its files wherever those absolute paths point, the machine's own directories.
  if (
    /^(g|bsd)?tar$/.test(prog) &&
    (args.some((a) => a.text === '--absolute-names') ||
      /^-?[A-Za-z]*P/.test(args[0]?.text ?? '') ||
      hasFlag(
        args.filter((a) => !a.text.startsWith('--')),
        'P',
      ))
  )
    danger(st, `keeps the archive's absolute paths, which extracting writes wherever they point (${prog} -P)`);
  if (prog === 'tar') checkTarArchiveWritten(args, st);
  if (
    prog === 'tar' &&
    !(
      hasFlag(
        args.filter((a) => !a.text.startsWith('--')),
        'x',
      ) ||
      /^[^-]*x/.test(args[0]?.text ?? '') ||
      args.some((a) => /^--(extract|get)$/.test(a.text))
    )
  )
    return;
  // unzip's `-d` may end a word of its other switches (`unzip x.zip -od /opt/app`).
  const names = prog === 'tar' ? /^(-C|--directory)$/ : prog === 'unzip' ? /^(-[a-zA-Z]*d|--exdir)$/ : /^(-d|--exdir)$/;
  let named = false;
  args.forEach((a, k) => {
    const inline = /^(--directory|--exdir)=(.*)$/.exec(a.text);
    const dir = inline ? { ...a, text: inline[2]! } : names.test(a.text) ? args[k + 1] : undefined;
    if (dir) checkWriteTarget(dir, st, 'extracts to');
    named ||= dir !== undefined;
  });
  // With no directory named, the archive is written where the shell stands (`cd /etc && tar xzf a.tgz`).
  const lists = prog === 'unzip' && args.some((a) => /^-[a-zA-Z]*[lptvzZ]/.test(a.text));
  if (!named && !lists && args.length > 0 && (prog === 'tar' || prog === 'unzip')) checkWriteTarget(word('.'), st, 'extracts where the shell stands:');
};

/**
 * tar making or adding to an archive (`-c`, `-r`, `-u`, `czf` in the old style) writes the file `-f`
 * names (`tar -czf /opt/app-$(date +%F).tar.gz /opt/app`): wherever that is.
 */
function checkTarArchiveWritten(args: Word[], st: State): void {
  const first = args[0]?.text ?? '';
  const oldStyle = first !== '' && !first.startsWith('-') && /^[A-Za-z]+$/.test(first);
  const short = args.filter((a) => /^-[A-Za-z]+$/.test(a.text));
  const writes =
    (oldStyle && /[cru]/.test(first)) || short.some((a) => /[cru]/.test(a.text.slice(1))) || args.some((a) => /^--(create|append|update)$/.test(a.text));
  if (!writes) return;
  args.forEach((a, k) => {
    const inline = /^--file=(.+)$/.exec(a.text);
    // In a bundle of short flags (`-czf`, old-style `czf`, `cvzfC`), each flag that takes a value takes the next
    // word not yet taken, in the bundle's order: f's is after those of the valued flags before it.
    const flags = ((oldStyle && k === 0) || /^-[A-Za-z]+$/.test(a.text)) && a.text.replace(/^-/, '');
    const bundled = flags && flags.includes('f') ? args[k + 1 + (flags.slice(0, flags.indexOf('f')).match(/[CbLNTXgKV]/g)?.length ?? 0)] : undefined;
    const archive = inline ? { ...a, text: inline[1]! } : a.text === '--file' ? args[k + 1] : bundled;
    if (archive && archive.text !== '-') checkWriteTarget(archive, st, 'writes the archive to');
  });
}

/** Text editors open the files they name to be changed: a save writes each one wherever it is (`nano /etc/motd`). */
const editor: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  for (const f of operands(args, /^-(c|S|u|T|s|w|r|i|q|-cmd|-init|-load|-eval|-funcall)$/))
    if (!/^\+|^[a-z][\w+.-]*:\/\//i.test(f.text)) checkWriteTarget(f, st, 'opens in an editor, whose save writes');
  // A file on another host (`vim scp://admin@host//etc/fstab`) and the options are judged as any program's.
  judgeUnknownProgram(prog, args, st);
};

/** touch and truncate change the files they name (times, length): a write wherever those are. */
const touch: Rule = ({ prog, args, st }) => {
  if (prog === 'truncate') st.repeatable = false;
  for (const f of operands(args, /^-(r|t|d|s|o|-reference|-date|-size)$/)) checkWriteTarget(f, st, 'changes');
  // A quoted name that reads as an option (`touch "--checkpoint-action=exec=sh shell.sh"`) is still a name to plant.
  for (const f of args) if (COMMAND_OPTION_NAME.test(f.text)) checkWriteTarget(f, st, 'creates');
};

/**
 * rename moves the files it is given: Perl's after its expression (`rename 's/a/b/' *.txt`, or all of
 * them with `-e EXPR`), util-linux's after its two strings (`rename .htm .html *.htm`); `-n` only says
 * what it would do.
 */
const rename: Rule = ({ args, st }) => {
  st.repeatable = false;
  if (args.some((a) => /^(-n|--nono|--no-act|--dry-run|-V|--version|-h|--help)$/.test(a.text))) return;
  const ops = operands(args, /^(-e|-E|-u|--unicode)$/);
  const perl = args.some((a) => /^-[eE]$/.test(a.text)) ? 0 : /^(s|y|tr)\W/.test(ops[0]?.text ?? '') ? 1 : 2;
  for (const f of ops.slice(perl)) checkWriteTarget(f, st, 'renames');
};

const dd: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  const of = args.find((a) => a.text.startsWith('of='));
  if (of) checkWriteTarget({ ...of, text: of.text.slice(3) }, st, `writes (${prog}) to`);
  // A whole disk or partition read raw holds every file on it, secrets and other users' included;
  // devices are named differently on every system (sda, nvme0n1, disk2, rdisk2), so any device but
  // the ones that only produce bytes or the input counts.
  const from = args.find((a) => /^if=\/dev\//.test(a.text) && !/^if=\/dev\/(zero|u?random|null|stdin|fd\/\d+|full)$/.test(a.text));
  if (from) danger(st, `reads a disk raw (${prog} ${from.text})`);
};

/**
 * patch rewrites the files a diff names under the directory it is given (`-d`), or the one file it is
 * named, or writes its result to `-o`: under the Go toolchain's sources (`patch -d $(GOROOT)/src/…`) or
 * a system library, it changes what every build on the machine compiles.
 */
const patch: Rule = ({ args, st }) => {
  st.repeatable = false;
  const valueOf = (short: string, long: string) => {
    const at = args.findIndex((a) => a.text === short || a.text === long);
    if (at >= 0) return args[at + 1];
    const joined = args.find((a) => a.text.startsWith(`${long}=`) || (a.text.startsWith(short) && a.text.length > 2));
    return joined && { ...joined, text: joined.text.replace(new RegExp(`^(${long}=|${short})`), '') };
  };
  const dir = valueOf('-d', '--directory');
  if (dir) checkWriteTarget(dir, st, 'patches files in');
  const output = valueOf('-o', '--output');
  if (output) checkWriteTarget(output, st, 'writes the patched file to');
  const [original] = operands(
    args,
    /^(-[pidorBYzVFDgb]|--(strip|input|directory|output|reject-file|prefix|basename-prefix|suffix|version-control|fuzz|ifdef|get|backup-if-mismatch|quoting-style))$/,
  );
  if (original && !dir) checkWriteTarget(original, st, 'patches');
};

const ROOT_OWNER = /^(root|0|wheel)([:.](root|0|wheel)?)?$|^[:.](root|0|wheel)$/;
const permissions: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  const recursive = hasFlag(args, 'R', ['--recursive']);
  // chattr's attributes look like options (`chattr -i FILE` clears the immutable flag).
  const attrs = prog === 'chattr' ? args.findIndex((a) => /^([-+=]|-[RVf]+)[aAcCdDeFijmPsStTux]+$/.test(a.text) && !/^-[RVf]+$/.test(a.text)) : -1;
  // chmod's modes that take permissions away look like options too (`chmod -w FILE`).
  const taken = prog === 'chmod' ? args.findIndex((a) => /^-[rwxXst]+$/.test(a.text)) : -1;
  const [mode, ...targets] =
    attrs >= 0 ? [args[attrs]!, ...operands(args.slice(attrs + 1))] : taken >= 0 ? [args[taken]!, ...operands(args.slice(taken + 1))] : operands(args);
  // A mode for files under the temporary directories (a new file or directory there is no one
  // else's) is theirs to set, unless it makes a program run as its owner (setuid, setgid).
  const tempMode = prog === 'chmod' && mode !== undefined && !/s|^\d*[2-7]\d{3}$/.test(mode.text);
  // A file made immutable or append-only, or freed of it (`chattr -i FILE`): only root may, and it is how
  // a file is kept from being removed or changed, logs and planted files among them.
  if (prog === 'chattr' && mode !== undefined && /[ia]/.test(mode.text.slice(1).replace(/^[RVf]+/, '')))
    danger(st, `makes files immutable or append-only, or frees them of it, which only root may do (chattr ${mode.text})`);
  // A program made to run as its owner (setuid, setgid), or a file given to root, is a way to root
  // wherever it lies: a copied shell in the workspace, a path in a variable, a mounted share.
  if (prog === 'chmod' && mode !== undefined && targets.length > 0 && /^[ugoa]*[+=][rwxXt]*s|^\d*[2-7]\d{3}$/.test(mode.text))
    danger(st, `makes a program run as its owner, setuid or setgid (chmod ${mode.text})`);
  // `root`, `root:`, `root:wheel`, `:root`, `0.0`: the owner, the group or both made root's. The workspace's files
  // given root's group alone (`chgrp 0 entrypoint.sh`, an image made to run under any user id) keep their owner.
  const groupOfWorkspaceFiles = prog === 'chgrp' && targets.every((t) => classify(t.text, st).cls === 'inside');
  if (/^(chown|chgrp)$/.test(prog) && mode !== undefined && targets.length > 0 && ROOT_OWNER.test(mode.text) && !groupOfWorkspaceFiles)
    danger(st, `gives files to root (${prog} ${mode.text})`);
  // Another account named as the owner (`chown www-data:www-data -R storage`, `chown nobody dir`): only root
  // may give files away, and the files then answer to that account. The user's own name, read from the
  // shell (`$(logname)`, `$USER`), or a group alone (`:staff`) is the user's to set.
  else if (prog === 'chown' && mode !== undefined && targets.length > 0 && /^[a-z_][\w-]*[$]?([:.]|$)/.test(mode.text) && !mode.expands)
    danger(st, `gives files to another account, which only root may do (${prog} ${mode.text})`);
  for (const t of targets) {
    // The mode or owner comes first. `chmod +x .git/hooks/pre-commit` arms a hook.
    if (gitCodePath(t, st)) danger(st, `changes the permissions of ${t.text}, ${GIT_CODE_REASON}`);
    if (URL_TARGET.test(t.text)) {
      danger(st, `changes ownership or permissions of ${t.text} (another machine)`);
      continue;
    }
    const c = classify(t, st);
    if (c.cls === 'inside' || (c.cls === 'all' && !recursive)) continue;
    if (tempMode && underTempDir(c.abs)) continue;
    if (c.cls === 'variable' || c.cls === 'unknown') {
      if (recursive) danger(st, `recursively changes permissions of ${PATH_WORDS[c.cls]} (${t.text})`);
      continue;
    }
    danger(st, `${recursive ? 'recursively ' : ''}changes ownership or permissions of ${PATH_WORDS[c.cls]} (${t.text})`);
  }
};

const tee: Rule = ({ args, st }) => {
  for (const t of operands(args)) checkWriteTarget(t, st, 'writes to');
  if (hasFlag(args, 'a', ['--append'])) st.repeatable = false;
};

/** A program in one of the machine's own program directories, named by its whole path. */
const SYSTEM_PROGRAM = /^\/(usr\/(local\/)?)?s?bin\/[\w.+-]+$/;

/** A variable named for a staging, build or temporary directory (`$tempdir`, `${DPKG_DIR}`, `$(BUILD_DIR)`): the package's own. */
const STAGING_VARIABLE = /^["']?\$[({]?\w*(tmp|temp|dpkg|pkg|stag|build|out|dist|work)/i;
/**
 * `install` into a place a variable names (`install -m755 x $(BIN)/x`, `install -Dm644 icon.png "$ICON_PATH"`,
 * `install -t "$(BIN_DIR)/"`) installs where the Makefile's or the script's install goes, the machine's
 * directories; a staging or build directory's variable is the package's own, and `install` is for installing.
 */
function installsWhereAVariableSays(dest: Word, st: State): void {
  if (/^["']?\$[({]?\w/.test(dest.text) && !STAGING_VARIABLE.test(dest.text))
    danger(st, `installs into ${dest.text}, an install directory a variable of the Makefile or script names`);
}

/** cp, mv, install, ln, rsync, scp: the destination is written; mv also takes its sources away. */
const copy: Rule = ({ prog, args, st }) => {
  if (prog === 'ln') {
    // A link to a place outside is a way out for every later command. A symbolic link's relative
    // target is resolved from the directory the link is made in, not from here.
    const ops = operands(args, /^-(t|S)$/);
    const symbolic = hasFlag(args, 's', ['--symbolic']);
    const t = args.findIndex((a) => a.text === '-t');
    const linkDir = t >= 0 ? args[t + 1]?.text : ops.length >= 2 ? ops[ops.length - 1]!.text : '.';
    const from = (src: Word) =>
      symbolic && st.cwd !== null && linkDir !== undefined && !path.isAbsolute(src.text) && !src.text.startsWith('~') && !src.expands
        ? { ...st, cwd: path.resolve(st.cwd, linkDir.endsWith('/') || linkDir === '.' ? linkDir : path.dirname(linkDir)) }
        : st;
    for (const src of t >= 0 ? ops : ops.slice(0, -1)) {
      // A symbolic link to one of the machine's programs (`ln -s /usr/bin/distcc gcc`) is another name
      // to run it by: only root may write through it.
      if (symbolic && SYSTEM_PROGRAM.test(src.text) && !src.expands) continue;
      const c = classify(src, from(src));
      if (c.cls === 'root' || c.cls === 'home' || c.cls === 'outside') danger(st, `links to ${src.text} (${PATH_WORDS[c.cls]}), a way out of the workspace`);
    }
    // With one operand and no `-t` the link is made where the command stands, named as its target's last part.
    if (t < 0 && ops.length === 1 && !ops[0]!.expands) checkWriteTarget(word(path.basename(ops[0]!.text)), st, 'creates a link at');
  }
  st.repeatable = false;
  const ops = operands(args, /^-(t|S|m|o|g|e)$/);
  // `install -d` makes every directory it is given (`install -m 0755 -d /etc/apt/keyrings`).
  if (prog === 'install' && hasFlag(args, 'd', ['--directory'])) {
    for (const dir of ops) {
      checkWriteTarget(dir, st, 'makes a directory at');
      installsWhereAVariableSays(dir, st);
    }
    return;
  }
  // A remote end (`host:path`, `host::module`, `rsync://`, a login before a host a variable holds,
  // `$user@$source_dir`) moves files between here and another machine.
  if (prog === 'rsync' || prog === 'scp') {
    const remote = ops.find((o) => /^[^/]*:/.test(o.text) || /^(rsync|scp|sftp):\/\//.test(o.text) || (o.expands && /^[^/]*@\$/.test(o.text)));
    if (remote) danger(st, `copies files to or from another machine (${prog} ${remote.text})`);
  }
  const targetDir = args.findIndex((a) => a.text === '-t' || a.text.startsWith('--target-directory'));
  const dest =
    targetDir >= 0
      ? args[targetDir]!.text.includes('=')
        ? { ...args[targetDir]!, text: args[targetDir]!.text.split('=')[1]! }
        : args[targetDir + 1]
      : ops[ops.length - 1];
  // rsync's rehearsal (`-n`, `--dry-run`) lists what it would copy and writes nothing.
  const rehearses = prog === 'rsync' && hasFlag(args, 'n', ['--dry-run']);
  if (dest && !rehearses && ops.length >= (targetDir >= 0 ? 1 : 2) && (!/^[^/]*:/.test(dest.text) || URL_TARGET.test(dest.text)))
    checkWriteTarget(dest, st, prog === 'ln' ? 'creates a link at' : 'writes to');
  if (prog === 'install' && dest) installsWhereAVariableSays(dest, st);
  if (prog === 'mv') {
    for (const s of targetDir >= 0 ? ops : ops.slice(0, -1)) {
      const c = classify(s, st);
      if ((c.cls === 'root' || c.cls === 'home' || c.cls === 'outside') && !namedTempPath(c.abs, s.text)) danger(st, `moves ${s.text} (${PATH_WORDS[c.cls]})`);
    }
  }
};

const inPlace = (a: Word) => /^-[a-zA-Z]*i/.test(a.text) || a.text.startsWith('--in-place');

const sed: Rule = ({ args: given, st }) => {
  if (!given.some(inPlace)) return;
  // BSD's and macOS' sed take `-i`'s backup suffix as the next word (`sed -i '' 's/a/b/' f`): an empty one keeps no backup.
  const args = given.filter((a, k) => !(a.text === '' && given[k - 1]?.text === '-i'));
  const files = operands(args, /^-(e|f)$/).slice(args.some((a) => /^-(e|f)$/.test(a.text)) ? 0 : 1);
  for (const f of files) checkWriteTarget(f, st, 'edits');
  st.repeatable = false;
};

const awk: Rule = ({ args, st }) => {
  if (args.some((a) => /system\s*\(|print[f]?[^;}]*>\s*"|getline|-i\s*inplace/.test(a.text) || a.text === 'inplace')) st.repeatable = false;
};

const cd: Rule = ({ args, st }) => {
  const to = args[0];
  // The home (`cd`, `cd ~`, `cd ~/src`, `cd $HOME`) is a place of its own: what is made there lies outside the workspace.
  const home = to && !to.literalTilde ? /^(~|\$\{?HOME\}?)(?=\/|$)/.exec(to.text) : null;
  if (!to) st.cwd = HOME_CWD;
  else if (home) st.cwd = path.join(HOME_CWD, to.text.slice(home[0].length));
  else if (to.text === '-' || to.expands) st.cwd = null;
  else if (st.cwd !== null || path.isAbsolute(to.text)) st.cwd = path.resolve(st.cwd ?? '/', to.text);
};

/**
 * The pagers: they show the files they are given, wherever they lie (a secret's path is judged wherever
 * a command names it), or their input; the shell commands of their `+!` arguments are payloads
 * (programs/executors.ts).
 */
const pager: Rule = () => {};

/**
 * radare2 and its tools open a binary to read it (`r2 /bin/ls`, `rabin2 -s /bin/ls`, `rafind2 -s lib
 * FILE`), wherever it lies; they change it only when told to write (`-w`, rabin2's `-O`), run it under
 * the debugger (`-d`), or run commands and scripts of their own (`-c`, `-i`, `-I`), which may shell out.
 */
const R2_ACTS = /^-[a-zA-Z]*[wdO]/;
const binaryReader: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  for (const [k, a] of args.entries()) {
    // `-c '!cmd'` and r2's `#!pipe`/`!` commands run a shell; a script (`-i`, `-I`) is unread.
    if (/^-[a-zA-Z]*c$/.test(a.text) && /(^|;)\s*(!|#!)/.test(args[k + 1]?.text ?? '')) return danger(st, `runs a shell command through ${prog} -c`);
    if (/^-[iI]$/.test(a.text)) return danger(st, `runs a ${prog} script, which the checker cannot read (${prog} ${a.text})`);
  }
  if (args.some((a) => R2_ACTS.test(a.text))) judgeUnknownProgram(prog, args, st);
};

/**
 * fd searches where its operands after the pattern (or `--search-path`) point, as find does: listing names
 * anywhere reads; what it runs on each file found (`-x rm`, `--exec-batch`) is judged as a command
 * (executors.ts), and a program that deletes or rewrites changes outside the workspace when the search starts there.
 */
const FD_VALUED =
  /^(-e|--extension|-t|--type|-E|--exclude|-d|--max-depth|--min-depth|--exact-depth|-S|--size|-c|--color|-j|--threads|--changed-within|--changed-before|-o|--owner|--base-directory|--max-results|--format|--and|--ignore-file|--path-separator|--batch-size|--search-path)$/;
const fd: Rule = ({ prog, args, st }) => {
  const run = args.findIndex((a) => /^(-x|--exec|-X|--exec-batch)$/.test(a.text));
  if (run < 0) return;
  const own = args.slice(0, run);
  const searchPaths = own.flatMap((a, k) => (/^--search-path$/.test(own[k - 1]?.text ?? '') ? [a] : []));
  const roots = [...operands(own, FD_VALUED).slice(1), ...searchPaths];
  const changer = /^(rm|shred|unlink|srm|wipe|mv|chmod|chown|chgrp|truncate|sed|perl|touch|dos2unix)$/.test(args[run + 1]?.text ?? '');
  const outside = changer ? roots.find((r) => ['root', 'home', 'outside'].includes(classify(r, st).cls)) : undefined;
  if (outside) danger(st, `changes every file it finds outside the workspace (${prog} ${outside.text} ${args[run]!.text} ${args[run + 1]!.text})`);
};

/**
 * The user's calendars and address books, kept in the home (khal's and khard's vdir folders) and synced to
 * their CalDAV and CardDAV servers by vdirsyncer: an event or a contact added, imported, edited or removed
 * changes the user's own records, and a sync carries it to the server. Listing and searching read.
 */
const PERSONAL_RECORD_CHANGES: Readonly<Record<string, RegExp>> = {
  khal: /^(new|import|edit|interactive)$/,
  ikhal: /^/,
  khard: /^(new|add|add-email|edit|modify|remove|delete|del|merge|copy|cp|move|mv|import)$/,
  vdirsyncer: /^(sync|discover|metasync|repair)$/,
};
const personalRecords: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  const verb = operands(args, /^(-a|--calendar|-c|--config|-i|--include-calendar|-d|--exclude-calendar)$/)[0]?.text ?? '';
  if (PERSONAL_RECORD_CHANGES[prog]!.test(verb) && !args.some((a) => /^(-h|--help|--version)$/.test(a.text)))
    danger(st, `changes the user's calendars or address books (${prog}${verb ? ` ${verb}` : ''})`);
};

export const FILE_RULES: RuleTable = {
  programs: {
    ...Object.fromEntries(Object.keys(PERSONAL_RECORD_CHANGES).map((p) => [p, personalRecords])),
    fd,
    fdfind: fd,
    r2: binaryReader,
    radare2: binaryReader,
    rabin2: binaryReader,
    rafind2: binaryReader,
    less: pager,
    more: pager,
    ...Object.fromEntries(TEXT_EDITORS.map((p) => [p, editor])),
    rm: remove,
    rmdir: remove,
    unlink: remove,
    shred: remove,
    srm: remove,
    find,
    dd,
    // The forensic copies of dd (dcfldd, dc3dd) take its operands.
    dcfldd: dd,
    dc3dd: dd,
    chmod: permissions,
    chown: permissions,
    chgrp: permissions,
    chattr: permissions,
    chflags: permissions,
    tee,
    cp: copy,
    mv: copy,
    ...Object.fromEntries(['rename', 'prename', 'perl-rename', 'file-rename'].map((p) => [p, rename])),
    install: copy,
    ln: copy,
    rsync: copy,
    scp: copy,
    sed,
    sort: ({ args, st }) => {
      if (args.some((a) => /^-[a-zA-Z]*o/.test(a.text) || a.text.startsWith('--output'))) st.repeatable = false;
    },
    awk,
    gawk: awk,
    mawk: awk,
    yq: ({ args, st }) => {
      if (hasFlag(args, 'i', ['--inplace'])) st.repeatable = false;
    },
    // A directory made is a write where it lands (`mkdir /Library/StartupItems/x` is how a startup item begins).
    mkdir: ({ args, st }) => {
      if (!hasFlag(args, 'p', ['--parents'])) st.repeatable = false;
      for (const d of operands(args, /^(-m|--mode|-Z|--context)$/)) checkWriteTarget(d, st, 'makes a directory in');
    },
    cd,
    pushd: cd,
    touch,
    truncate: touch,
    patch,
    ...Object.fromEntries(TEXT_SEARCHERS.map((p) => [p, search])),
    ...Object.fromEntries(['7z', '7za', '7zr', '7zz', 'unzip', 'tar', 'gtar', 'bsdtar'].map((p) => [p, extract])),
  },
};
