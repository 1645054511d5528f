// The machine itself: signalling processes (which may be the worker's), shutting down, formatting
// disks, changing accounts and cron. These are dangerous whatever the workspace.
import type { SimpleCommand, Word } from '../shell-lex.js';
import {
  checkWriteTarget,
  classify,
  danger,
  dangerUnlessOnlyAsked,
  hasFlag,
  namesThisMachine,
  onlyAsksAbout,
  operands,
  optionValue,
  type Rule,
  type RuleTable,
  type State,
  word,
} from '../state.js';
import { verbs } from './macos.js';
import { judgeUnknownProgram, otherMachineAddress } from './unknown.js';

/** `$(pgrep name)`, `$(pidof name)`: the pids of the processes a name matches, a kill by name as pkill's (a user's aside). */
const PIDS_BY_NAME = /^"?\$\((pgrep|pidof)\s(?!(?:[^()]*\s)?-[a-zA-Z]*u)[^()$`;|&]*\)"?$/;
/** `$(ps | grep vmx | awk '{print $2}')`: the pids of the processes a grep of ps picks by name, the same kill by name. */
const PIDS_BY_PS =
  /^"?\$\(ps\b[^()`;&|]*\|\s*grep\s+(?:-[a-zA-Z]+\s+)*['"]?([\w./-]+)['"]?((?:\s*\|\s*grep\s+-v\s+[\w'"-]+)*\s*\|\s*(awk\s+'\{\s*print \$\d\s*\}'|cut\s[^()`;&|]*))\)"?$/;
/** The same picked with backticks or with a grep of a quoted variable (`` `ps aux | grep -i aircrack | awk '{print $2}'` ``). */
const PIDS_BY_PS_BACKTICKS =
  /^"?(\$\(|`)ps\b[^()`;&|]*\|\s*grep\s+(?:-[a-zA-Z]+\s+)*("?\$\w+"?|['"]?[\w./-]+['"]?)\s*\|\s*awk\s+'\{\s*print \$\d\s*\}'(\)|`)"?$/;
const pidsByName = (t: string) => PIDS_BY_NAME.test(t) || PIDS_BY_PS.test(t) || PIDS_BY_PS_BACKTICKS.test(t);
/**
 * A pid the command's own script kept: its last background job (`$!`), a variable named for the pid of
 * a process it started (`$WIREMOCK_PID`, `"$luna_pid"`, `$SERVER_PID2`, a bare `$pid` as scripts name the
 * one they started) or a pid file in the workspace (`$(cat .godoc.pid)`, make's `$$(…)`). The parent's
 * `$PPID` may be anyone's, the worker's among them; a pid file of the system (`/var/run/…`) is another program's.
 */
const OWN_PID = /^"?(\$!|\$\{!\}|\$\{?([A-Za-z]\w*_)?(PID|pid)\d*\}?|\$?\$\(cat\s+[\w.-][\w./-]*\.pid\))"?$/;

/**
 * The machine's security and logging daemons (audit, syslog, the journal, intrusion detection,
 * endpoint agents, log shippers): killing one blinds whoever watches the machine, whatever the
 * signal.
 */
const WATCHERS =
  /(^|[\s/'"^(|])(auditd|kauditd|auditbeat|rsyslogd?|syslog-ng|syslogd|systemd-journald|journald|falco|falcon-sensor|falcond|falconctl|osqueryd|wazuh-[\w-]+|wazuh|ossec-[\w-]+|aide|sysdig|tetragon|tracee|mdatp|wdavdaemon|sentinelone|sentinelagent|cbagentd|cbdaemon|elastic-agent|elastic-endpoint|filebeat|packetbeat|splunkd|fluentd|fluent-bit|td-agent|datadog-agent|amazon-cloudwatch-agent|google-fluentd|nxlog|snort|suricata|clamd|fail2ban-server|sysmon)($|[\s'"$)|.*])/;

/** The names a kill reaches by name: pkill's and killall's operands, `$(pgrep NAME)` in kill's. */
function namesKilled(prog: string, args: Word[]): string[] {
  if (prog === 'kill')
    return args.filter((a) => pidsByName(a.text)).map((a) => PIDS_BY_PS.exec(a.text)?.[1] ?? a.text.replace(/^"?\$\((pgrep|pidof)\s/, '').replace(/\)"?$/, ''));
  return operands(args, /^-(s|signal|u|U|g|G|P|t|o|n)$/).map((a) => a.text);
}

/**
 * The machine's own services (web and database servers, ssh, the container runtime, the scheduler, and
 * macOS' desktop and system agents, which launchd starts again with the user's session reset):
 * killing one by name takes it away from every user of the machine, not the run's own process.
 */
const MACHINE_SERVICES =
  /^(apache2|httpd|nginx|lighttpd|caddy|sshd|mysqld|mariadbd|mysql|postgres|postmaster|mongod|redis-server|memcached|dockerd|containerd|kubelet|k3s|cron|crond|atd|named|dnsmasq|smbd|nmbd|vsftpd|proftpd|cupsd|avahi-daemon|NetworkManager|wpa_supplicant|dbus-daemon|systemd|init|polkitd|php-fpm[\d.]*|Dock|Finder|SystemUIServer|cfprefsd|AudioComponentRegistrar|coreaudiod|WindowServer|loginwindow|mDNSResponder|NotificationCenter|ControlCenter|launchd)$/;

/**
 * `ps aux | grep falcon | awk '{print $2}' | xargs kill -9`: a pipeline that ends in a kill fed the
 * pids its earlier commands picked by a name kills what that name matches, as pkill does.
 */
export function watcherKilledThroughPipe(commands: SimpleCommand[], st: State): void {
  const last =
    commands
      .at(-1)
      ?.words.map((w) => w.text)
      .join(' ') ?? '';
  if (commands.length < 2 || !/^`?xargs\b[^|]*\bkill\b/.test(last)) return;
  const names = commands.slice(0, -1).flatMap((c) => c.words.slice(1).map((w) => w.text.replace(/^['"]|['"]$/g, '')));
  judgeNamesKilled(names, (n) => `xargs kill of ${n}`, st);
}

/** A kill that reaches these names takes a security or logging daemon, else a service, away from the machine. */
export function judgeNamesKilled(names: string[], shown: (name: string) => string, st: State): void {
  const watcher = names.find((n) => WATCHERS.test(n));
  const service = names.find((n) => MACHINE_SERVICES.test(n));
  if (watcher) danger(st, `kills a security or logging daemon of the machine (${shown(watcher)})`);
  else if (service) danger(st, `kills a service of the machine (${shown(service)})`);
}

const kill: Rule = ({ prog, args, st }) => {
  judgeNamesKilled(namesKilled(prog, args), (n) => `${prog} ${n}`, st);
  // The shell's own process and group (`kill -- -$$` in a trap) are the command's own, signalled with a
  // standard signal; a real-time one or SIGSYS to itself (`kill -59 $$`, `kill -31 0`) is how rootkits are told to hide it.
  // The shell's own background jobs (`kill $(jobs -p)` in an exit trap) are the command's own too, and so is
  // process group 0 (`trap 'kill 0' EXIT`): the command's own, since every command starts in a group of its own.
  const ownShell = (t: string) =>
    (/^-?\$\$$/.test(t) || /^"?\$\(jobs -p\)"?$/.test(t) || t === '0') && !args.some((a) => /^-(\d+)$/.test(a.text) && Number(a.text.slice(1)) >= 31);
  // The signal a script keeps in a variable (`kill -s $sig`) names no process.
  const targets = args.filter((a, k) => !(k > 0 && /^-(s|n)$/.test(args[k - 1]!.text)));
  if (
    prog === 'kill' &&
    targets.some((a) => (a.expands && !pidsByName(a.text) && !ownShell(a.text) && !OWN_PID.test(a.text)) || (/^\d+$/.test(a.text) && !ownShell(a.text)))
  )
    danger(st, 'signals a process by pid (kill), which may be the worker');
  st.repeatable = false;
  if (prog === 'killall5') return danger(st, 'kills every process (killall5)');
  if (prog === 'kill') {
    let k = 0;
    if (args[0] && /^-(\d+|[A-Z][A-Z0-9+]*|SIG\w+)$/.test(args[0].text)) k = 1;
    else if (args[0] && /^-(s|n)$/.test(args[0].text)) k = 2;
    const pids = args.slice(k).filter((a) => a.text !== '--');
    if (pids.some((a) => a.text === '-1')) danger(st, 'kills every process the user can signal (kill -1)');
  }
  // By user, every process of theirs goes: root's are the machine's, anyone's include the worker's or their session.
  const user = args.findIndex((a) => a.text === '-u' || a.text === '-U');
  if ((prog === 'pkill' || prog === 'killall') && user >= 0)
    danger(st, args[user + 1]?.text === 'root' ? `kills root's processes (${prog})` : `kills every process of a user (${prog} ${args[user]!.text})`);
};

/**
 * fuser names the processes that hold a file, a mount or a port (`fuser -n tcp 80`, `fuser -v
 * /dev/snd`); with `-k` it kills them, whoever's they are (another user's server, the worker itself).
 */
const fuser: Rule = ({ args, st }) => {
  st.repeatable = false;
  if (args.some((a) => a.text === '--kill' || /^-[a-zA-Z]*k/.test(a.text))) danger(st, 'kills every process that holds a file or a port (fuser -k)');
};

/**
 * xhost changes who may use this machine's X display: `+` (or `+host`) lets any host, or that host,
 * read its keystrokes and screen and draw windows on it. Without `+` it lists or takes access away.
 */
const xhost: Rule = ({ args, st }) => {
  st.repeatable = false;
  const opened = args.find((a) => a.text.startsWith('+'));
  if (opened) danger(st, `opens the X display to other hosts (xhost ${opened.text})`);
};

/**
 * Windows' shadow copies are the machine's backups and restore points: vssadmin's `delete` and
 * `resize shadowstorage` (which drops the oldest) destroy them, as ransomware does first; `create`
 * makes one, the way a locked SAM, SYSTEM or NTDS.dit is copied out. Listing them (`vssadmin list shadows`) only reads.
 */
const shadowCopies: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  if (/^(delete|resize)$/i.test(args[0]?.text ?? '')) danger(st, `deletes the machine's shadow copies, its backups (${prog} ${args[0]!.text})`);
  if (/^create$/i.test(args[0]?.text ?? ''))
    danger(st, `makes a shadow copy of a volume, where the locked registry hives and the domain's database can be copied from (${prog} create)`);
};

/** The machine's package managers (systemPackages). */
export const SYSTEM_PACKAGE_MANAGERS: readonly string[] = [
  'apt',
  'apt-get',
  'aptitude',
  'dpkg',
  'rpm',
  'rpm-ostree',
  'dnf',
  'yum',
  'microdnf',
  'yum-config-manager',
  'zypper',
  'pacman',
  'apk',
  'snap',
  'flatpak',
  'pkg',
  'pkg_add',
  'pkg_delete',
  'opkg',
  'emerge',
  'xbps-install',
  'xbps-remove',
  // Solus' package manager; Solaris' pkg-get (Blastwave and OpenCSW).
  'eopkg',
  'pkg-get',
  // PHP's extension installers put extensions into the machine's PHP (PECL's, and the official images' helpers).
  'pecl',
  'docker-php-ext-install',
  'install-php-extensions',
  'docker-php-ext-enable',
  // NetBSD's binary package manager; Slackware's package tools, whose names say the change.
  'pkgin',
  // The xx cross-compilation helpers' wrappers of apt and apk, which install the target's packages into the machine.
  'xx-apt',
  'xx-apt-get',
  'xx-apk',
  // Debian's installer of a package file with its dependencies, yum's of a spec's build dependencies; Amazon Linux 2's topics of packages.
  'gdebi',
  'yum-builddep',
  'amazon-linux-extras',
  // Exherbo's Paludis client.
  'cave',
  'installpkg',
  'removepkg',
  'upgradepkg',
  // Debian's package marks (held, automatic) and a package's configuration asked again; Gentoo's
  // selections (a repository enabled, the kernel or compiler chosen) and its tree's maintenance.
  'apt-mark',
  'dpkg-reconfigure',
  'eselect',
  'emaint',
  // Debian's builder of a package of a source's build dependencies installs it with `-i`.
  'mk-build-deps',
  // Cygwin's apt-like installer; Pacstall, Ubuntu's AUR-like one.
  'apt-cyg',
  'pacstall',
  // The AUR's helpers take pacman's verbs.
  'yay',
  'paru',
  'pikaur',
  'yaourt',
  'trizen',
  'pakku',
  'aurman',
  'pacaur',
  'aura',
];

/**
 * The machine's package managers: installing, removing or updating changes every program on the
 * machine and runs the packages' scripts as root, a package file from anywhere included; adding,
 * enabling or removing a repository (`zypper ar`, `dnf config-manager --set-enabled`, `flatpak remote-add`) changes where
 * every later install comes from; cleaning deletes the package cache under /var and `makecache` rewrites it. Queries (list,
 * search, show, -q) only read.
 */
const SYSTEM_PACKAGE_CHANGE =
  /^(install|reinstall|localinstall|groupinstall|groupremove|groupupdate|uninstall|remove|erase|purge|autoremove|clean|autoclean|upgrade|update|update-minimal|upgrade-minimal|dist-upgrade|full-upgrade|distro-sync|makecache|downgrade|add|del|delete|build-dep|builddep|in|rm|up|dup|refresh|ref|sync|ar|addrepo|rr|removerepo|mr|modifyrepo|remote-add|remote-delete|remote-modify|--add-architecture|--remove-architecture|override|rebase|rollback|deploy|kargs|--set-enabled|--set-disabled|--add-repo|--enable|--disable|-i|--install|-U|--upgrade|-e|--erase|-r|--remove|-P|--purge|--configure|--unpack|-F|--freshen|-S[a-zA-Z]*|-R[a-zA-Z]*|-[a-zA-Z]*[iUe][a-zA-Z]*h?)$/;
/** Paludis' `cave resolve` or `uninstall`, which only shows its plan until told to carry it out (`-x`), or `cave sync`, which replaces the repositories. */
const caveCarriesOut = (args: Word[]) => {
  const command = operands(args)[0]?.text ?? '';
  return command === 'sync' || (/^(resolve|uninstall)$/.test(command) && args.some((a) => /^(-x|--execute|-[a-zA-Z]*x[a-zA-Z]*)$/.test(a.text)));
};
/** Flags a manager reads its own way: dpkg's -S searches for the package that owns a file, pacstall's -S searches its repositories. */
const OWN_QUERY_FLAG: Readonly<Record<string, RegExp>> = { dpkg: /^-S$/, pacstall: /^(-S|--search)$/ };
/** pacstall (the Pacstall AUR-like installer for Ubuntu) installs with -I and adds a repository with -A; aura installs the AUR's packages with -A. */
const OWN_CHANGE_FLAG: Readonly<Record<string, RegExp>> = { pacstall: /^(-I|-A|--add-repo|-Up)$/, aura: /^-A[uxkadc]*$/ };
const systemPackages: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  // Queries in a flag cluster (rpm -qi, pacman -Ss, -Si, -Ql) only read; so do a manager's own searches that look like another's changes.
  const change = args.find(
    (a) =>
      (SYSTEM_PACKAGE_CHANGE.test(a.text) || OWN_CHANGE_FLAG[prog]?.test(a.text)) &&
      !/^-[a-zA-Z]*[qQ]|^-S[sigpl]+$/.test(a.text) &&
      !OWN_QUERY_FLAG[prog]?.test(a.text),
  );
  // DNF's module streams switched (`dnf module enable ruby:3.1`) change which version every later install takes.
  const [command, sub = ''] = operands(args).map((a) => a.text);
  if (change) danger(st, `changes the machine's installed packages (${prog} ${change.text})`);
  else if (command === 'module' && /^(enable|disable|reset|switch-to)$/.test(sub))
    danger(st, `changes the machine's package module streams (${prog} module ${sub})`);
  // The AUR's helpers given only words (`yay tenv-bin`) search for them and install the package chosen.
  else if (/^(yay|paru)$/.test(prog) && operands(args).length > 0 && !args.some((a) => a.text.startsWith('-')))
    danger(st, `changes the machine's installed packages (${prog} ${operands(args)[0]!.text})`);
  // OpenBSD's pkg_add and pkg_delete, Void's xbps-install and xbps-remove and yum-builddep say the change in their
  // name: any package named is one (`xbps-install -Sy`, a sync and update, names none and is one too).
  else if (
    /^(pkg_(add|delete)|xbps-(install|remove)|docker-php-ext-(install|enable)|install-php-extensions|installpkg|removepkg|upgradepkg|gdebi|yum-builddep)$/.test(
      prog,
    ) &&
    (operands(args).length || prog === 'xbps-install') &&
    !onlyAsksAbout(args)
  )
    danger(st, `changes the machine's installed packages (${prog})`);
  else if (
    (prog === 'apt-mark' && /^(hold|unhold|auto|manual|minimize-manual)$/.test(operands(args)[0]?.text ?? '')) ||
    (prog === 'dpkg-reconfigure' && operands(args).length > 0) ||
    (prog === 'eselect' && operands(args).some((a) => /^(set|unset|enable|disable)$/.test(a.text))) ||
    (prog === 'emaint' && args.some((a) => /^(-f|--fix)$/.test(a.text))) ||
    // A Copr repository enabled or an Amazon Linux topic enabled changes where later installs come from.
    (/^(dnf|yum)$/.test(prog) && operands(args)[0]?.text === 'copr' && /^(enable|disable|remove)$/.test(operands(args)[1]?.text ?? '')) ||
    (prog === 'amazon-linux-extras' && /^(enable|disable)$/.test(operands(args)[0]?.text ?? ''))
  )
    danger(st, `changes the machine's installed packages or their settings (${prog} ${operands(args)[0]?.text ?? ''})`);
  else if (prog === 'cave' && caveCarriesOut(args)) danger(st, `changes the machine's installed packages (cave ${operands(args)[0]!.text})`);
  // Portage merges any package it is named (`emerge -av github-cli`) and `--sync` replaces the tree, unless it only pretends, searches or informs.
  else if (
    prog === 'emerge' &&
    (args.some((a) => a.text === '--sync') || operands(args).length) &&
    !args.some((a) => /^(-[a-zA-Z]*p[a-zA-Z]*|--pretend|-s|--search|-S|--searchdesc|--info|-h|--help)$/.test(a.text))
  )
    danger(st, `changes the machine's installed packages (emerge)`);
};

/**
 * nix-env installs into the user's own profile (`nix-env -iA nixos.gh`), as `nix profile add` does; a
 * profile of the machine's (`-p /nix/var/nix/profiles/default`) is everyone's.
 */
const nixEnv: Rule = ({ args, st }) => {
  st.repeatable = false;
  const k = args.findIndex((a) => /^(-p|--profile)(=|$)/.test(a.text));
  const profile = k < 0 ? undefined : args[k]!.text.includes('=') ? args[k]!.text.slice(args[k]!.text.indexOf('=') + 1) : args[k + 1]?.text;
  if (profile && /^\/nix\/var\/nix\/profiles\/(default|system|per-user\/root)/.test(profile))
    danger(st, `changes the machine's installed packages (nix-env -p ${profile})`);
};

/**
 * rosdep installs a ROS workspace's system dependencies with the machine's package manager (apt, dnf,
 * through sudo) unless told to simulate, and `init` writes its sources under /etc; its queries read.
 */
const rosdep: Rule = ({ args, st }) => {
  st.repeatable = false;
  const verb = operands(args)[0]?.text;
  if (verb === 'init' || (verb === 'install' && !args.some((a) => /^(-s|--simulate|--reinstall-check)$/.test(a.text))))
    danger(st, `changes the machine's installed packages through its package manager (rosdep ${verb})`);
};

/**
 * Windows' Subsystem for Linux: installing, removing, importing, shutting down or setting up its
 * distributions changes the Windows machine; entering another distribution, or as another of its
 * users, runs there. Listing them and a command in the default distribution (`wsl ls -la`) do neither.
 */
const wsl: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  const change = args.find((a) =>
    /^(--install|--uninstall|--unregister|--shutdown|--terminate|-t|--set-default-version|--set-version|--set-default|-s|--import|--import-in-place|--update|--mount|--unmount|--manage|--export)$/.test(
      a.text,
    ),
  );
  if (change) return danger(st, `changes the machine's Linux distributions or their virtual machine (${prog} ${change.text})`);
  const elsewhere = args.find((a) => /^(-d|--distribution|-u|--user|--system)$/.test(a.text));
  if (elsewhere) danger(st, `runs in another Linux distribution or as another of its users (${prog} ${elsewhere.text})`);
};

/**
 * PostgreSQL's account and database tools: a role made or dropped is an account of the database server's,
 * a database dropped is its data gone.
 */
const postgresAdmin: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  if (!onlyAsksAbout(args)) danger(st, `creates or drops a database server's account, or drops a database (${prog})`);
};

/**
 * Nix's channels are the user's package sources: adding, removing or rolling one back changes what
 * every later `nix-env` and `nix-shell` installs; listing them reads.
 */
const nixChannel: Rule = ({ args, st }) => {
  st.repeatable = false;
  const change = args.find((a) => /^--(add|remove|rollback|update)$/.test(a.text));
  if (change) danger(st, `changes the user's Nix package channels (nix-channel ${change.text})`);
};

/**
 * A NixOS or nix-darwin system configuration, or a Home Manager one of the user's home, built and
 * activated (`switch`, `boot`, `test`, `activate`, `init --switch`): services, users, dotfiles and boot
 * entries change; a build alone, a dry run and the generations' listing leave them.
 */
const nixActivation: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  const verb = operands(args, /^(--flake|-f|--file|-I|--option|-A|--attr|-b|--backup)$/).map((a) => a.text)[0] ?? '';
  const activates =
    prog === 'home-manager'
      ? /^(switch|uninstall|expire-generations|remove-generations)$/.test(verb) || (verb === 'init' && args.some((a) => a.text === '--switch'))
      : /^(switch|boot|test|activate|rollback)$/.test(verb) || args.some((a) => a.text === '--rollback');
  if (activates) danger(st, `activates a system or home configuration (${prog} ${verb})`);
};

/**
 * Nix itself builds, runs and develops in the store and the user's profile (its `--command` is
 * executors.ts'); copying store paths to another store sends them out, and adding to the user's
 * flake registry changes what every later `nixpkgs#…` means.
 */
const nix: Rule = ({ args, st, judge }) => {
  st.repeatable = false;
  const ops = operands(args, /^(-c|--command|--to|--from|-f|--file|-I|--include|--option|--arg|--argstr)$/).map((a) => a.text);
  // `nix run github:hahwul/dalfox -- scan URL` runs the flake's program, named as its repository or
  // attribute is, with the words after `--`: judged as that program run here.
  const end = args.findIndex((a) => a.text === '--');
  const flake = ops[0] === 'run' ? /^(?:github|gitlab|sourcehut):[\w.-]+\/([\w.-]+)|^[\w.:/-]*#([\w.-]+)$/.exec(ops[1] ?? '') : null;
  const program = flake?.[1] ?? flake?.[2];
  if (program && end >= 0) judge([{ ...args[end]!, text: program }, ...args.slice(end + 1)]);
  if (ops[0] === 'copy' && args.some((a) => /^--to(=|$)/.test(a.text))) danger(st, 'copies store paths to another store (nix copy --to)');
  // Paths copied into this machine's store without their signatures checked run as trusted builds for every user.
  else if (ops[0] === 'copy' && args.some((a) => a.text === '--no-check-sigs'))
    danger(st, "copies unsigned store paths into this machine's Nix store (nix copy --no-check-sigs)");
  if (ops[0] === 'registry' && /^(add|pin|remove)$/.test(ops[1] ?? '')) danger(st, `changes the user's flake registry (nix registry ${ops[1]})`);
};

/** The Nix installer installs, repairs or removes Nix for the whole machine: /nix, a daemon, build users. */
const nixInstaller: Rule = ({ args, st }) => {
  st.repeatable = false;
  const sub = operands(args, /^--[\w-]+-(id|name|path|group|user|prefix)$/)[0]?.text;
  if (sub && /^(install|uninstall|repair)$/.test(sub) && !args.some((a) => /^(-h|--help)$/.test(a.text)))
    danger(st, `changes the machine's installed packages (nix-installer ${sub})`);
};

const power: Rule = ({ prog, st }) => danger(st, `shuts down or reboots the machine (${prog})`);

/**
 * A Redis server's data and settings changed from its client: every key erased, its configuration or
 * replication changed, a module loaded (code in the server), the server shut down. Reads and pings are
 * the everyday; the host, when another's, is the unknown-program rule's.
 */
/** A key pattern that names what holds a credential: a password, a token, a session, a key. */
const SECRET_KEY_PATTERN = /pass|secret|token|cred|auth|session|api[_-]?key/i;
/**
 * The reading forms of those commands: a setting read, who the client is, the permission categories and
 * user names, the modules loaded. `ACL LIST` and `ACL GETUSER` print the users' password hashes.
 */
const REDIS_READ = /^(config get|acl (whoami|cat|users|log|help|genpass|dryrun)|module list) ?$/i;
const REDIS_CHANGE = /^(flushall|flushdb|config|shutdown|slaveof|replicaof|module|debug|script|acl|bgrewriteaof|failover|migrate|restore)$/i;
const redisCli: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  judgeUnknownProgram(prog, args, st);
  const host = args.findIndex((a) => a.text === '-h');
  databaseElsewhere(prog, args, st, host >= 0 ? args[host + 1]?.text : undefined);
  const [command, sub, ...rest] = operands(args, /^(-h|-p|-a|-n|-u|--user|--pass|-s|--cacert|--cert|--key|-r|-i|-d)$/);
  if (command && /^acl$/i.test(command.text) && /^(list|getuser)$/i.test(sub?.text ?? ''))
    danger(st, `prints the Redis users' password hashes (redis-cli ${command.text} ${sub!.text})`);
  else if (command && REDIS_CHANGE.test(command.text) && !REDIS_READ.test(`${command.text} ${sub?.text ?? ''}`))
    danger(st, `changes or erases a Redis server's data or settings (redis-cli ${command.text})`);
  // Its keys searched by a credential's word (`SCAN 0 MATCH "*token*"`, `KEYS *pass*`, `*session*`): hunting the secrets it holds.
  const pattern = /^(keys|scan)$/i.test(command?.text ?? '') ? [sub, ...rest].find((w) => w && SECRET_KEY_PATTERN.test(w.text)) : undefined;
  if (pattern) danger(st, `searches a Redis server's keys for credentials (redis-cli ${command!.text} ${pattern.text})`);
};

/** certbot asks a certificate authority for a domain's certificate, or revokes or deletes one, under /etc/letsencrypt. */
const certbot: Rule = ({ args, st }) => {
  st.repeatable = false;
  const verb = operands(args, /^(-d|--domains|-m|--email|--server|-w|--webroot-path|--config-dir|--work-dir|--logs-dir|--cert-name|-a|-i)$/)[0]?.text;
  if (args.some((a) => /^(-h|--help|--version)$/.test(a.text)) || verb === 'certificates' || verb === 'plugins') return;
  danger(st, `obtains, renews or revokes a domain's TLS certificate (certbot${verb ? ` ${verb}` : ''})`);
};

/**
 * Hestia's and Vesta's control-panel commands (`v-add-user`, `v-change-user-config-value`,
 * `v-update-sys-hestia-git`), installed under /usr/local/hestia/bin: each but the `v-list-…` and
 * `v-search-…` ones changes the hosting server's users, sites, mail, databases, firewall or the panel itself.
 */
const HESTIA_COMMAND = /^v-[a-z]+-[a-z0-9-]+$/;
const hestia: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  if (!/^v-(list|search|check|get)-/.test(prog) && !onlyAsksAbout(args)) danger(st, `changes the hosting panel's server, users or sites (${prog})`);
};

/** maddy's own accounts and mailboxes, in the mail server's store under /var/lib/maddy. */
const maddy: Rule = ({ prog, args, st }) => {
  judgeUnknownProgram(prog, args, st);
  const [group, verb] = operands(args).map((a) => a.text);
  if (
    /^(creds|imap-acct|imap-mboxes|imap-msgs)$/.test(group ?? '') &&
    verb &&
    !/^(list|status|dump)$/.test(verb) &&
    !args.some((a) => /^(-h|--help)$/.test(a.text))
  )
    danger(st, `changes the mail server's accounts or mailboxes (maddy ${group} ${verb})`);
};

/**
 * A web server's daemon started, stopped or signalled (`nginx`, `nginx -s reload`, `apachectl
 * restart`): the machine's service, listening where its configuration says, every interface by
 * default. Testing the configuration or asking the version starts nothing.
 */
const WEB_SERVER_CHECKS = /^(-t|-T|-v|-V|-h|-\?|-M|-S|-l|-L|configtest)$/;
const webServer: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  if (args.some((a) => WEB_SERVER_CHECKS.test(a.text))) return;
  danger(st, `starts, stops or reloads the machine's web server (${[prog, ...args.map((a) => a.text)].join(' ')})`);
};

/**
 * Kong's gateway started or reloaded (`kong start`): it proxies on every interface (0.0.0.0:8000 and
 * :8443) unless its configuration says otherwise. Checking or parsing a configuration (`kong check
 * /etc/kong/kong.conf`) and asking its health or version only read; its other verbs are judged as a
 * program no table names.
 */
const kong: Rule = ({ prog, args, st }) => {
  const verb = operands(args)[0]?.text ?? '';
  if (/^(start|restart|reload)$/.test(verb) && !onlyAsksAbout(args))
    danger(st, `starts the API gateway, which proxies on every interface unless configured otherwise (kong ${verb})`);
  else if (!/^(check|config|version|health|help)$/.test(verb)) judgeUnknownProgram(prog, args, st);
};

/**
 * Prosody's control program acts on the machine's XMPP server: registering, adding or removing a user and
 * setting a password change its accounts, and starting, stopping, reloading, installing modules and
 * importing certificates change the service; `status`, `check` and `about` read.
 */
const prosodyctl = verbs(/^(status|check|about|help)$/, "changes the machine's chat server or its accounts");

/**
 * OpenSIPS' command line, given a command to run (`-x`): creating, dropping or migrating its database,
 * adding or removing a subscriber, writing a certificate authority or a certificate into the server's
 * TLS directory, and `trap` (gdb attached to every running opensips process) act on the machine's SIP
 * server; `mi` calls and `diagnose` read or ask it. Without `-x` it opens its own prompt.
 */
const opensipsCli: Rule = ({ args, st }) => {
  const run = args.findIndex((a) => a.text === '-x');
  const [module, verb] = run < 0 ? [] : args.slice(run + 1).map((a) => a.text);
  if (
    (module === 'database' && /^(create|drop|add|migrate)$/.test(verb ?? '')) ||
    (module === 'user' && /^(add|delete|password)$/.test(verb ?? '')) ||
    (module === 'tls' && /^(rootCA|userCERT|treeCERT)$/.test(verb ?? '')) ||
    module === 'trap'
  )
    danger(st, `changes or attaches to the machine's SIP server (opensips-cli -x ${module}${verb ? ` ${verb}` : ''})`);
};

/**
 * Elastic's Beats: `setup` loads their index templates, pipelines and dashboards into the Elasticsearch and
 * Kibana their configuration names; `modules enable` and `disable` change what the machine's shipper
 * collects (under /etc); the keystore holds the shipper's credentials. `test`, `export` and `version` read.
 */
const beat: Rule = ({ prog, args, st }) => {
  const [verb = '', sub = ''] = operands(args).map((a) => a.text);
  if (verb === 'setup' || (verb === 'modules' && /^(enable|disable)$/.test(sub)) || (verb === 'keystore' && /^(create|add|remove)$/.test(sub)))
    danger(st, `changes the machine's log shipper or the Elasticsearch it ships to (${prog} ${verb}${sub && verb !== 'setup' ? ` ${sub}` : ''})`);
};

/** Windows' package managers: a verb that installs, removes or upgrades, or changes where packages come from. */
const WINDOWS_PACKAGE_CHANGE = /^(install|add|uninstall|remove|rm|upgrade|update|import|source|pin|repair|configure|reset|bucket|hold|unhold)$/;
/** Scoop's own buckets, known to it by name; any other is a source given by its address. */
const SCOOP_KNOWN_BUCKET = /^(main|extras|versions|nirsoft|sysinternals|php|nerd-fonts|nonportable|java|games)$/;
const windowsPackages: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  const ops = operands(args).map((a) => a.text);
  const verb = ops[0] ?? '';
  // Scoop's installs go to the user's ~/scoop and onto every shell's PATH, as Homebrew's do: the user's
  // machine, not the workspace. A bucket of its own list adds no source of its choosing.
  if (prog === 'scoop' && verb === 'bucket' && ops[1] === 'add' && SCOOP_KNOWN_BUCKET.test(ops[2] ?? '') && ops.length === 3) return;
  if (WINDOWS_PACKAGE_CHANGE.test(verb)) danger(st, `changes the machine's installed packages (${prog} ${verb})`);
  // Chocolatey's features, settings and API keys are the machine's (`choco feature enable -n=allowGlobalConfirmation`).
  // An API key given to `choco apikey` (`--key`, `-k`) is stored for every later push, as `add` stores one.
  const keyGiven = /^(apikey|setapikey)$/.test(verb) && args.some((a) => /^(-k|--key|--api-key|--apikey)(=|$)/i.test(a.text));
  if (prog === 'choco' && /^(feature|config|apikey|setapikey)$/.test(verb) && (keyGiven || /^(enable|disable|set|unset|add|remove|rm)$/.test(ops[1] ?? '')))
    danger(st, `changes Chocolatey's settings for the whole machine (${prog} ${verb} ${keyGiven ? '--key' : ops[1]})`);
};

/**
 * The boot image and boot loader: what they write runs as root at the next boot, before anything
 * else. Listing an image's modules or printing help or a version changes nothing.
 */
const BOOT_READS = /^(-h|--help|-V|--version|-L|--list|--list-modules|-M|--automods)$/;
/** LVM's commands that change volumes (`lvcreate`, `vgchange -ay`, `pvremove`), by their own names or as `lvm`'s verbs. */
const LVM_CHANGES = ['lv', 'vg', 'pv'].flatMap((kind) =>
  ['create', 'remove', 'extend', 'reduce', 'resize', 'change', 'rename', 'convert', 'merge', 'split', 'import', 'export', 'move', 'cfgrestore'].map(
    (verb) => `${kind}${verb}`,
  ),
);
/**
 * dracut's and mkinitcpio's image written where the command names it (`dracut foobar.img`, `mkinitcpio -g
 * ./initramfs.img`), in the workspace or /tmp, changes nothing the machine boots; dracut's `--print-cmdline` reads.
 */
function bootImageHere(prog: string, args: Word[], st: State): boolean {
  if (prog === 'dracut' && args.some((a) => a.text === '--print-cmdline')) return true;
  const generate = args.findIndex((a) => /^(-g|--generate)$/.test(a.text));
  const image =
    prog === 'dracut'
      ? [...args].reverse().find((a) => !a.text.startsWith('-') && /\.img$/.test(a.text))
      : prog === 'mkinitcpio' && generate >= 0
        ? args[generate + 1]
        : undefined;
  return image !== undefined && classify(image, st).cls === 'inside';
}
const bootImage: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  if (args.length && args.every((a) => BOOT_READS.test(a.text))) return;
  if (bootImageHere(prog, args, st)) return;
  danger(st, `rebuilds the machine's boot image or boot loader (${prog})`);
};

/**
 * The machine's services: starting, stopping or changing one, or the service manager's environment every
 * later service starts with, acts on the whole machine (`service nginx stop`, `systemctl set-environment PATH=…`,
 * dinit's `dinitctl start mpd`, Upstart's `initctl stop ecm`).
 */
const SERVICE_CHANGE =
  /^(start|stop|restart|reload|force-reload|try-restart|reload-or-restart|try-reload-or-restart|condrestart|kill|mask|unmask|disable|isolate|daemon-reload|daemon-reexec|reset-failed|freeze|thaw|set-environment|unset-environment|import-environment|wake|release|unpin|trigger|setenv|shutdown)$/;
const services: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  const ops = operands(args);
  // service runs /etc/init.d/NAME: a name with a slash is a program of its choosing.
  if (prog !== 'systemctl' && ops[0]?.text.includes('/')) return danger(st, `runs a program by its path as a service script (${prog} ${ops[0].text})`);
  const verb = ops.find((a) => SERVICE_CHANGE.test(a.text));
  if (verb) return danger(st, `starts, stops or changes a service of the machine (${prog} ${verb.text})`);
  // SysV's and OpenRC's scripts take any command of their own after the name (`rc-service x cgroup_cleanup`,
  // `service x enable`); only asking a service's state reads (FreeBSD's `onestatus` asks one not enabled).
  const action = /^(service|rc-service)$/.test(prog) ? ops[1]?.text : undefined;
  if (action !== undefined && !/^(one)?(status|describe|help|usage)$/.test(action))
    danger(st, `starts, stops or changes a service of the machine (${prog} ${ops[0]!.text} ${action})`);
};

/**
 * Registering a service to start at boot, whatever the init system (SysV's update-rc.d, chkconfig and
 * insserv, OpenRC's rc-update): what it runs survives this run and starts with the machine, as
 * systemctl enable does. Only listing or querying the registrations reads (`chkconfig --list`,
 * `chkconfig sshd` without a level's state, `rc-update show`).
 */
const BOOT_REGISTRATION_READS = /^(-h|--help|-V|--version|-l|--list|show|-s|--show|-v|--verbose)$/;
const bootRegistration: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  const ops = operands(args, /^--level$/).map((a) => a.text);
  if (args.every((a) => BOOT_REGISTRATION_READS.test(a.text) || (prog === 'chkconfig' && !a.text.startsWith('-') && ops.length === 1))) return;
  if (prog === 'rc-update' && ops[0] === 'show') return;
  danger(st, `registers or changes a service started at boot (${prog} ${args.map((a) => a.text).join(' ')})`);
};

/** A desktop settings tool whose first word, matched by `changes`, sets or resets a setting. */
const desktopSetting =
  (changes: RegExp): Rule =>
  ({ prog, args, st }) => {
    const verb = operands(args)[0]?.text ?? '';
    if (changes.test(verb) && !onlyAsksAbout(args)) danger(st, `changes a setting of the user's desktop (${prog} ${verb})`);
  };

/** Kernel modules: loading or unloading one runs code in the kernel; a dry run or a listing only reads. */
const kernelModules: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  if (prog === 'modprobe' && args.some((a) => /^(-n|--dry-run|-c|--showconfig|-D|--show-depends|--show-modversions|--dump-modversions)$/.test(a.text))) return;
  danger(st, `loads or unloads a kernel module (${prog})`);
};

/**
 * A high-availability cluster's managers (Pacemaker's pcs and crm, DRBD's drbdadm) change what every
 * node of the cluster runs: its membership, resources, constraints, properties and fencing, a node's
 * replicated disks; their status, configuration shown or saved to a file, and listings only read.
 */
const CLUSTER_READS = /^(status|config|show|list|ls|dump|dstate|cstate|role|help|--version|version|cib|describe|standards|providers|agents)$/;
const clusterManager: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  // `pcs -f FILE` edits a copy of the configuration saved in FILE, which `cluster cib-push` applies later.
  if (prog === 'pcs' && args.some((a) => a.text === '-f')) return;
  const ops = operands(args).map((a) => a.text);
  if (!ops.length || CLUSTER_READS.test(ops[0]!) || ops.at(-1) === 'defaults' || (ops.length === 1 && /^(constraint|property|resource|stonith)$/.test(ops[0]!)))
    return;
  if (/^(cluster|resource|constraint|property|stonith|configure|node)$/.test(ops[0]!) && (CLUSTER_READS.test(ops[1] ?? '') || ops[1] === 'verify')) return;
  if (prog === 'drbdadm' && /^sh-/.test(ops[0]!)) return;
  danger(st, `changes what a high-availability cluster runs (${prog} ${ops.slice(0, 2).join(' ')})`);
};

/**
 * bpftool loads, attaches, pins and detaches the kernel's eBPF programs and changes their maps, which
 * run in the kernel for every process; its listings, dumps, the kernel's own type information
 * (`btf dump file /sys/kernel/btf/vmlinux`), a skeleton generated and the features probed only read.
 */
const BPFTOOL_READS = /^(show|list|dump|lookup|getnext|peek|tree|skeleton|object|subskeleton|min_core_btf|probe|help|version)$/;
const bpftool: Rule = ({ args, st }) => {
  st.repeatable = false;
  const [object = '', verb = ''] = operands(args).map((a) => a.text);
  if (!object || /^(v|version|help|gen|feature|perf)$/.test(object) || (BPFTOOL_READS.test(verb) && verb !== 'object') || (object === 'btf' && verb === ''))
    return;
  danger(st, `changes the kernel's eBPF programs or maps (bpftool ${[object, verb].filter(Boolean).join(' ')})`);
};

/**
 * bpftrace runs its program in the kernel as root, where it sees every process's calls and the data
 * they pass (an ssh session's keystrokes among them); listing the probes or printing its version runs none.
 */
const bpftrace: Rule = ({ args, st }) => {
  st.repeatable = false;
  if (args.some((a) => /^(-l|--list)$/.test(a.text)) || args.every((a) => /^(-V|--version|-h|--help|--info)$/.test(a.text))) return;
  danger(st, "traces the machine's processes from the kernel, where every call and the data it passes can be read (bpftrace)");
};

/**
 * depmod rebuilds the index modprobe loads modules by, so a module put among the machine's loads
 * by name and at boot; `-n` prints the index instead of writing it.
 */
const moduleIndex: Rule = ({ args, st }) => {
  st.repeatable = false;
  if (!args.some((a) => /^(-n|--show|--dry-run|-h|--help|-V|--version)$/.test(a.text)))
    danger(st, "rebuilds the kernel's module index, so a module put in place loads (depmod)");
};

/** apt-key adds or removes a key every package of the machine's repositories is trusted by. */
const packageKeys: Rule = ({ args, st }) => {
  st.repeatable = false;
  const verb = operands(args, /^--keyring$/)[0]?.text;
  if (verb !== undefined && !/^(list|finger|fingerprint|export|exportall|help)$/.test(verb))
    danger(st, `changes the keys the machine's package manager trusts (apt-key ${verb})`);
};

/** pacman-key's options that only list, print or check keys; any other (`--init`, `--populate`, `--lsign-key`, `--recv-keys`) changes the keyring pacman trusts. */
const PACMAN_KEY_READS = /^(-l|--list-keys|-L|--list-sigs|-f|--finger|-v|--verify|-e|--export|-h|--help|-V|--version|--keyring|--config|--gpgdir)$/;
const pacmanKey: Rule = ({ args, st }) => {
  st.repeatable = false;
  const change = args.find((a) => a.text.startsWith('-') && !PACMAN_KEY_READS.test(a.text.replace(/=.*/, '')));
  if (change) danger(st, `changes the keys the machine's package manager trusts (pacman-key ${change.text})`);
};

/**
 * X's own settings (`xset s off`, `xset -dpms`, `xset r rate`) change the display the user is looking at:
 * its screen saver, power saving, keyboard and pointer; `xset q` only prints them.
 */
const xset: Rule = ({ args, st }) => {
  if (args.length && !args.every((a) => /^(q|-q|-help|--help|-version)$/.test(a.text)))
    danger(st, `changes the settings of the user's display (xset ${args.map((a) => a.text).join(' ')})`);
};

/**
 * The kernel's settings (sysctl -w) act on the whole machine; reading them (`sysctl -a`) is not a
 * change. macOS's own settings programs are in macos.ts.
 */
const kernelSetting: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  const ops = operands(args).map((a) => a.text);
  if (args.some((a) => /^(-w|--write|-p|--load|--system)$/.test(a.text)) || ops.some((o) => o.includes('=')))
    danger(st, `changes a setting of the machine (${prog} ${args.map((a) => a.text).join(' ')})`);
};

/**
 * ldconfig rebuilds the cache every program of the machine finds its shared libraries by (a library put
 * in a directory it is told of loads into them); `-n` only links the libraries of the directories named,
 * judged where they are; printing the cache (`-p`) changes nothing.
 */
const libraryCache: Rule = ({ args, st }) => {
  st.repeatable = false;
  if (args.some((a) => /^(-p|--print-cache|-V|--version|-\?|--help|--usage)$/.test(a.text))) return;
  if (args.some((a) => a.text === '-n')) {
    for (const o of operands(args)) checkWriteTarget(o, st, 'links the shared libraries in');
    return;
  }
  danger(st, "rebuilds the machine's shared-library cache, which every program loads its libraries by (ldconfig)");
};

/**
 * Postfix's lookup tables: `postmap` and `postalias` write the indexed table beside the file they are
 * named (`hash:/etc/postfix/virtual` makes `/etc/postfix/virtual.db`), judged where that is; a query (`-q`) reads.
 */
const postfixLookupTable: Rule = ({ prog, args, st }) => {
  if (args.some((a) => /^-[a-zA-Z]*q/.test(a.text))) return;
  for (const o of operands(args, /^-c$/)) checkWriteTarget(word(o.text.replace(/^[a-z]+:/, '')), st, `writes ${prog}'s lookup table beside`);
};

/**
 * The machine's network, firewall, mounts, clock and security policy: a change acts on every
 * process of the machine. Each program's reading forms (`iptables -L`, `ip addr`, `mount` alone,
 * `ufw status`, `date`) are not changes.
 */
const MACHINE_CHANGE: Readonly<Record<string, (args: Word[], ops: string[]) => boolean>> = {
  iptables: (args) => args.some((a) => /^(-[ADIRFXPNZE]|--(append|delete|insert|replace|flush|delete-chain|policy|new-chain|zero|rename-chain))$/.test(a.text)),
  nft: (args, ops) => /^(add|delete|flush|insert|replace|create|destroy)$/.test(ops[0] ?? '') || args.some((a) => /^(-f|--file)$/.test(a.text)),
  ufw: (_args, ops) => ops.length > 0 && !/^(status|show|version|app)$/.test(ops[0]!),
  'firewall-cmd': (args) =>
    args.some((a) => /^--(add|remove|set|change|reload|complete-reload|runtime-to-permanent|panic-on|new|delete|permanent)/.test(a.text)),
  setenforce: () => true,
  // SELinux's modules and booleans, and AppArmor's profiles loaded, set to enforce or complain, generated or
  // merged into the machine's policy; their status and listings read.
  semodule: (args) => args.some((a) => /^(-[ireEdX]|--(install|remove|enable|disable|reload|build|priority))/.test(a.text)),
  setsebool: (args) => !args.some((a) => /^(-h|--help)$/.test(a.text)),
  semanage: (args, ops) => ops.length > 0 && !args.some((a) => /^(-l|--list|-h|--help)$/.test(a.text)),
  apparmor_parser: (args) => !args.some((a) => /^(-h|--help|-V|--version|-p|--preprocess|-S|--stdout)$/.test(a.text)),
  ...Object.fromEntries(
    ['aa-enforce', 'aa-complain', 'aa-disable', 'aa-audit', 'aa-genprof', 'aa-logprof', 'aa-mergeprof', 'aa-autodep', 'aa-teardown', 'aa-remove-unknown'].map(
      (p) => [p, (args: Word[]) => !args.some((a) => /^(-h|--help)$/.test(a.text))],
    ),
  ),
  // OpenWrt's configuration set or committed and its system bus's calls into the router's daemons; `uci show`/`get`
  // and a call that asks a daemon's state read.
  uci: (_args, ops) => /^(set|add|add_list|del|del_list|delete|rename|reorder|commit|revert|import|batch)$/.test(ops[0] ?? ''),
  ubus: (_args, ops) => (ops[0] === 'call' && !/^(state|status|list|info|dump|board|get\w*)$/.test(ops[2] ?? '')) || ops[0] === 'send',
  // PostgreSQL extensions built into the server's own directories, or loaded into (dropped from) a
  // database; their search and listing read. RabbitMQ's plugins enabled in the broker the machine runs.
  pgxn: (_args, ops) => /^(install|uninstall|load|unload)$/.test(ops[0] ?? ''),
  'rabbitmq-plugins': (_args, ops) => /^(enable|disable|set)$/.test(ops[0] ?? ''),
  // The machine's TPM: owned or cleared, its hierarchies' passwords changed, its NV space and persistent
  // keys defined or removed, its lockout and hierarchies changed (TrouSerS' tpm_* and tpm2-tools). One
  // aimed at a simulator (`-T mssim`, `--tcti=swtpm:…`) changes no chip, and a loaded key's password
  // changed into a new private part (`tpm2_changeauth -c key.ctx -r key.priv`) is a file written here.
  ...Object.fromEntries(
    [
      ...[
        'tpm_clear',
        'tpm_setenable',
        'tpm_setactive',
        'tpm_takeownership',
        'tpm_changeownerauth',
        'tpm_setownable',
        'tpm_resetdalock',
        'tpm_nvdefine',
        'tpm_nvrelease',
        'tpm_nvwrite',
      ],
      ...['changeauth', 'clear', 'clearcontrol', 'changeeps', 'changepps', 'dictionarylockout', 'evictcontrol', 'hierarchycontrol', 'setprimarypolicy'].map(
        (v) => `tpm2_${v}`,
      ),
      ...['nvdefine', 'nvundefine', 'nvwrite', 'nvwritelock', 'nvextend', 'nvincrement', 'nvsetbits', 'pcrallocate'].map((v) => `tpm2_${v}`),
    ].map((p) => [
      p,
      (args: Word[]) =>
        !onlyAsksAbout(args) &&
        !args.some((a, k) => /^(-T|--tcti)(=|$)/.test(a.text) && /^(mssim|swtpm)\b/.test(optionValue(args, k) ?? '')) &&
        !args.some((a) => /^(-r|--private)(=|$)/.test(a.text)),
    ]),
  ),
  // The TPM tool of heads and tpmtotp, one program with the same changes as verbs (`tpm forceclear`, `tpm physicalenable`,
  // `tpm takeown`), and a PCR extended (`tpm extend -ix 4 …`), after which what the measured boot attests has changed.
  tpm: (args, ops) =>
    !onlyAsksAbout(args) && /^(forceclear|clear|takeown|physical\w+|extend|nv_(definespace|writevalue|releasespace)|resetlockvalue)$/.test(ops[0] ?? ''),
  // Mesh routing daemons run: each makes a tunnel device or takes an interface and changes the machine's
  // routes (OLSR, Babel, cjdns, Yggdrasil); making or tidying a configuration prints it and changes nothing.
  ...Object.fromEntries(
    ['olsrd', 'babeld', 'cjdroute', 'yggdrasil'].map((p) => [
      p,
      (args: Word[]) =>
        !onlyAsksAbout(args) &&
        !args.some((a) => /^--?(genconf|cleanconf|normaliseconf|normalizeconf|version|address|subnet|publickey|publicKey|v)$/.test(a.text)),
    ]),
  ),
  // A tuned profile sets the kernel's, the CPUs' and the disks' settings for the whole machine; `profile` alone and `list` read.
  'tuned-adm': (_args, ops) => (ops[0] === 'profile' && ops.length > 1) || /^(off|auto_profile|profile_mode)$/.test(ops[0] ?? ''),
  // Windows' drivers installed, updated, removed or their devices turned on and off (devcon), and the
  // machine's code-integrity policies changed (CiTool); listing devices and policies reads.
  devcon: (_args, ops) => /^(install|update|updateni|remove|disable|enable|restart|rescan|dp_add|dp_delete|sethwid|classfilter|reboot)$/i.test(ops[0] ?? ''),
  // pnputil's `/enum-*` list drivers and devices; every other switch adds, removes or changes them.
  pnputil: (args) => args.length > 0 && !args.some((a) => /^[/-](enum-[\w-]+|e|\?|h(elp)?)$/i.test(a.text)),
  // A `.exe` name is looked up without it, in lower case; the name as written is its own.
  ...Object.fromEntries(
    ['CiTool', 'citool'].map((p) => [p, (args: Word[]) => args.some((a) => /^(--update-policy|-up|--remove-policy|-rp|--refresh|-r)$/i.test(a.text))]),
  ),
  // The machine's locales compiled into /usr/lib/locale.
  'locale-gen': (args) => !args.some((a) => /^(-h|--help)$/.test(a.text)),
  // localedef compiles a locale into the machine's archive too, unless its output is a path (a name with a `/`).
  localedef: (args, ops) => !args.some((a) => /^(-h|--help|--usage|-V|--version|--list-archive)$/.test(a.text)) && !ops.at(-1)?.includes('/'),
  mount: (args, ops) => ops.length > 0 || args.some((a) => /^(-a|--all|-o|--options)$/.test(a.text)),
  // macOS's APFS mount (a snapshot or a volume mounted somewhere) mounts as mount does.
  mount_apfs: (_args, ops) => ops.length > 0,
  umount: () => true,
  // FUSE file systems unmounted (`fusermount -u`) or mounted through the setuid helper.
  ...Object.fromEntries(['fusermount', 'fusermount3'].map((p) => [p, (args: Word[]) => !args.some((a) => /^(-V|--version|-h|--help)$/.test(a.text))])),
  // A disk image's file systems mounted through FUSE (libewf's ewfmount, libvmdk's vmdkmount and kin, dislocker's
  // BitLocker volume, AFF's and xmount's images), or its partitions mapped as the machine's block devices
  // (kpartx `-a`, removed with `-d`); kpartx's `-l` only lists them.
  ...Object.fromEntries(
    ['ewfmount', 'vmdkmount', 'vhdimount', 'qcowmount', 'bdemount', 'dislocker', 'dislocker-fuse', 'affuse', 'xmount'].map((p) => [
      p,
      (args: Word[]) => !onlyAsksAbout(args),
    ]),
  ),
  kpartx: (args) => args.some((a) => /^-[a-zA-Z]*[adu]/.test(a.text)),
  // Windows' BitLocker unlocked, locked, turned on or off, or its protectors changed (`manage-bde -unlock C: -RecoveryPassword …`); `-status` reads.
  'manage-bde': (args) => !onlyAsksAbout(args) && !args.some((a) => /^-status$/i.test(a.text)),
  // sbctl's Secure Boot keys made and enrolled into the firmware, and files signed with them in place; `status`, `verify` and listings read.
  sbctl: (args, ops) => ops.length > 0 && !onlyAsksAbout(args) && !/^(status|verify|list-files|list-bundles|list-enrolled-keys|completion|help)$/.test(ops[0]!),
  // LVM's physical volumes, groups and logical volumes made, resized, activated, renamed or removed change the
  // machine's disks, by their own names or through `lvm`; its listings and scans read.
  ...Object.fromEntries(LVM_CHANGES.map((p) => [p, (args: Word[]) => !onlyAsksAbout(args)])),
  lvm: (args, ops) => LVM_CHANGES.includes(ops[0] ?? '') && !onlyAsksAbout(args),
  // UBI's tools attach the machine's raw flash (MTD) devices as UBI devices and make, resize, fill or remove their volumes.
  ...Object.fromEntries(
    ['ubiattach', 'ubidetach', 'ubimkvol', 'ubirmvol', 'ubirsvol', 'ubiupdatevol', 'ubiformat'].map((p) => [p, (args: Word[]) => !onlyAsksAbout(args)]),
  ),
  // hostapd makes one of the machine's wireless interfaces an access point others join.
  // hostapd-wpe is hostapd patched to take the logins of those who join.
  ...Object.fromEntries(['hostapd', 'hostapd-wpe'].map((p) => [p, (args: Word[]) => !args.some((a) => /^(-v|-h)$/.test(a.text))])),
  // DHCP clients take a lease and set an interface's address and the machine's routes and resolver;
  // DHCP servers hand out leases to the network an interface is on, and dnsmasq answers its names too;
  // its `--test` only checks a configuration.
  dnsmasq: (args) => !onlyAsksAbout(args) && !args.some((a) => /^(--test|--version|-v)$/.test(a.text)),
  ...Object.fromEntries(
    ['dhclient', 'dhcpcd', 'udhcpc', 'dhcpd', 'udhcpd'].map((p) => [
      p,
      (args: Word[]) => !onlyAsksAbout(args) && !args.some((a) => /^(-t|-T|--version)$/.test(a.text)),
    ]),
  ),
  // kexec loads a kernel to boot into (`-l`, `-p`) or boots the loaded one (`-e`).
  kexec: (args) => !onlyAsksAbout(args),
  // Printers set up for the whole machine (CUPS' queues, their devices and drivers, the server's sharing).
  lpadmin: (args) => !onlyAsksAbout(args),
  cupsctl: (args) => args.length > 0 && !onlyAsksAbout(args),
  // A Kerberos realm's database and its principals' keys (made, loaded, dumped, stashed), its admin
  // console and keytab editor: every account of the realm and the keys that sign in as them.
  'kadmin.local': () => true,
  kadmin: () => true,
  kdb5_util: () => true,
  ktutil: () => true,
  // A DNS zone updated on its server (nsupdate reads the changes from its input or a file).
  nsupdate: (args) => !onlyAsksAbout(args),
  // The machine's RabbitMQ node reset, its users, vhosts, permissions and policies changed, or code run in it;
  // its status, listings and health checks read (its management client, rabbitmqadmin, is cloud.ts').
  rabbitmqctl: (_args, ops) =>
    ops.length > 0 &&
    !/^(status|cluster_status|environment|report|help|version|ping|await_startup|node_health_check|list_\w+|check_\w+|diagnostics)$/.test(ops[0]!),
  // A GitLab or Splunk server installed on this machine: reconfigured, restored, run code in, its indexes
  // and data removed; status, listings, checks and searches read.
  'gitlab-ctl': (_args, ops) => ops.length > 0 && !/^(status|tail|show-config|help|service-list)$/.test(ops[0]!),
  'gitlab-rake': (_args, ops) => ops.length > 0 && !/^gitlab:(check|env:info|doctor:[\w:]+)$/.test(ops[0]!),
  'gitlab-rails': (_args, ops) => /^(runner|r|console|c|dbconsole|db)$/.test(ops[0] ?? ''),
  splunk: (_args, ops) => /^(clean|remove|delete|stop|restart|start|add|edit|disable|enable|install|set|apply|reload|rebuild|import)$/.test(ops[0] ?? ''),
  // libvirt's machines and their networks and pools: defined, started, stopped, reverted or removed on the
  // daemon the connection names (the machine's own for root); listings, info, XML and snapshots made read.
  virsh: (args) =>
    /^(define|undefine|create|destroy|start|shutdown|reboot|reset|suspend|resume|managedsave|migrate|snapshot-revert|snapshot-delete|setvcpus|setmem|setmaxmem|attach-[\w-]+|detach-[\w-]+|(pool|net|vol|iface|nodedev|secret)-(create|define|destroy|delete|undefine|start|update|wipe|autostart|build|upload|set-value)[\w-]*)$/.test(
      operands(args, /^(-c|--connect)$/)[0]?.text ?? '',
    ),
  // Postfix's settings edited in /etc/postfix (`postconf -e "relayhost=…"`, `postconf -X name`, a bare
  // `name=value`); printing them (`postconf -n`, `postconf mail_version`) reads.
  postconf: (args, ops) => args.some((a) => /^-[a-zA-Z]*[eX#]/.test(a.text)) || ops.some((o) => o.includes('=')),
  // Postfix itself started, stopped or reloaded, and the machine's mail aliases rebuilt.
  postfix: (_args, ops) => /^(start|start-fg|stop|abort|reload|flush|set-permissions|upgrade-configuration)$/.test(ops[0] ?? ''),
  newaliases: () => true,
  // Postfix's mail queue: postsuper deletes, holds, requeues or repairs what waits in it, whatever it is told;
  // postqueue sends what waits (`-f`, `-s`, `-i`) and only lists it with `-p` and `-j`.
  postsuper: () => true,
  postqueue: (args) => args.some((a) => /^-[a-zA-Z]*[fis]/.test(a.text)),
  // Zimbra's mail server: its services started or stopped, its domains, accounts and settings created,
  // changed or deleted (`zmprov md example.com …`, `ca`, `da`), its local configuration edited; its
  // get commands (`zmprov gaa`, `ga`, `gacf`), status and help read.
  zmcontrol: (_args, ops) => /^(start|startup|stop|shutdown|restart)$/.test(ops[0] ?? ''),
  zmprov: (_args, ops) => ops.length > 0 && !/^(g\w*|help|desc|describe)$/i.test(ops[0]!),
  zmlocalconfig: (args) => args.some((a) => /^(-e|--edit|-u|--unset|-r|--random)$/.test(a.text)),
  // Transparent Tor proxies rewrite the firewall to send every connection of the machine through Tor
  // (`kalitorify --tor`, `anonsurf start`, `nipe start`, `torghost -s`); their status and IP checks read.
  kalitorify: (args) => !onlyAsksAbout(args) && args.some((a) => /^(-t|--tor|-c|--clearnet|-r|--restart)$/.test(a.text)),
  anonsurf: (_args, ops) => /^(start|stop|restart|change|enable-boot|disable-boot|dns)$/.test(ops[0] ?? ''),
  nipe: (_args, ops) => /^(start|stop|restart|install)$/.test(ops[0] ?? ''),
  torghost: (args) => args.some((a) => /^(-s|--start|-x|--stop|-r|--switch)$/.test(a.text)),
  // Pi-hole's lists, blocking, DNS server and settings are the machine's; status, version, the query log and its queries read.
  pihole: (args, ops) => !onlyAsksAbout(args) && !/^(status|version|-v|-q|query|-t|tail|-c|chronometer|-d|debug)$/.test(ops[0] ?? args[0]?.text ?? ''),
  // Android's system properties set on the device the shell runs on (`setprop persist.sys.usb.config adb`).
  setprop: (_args, ops) => ops.length > 1,
  // An Android device's own root manager and package manager, run in its shell: Magisk's daemon stopped or
  // started, an app disabled, removed or granted a permission for every user of the phone.
  magisk: (args) => !onlyAsksAbout(args) && !args.some((a) => /^(-c|-v|-V|--path|--list)$/.test(a.text)),
  pm: (_args, ops) => /^(disable(-user)?|enable|uninstall|install|grant|revoke|clear|hide|unhide|suspend|set-\w+|reset-permissions)$/.test(ops[0] ?? ''),
  // A command run as another SELinux context (`runcon u:r:init:s0 stop`) acts with that context's rights, init's among them.
  runcon: (args) => !onlyAsksAbout(args),
  // Ubuntu's sbuild chroots are made with sudo under /var/lib/schroot and /etc/schroot; crossbuilder's
  // `setup-lxd` installs LXD and adds the user to its group, and its `deploy` installs the build on the attached device.
  'mk-sbuild': (args) => !onlyAsksAbout(args),
  crossbuilder: (_args, ops) => ops.some((o) => /^(setup-lxd|deploy)$/.test(o)),
  // A Chromebook's firmware settings: crossystem's and the VPD's values set (`crossystem block_devmode=0`,
  // `vpd -i RW_VPD block_devmode=0`) and the GBB flags written to flash (`futility gbb --flash -s --flags=…`).
  crossystem: (_args, ops) => ops.some((o) => o.includes('=')),
  vpd: (args, ops) => args.some((a) => /^(-s|-d|-O|--set|--delete)$/.test(a.text)) || ops.some((o) => o.includes('=')),
  futility: (args, ops) =>
    (ops[0] === 'gbb' && args.some((a) => /^(-s|--set)$/.test(a.text))) ||
    (ops[0] === 'update' && !args.some((a) => /^(--emulate|--manifest|--repack|--unpack)(=|$)/.test(a.text))),
  // A USB device reset by its ids or bus path drops whatever the machine had open on it.
  usbreset: (args) => !onlyAsksAbout(args) && args.length > 0,
  // A VLAN interface added to or removed from the machine's network.
  // docker-machine-nfs exports the machine's home (or the folders named) over NFS to a Docker VM,
  // rewriting /etc/exports and restarting nfsd with root.
  'docker-machine-nfs': (args) => !onlyAsksAbout(args),
  vconfig: (_args, ops) => /^(add|rem|set_\w+)$/.test(ops[0] ?? ''),
  // Warewulf's provisioning of a cluster: `configure` rewrites the machine's DHCP, TFTP, NFS and hosts services;
  // a node's or a profile's settings, added, set or deleted, change what every node of them boots.
  wwctl: (_args, ops) => ops[0] === 'configure' || (/^(node|profile)$/.test(ops[0] ?? '') && /^(add|set|delete|unset|edit|import)$/.test(ops[1] ?? '')),
  // Windows' COM servers registered or unregistered in the machine's registry.
  ...Object.fromEntries(['regsvr32', 'regsvr32.exe'].map((p) => [p, (args: Word[]) => !args.some((a) => /^[-/][?h]$/i.test(a.text))])),
  swapon: (args) => !args.some((a) => /^(-s|--show|--summary)$/.test(a.text)),
  swapoff: () => true,
  // A loop device attached to a file or detached from one; listing them (`-a`, `-l`, `-j`) and asking for a free one (`-f` alone) read.
  losetup: (args, ops) => ops.length > 0 || args.some((a) => /^(-d|-D|--detach|--detach-all|-c|--set-capacity)$/.test(a.text)),
  hostnamectl: (_args, ops) => /^(set-|hostname$)/.test(ops[0] ?? '') && ops.length > 1,
  // hostname given a name, or a file or boot name to take it from, renames the machine; alone, or with its reading switches, it prints.
  hostname: (args, ops) =>
    args.some((a) => /^(-b|--boot|-F|--file)$/.test(a.text)) ||
    (ops.length > 0 && !args.some((a) => /^-[a-zA-Z]*[aAdfiIsy]$|^--(fqdn|long|short|domain|ip-address|all-ip-addresses|alias|nis|yp)$/.test(a.text))),
  // The BSDs' and macOS' packet filter enabled, disabled, flushed or loaded with rules; its show switches (`-s nat`) read.
  pfctl: (args) => !args.every((a) => /^-(s|a|v+|n|g)$/.test(a.text) || !a.text.startsWith('-')),
  // checkinstall builds a system package from `make install` and installs it with the machine's package manager.
  checkinstall: (args) => !onlyAsksAbout(args),
  // The answers the machine's package installs take (debconf's database), and SpamAssassin's system-wide
  // rules fetched and installed; `--checkonly` only checks for an update.
  'debconf-set-selections': (args) => !onlyAsksAbout(args) && !args.some((a) => /^(-c|--checkonly)$/.test(a.text)),
  // VirtualBox's host-only and NAT networks and DHCP servers are interfaces and services of the machine.
  // A machine unregistered with `--delete` takes its disks and settings with it, out of VirtualBox's own folders.
  VBoxManage: (args, ops) =>
    (/^(hostonlyif|hostonlynet|natnetwork|dhcpserver)$/.test(ops[0] ?? '') && !/^(list)$/.test(ops[1] ?? '')) ||
    (ops[0] === 'unregistervm' && args.some((a) => a.text === '--delete' || a.text === '--delete-all')),
  // AFL's system configuration turns off the kernel's crash reporting and address randomisation and sets the CPUs' governor.
  'afl-system-config': (args) => !onlyAsksAbout(args),
  // safaridriver's `--enable` turns on remote automation of the user's Safari, a setting of the machine.
  safaridriver: (args) => args.some((a) => a.text === '--enable'),
  // Upstart's jobs are the machine's services, stopped by their bare name (`stop ota-update`).
  stop: (_args, ops) => ops.length === 1 && /^[a-z][\w-]*$/.test(ops[0]!),
  // Metarget installs vulnerable kernels, runtimes and clusters onto the machine to attack them.
  metarget: (_args, ops) => /^(install|remove)$/.test(ops[1] ?? ''),
  // A cluster's daemons: the controller, a node's job runner, the accounting store and munge's authentication,
  // which run other users' jobs and vouch for them; `slurmd -C` prints the node's hardware and `-V` the version.
  ...Object.fromEntries(
    ['slurmctld', 'slurmd', 'slurmdbd', 'munged'].map((p) => [p, (args: Word[]) => !onlyAsksAbout(args) && !args.some((a) => /^-[CV]$/.test(a.text))]),
  ),
  // The scheduler's daemon started by hand runs every user's cron and at jobs as the machine's; the
  // firewall's, the network's, the log's, the container runtime's, Bluetooth's and Samba's (a domain's controller
  // and file server) daemons likewise serve every process of it; distcc's links stand in for the machine's
  // compilers in /usr/lib/distcc.
  ...Object.fromEntries(
    [
      'cron',
      'crond',
      'atd',
      'update-distcc-symlinks',
      'firewalld',
      'NetworkManager',
      'dockerd',
      'containerd',
      'rsyslogd',
      'syslogd',
      'syslog-ng',
      'avahi-daemon',
      'auditd',
      'bluetoothd',
      'samba',
    ].map((p) => [p, (args: Word[]) => !onlyAsksAbout(args)]),
  ),
  // The system bus' daemon, which every service of the machine talks through; a session's bus is the user's.
  'dbus-daemon': (args) => args.some((a) => a.text === '--system'),
  'sa-update': (args) => !onlyAsksAbout(args) && !args.some((a) => /^--checkonly$/.test(a.text)),
  // TLP's power profile switched for the whole machine, or a program launched under a held profile; `get`, lists and holds read.
  tlpctl: (args, ops) => !onlyAsksAbout(args) && ops.length > 0 && !/^(get|list|list-holds|status)$/.test(ops[0]!),
  timedatectl: (_args, ops) => /^set-/.test(ops[0] ?? ''),
  date: (args) => args.some((a) => /^(-s|--set)(=|$)/.test(a.text)),
  ip: (_args, ops) => ops.some((o) => /^(add|del|delete|set|flush|change|replace|append)$/.test(o)),
  ifconfig: (_args, ops) => ops.length > 1,
  // A network card's hardware address changed (`macchanger -r wlan0`); showing it and listing vendors read.
  macchanger: (args) => !onlyAsksAbout(args) && !args.some((a) => /^(-s|--show|-l|--list(=.*)?)$/.test(a.text)),
  route: (_args, ops) => /^(add|del|delete|flush|change)$/.test(ops[0] ?? ''),
  // Traffic control's queues, filters and classes added, changed or removed on an interface (`tc qdisc add dev eth0 root netem …`); `show` reads.
  tc: (_args, ops) => /^(qdisc|filter|class|action|actions|chain)$/.test(ops[0] ?? '') && /^(add|del|delete|change|replace|link|flush)$/.test(ops[1] ?? ''),
  // FreeBSD's and macOS' firewall and its dummynet pipes; `list` and `show` read.
  ipfw: (_args, ops) => ops.length > 0 && !/^(list|show|-h)$/.test(ops[0]!),
  // Ethernet bridges made, removed or given interfaces; `show` reads.
  brctl: (_args, ops) => /^(addbr|delbr|addif|delif|set\w+|hairpin|stp)$/.test(ops[0] ?? ''),
  // OpenVPN bringing up a tunnel (a client, a server, a point-to-point link) or making or removing a
  // persistent TUN/TAP device; making a key, its version and its lists of ciphers read.
  openvpn: (args) => args.length > 0 && !args.some((a) => /^--(genkey|version|help|show-\w+)$/.test(a.text)),
  // Fortinet's and Cisco's (AnyConnect, GlobalProtect, Pulse) VPN clients log in to a gateway and route the machine through it.
  openfortivpn: (args) => args.length > 0 && !onlyAsksAbout(args),
  openconnect: (args) => args.length > 0 && !onlyAsksAbout(args),
  // Netplan's configuration rendered into the machine's network daemons and applied; `get` and `status` read.
  netplan: (_args, ops) => /^(apply|generate|try|set)$/.test(ops[0] ?? ''),
  // FireHOL's and FireQOS' firewall and traffic shaping loaded into the kernel, or taken away; `status` and `debug` read.
  firehol: (_args, ops) => ops.some((o) => /^(start|restart|try|stop|panic|condrestart|save)$/.test(o)),
  // Proxmox's virtual machines and containers on this host made, changed, imported into, started or destroyed; lists, status and configs read.
  ...Object.fromEntries(
    ['qm', 'pct'].map((p) => [
      p,
      (args: Word[], ops: string[]) =>
        ops.length > 0 && !onlyAsksAbout(args) && !/^(list|status|config|pending|showcmd|help|listsnapshot|df|cloudinit)$/.test(ops[0]!),
    ]),
  ),
  // iptables-tracer adds TRACE rules to the kernel's tables for as long as it runs.
  'iptables-tracer': (args) => !onlyAsksAbout(args),
  // netfilter-persistent saves the running firewall into /etc, loads it from there or flushes it.
  'netfilter-persistent': (_args, ops) => ops.some((o) => /^(save|start|reload|restart|flush|stop)$/.test(o)),
  fireqos: (_args, ops) => ops.some((o) => /^(start|restart|stop|clear_all_qos)$/.test(o)),
  // ss and arp print sockets and the neighbour table; -K closes sockets, -s/-d/-f set or delete entries.
  ss: (args) => args.some((a) => a.text === '--kill' || /^-[a-zA-Z]*K/.test(a.text)),
  arp: (args) => args.some((a) => /^(-s|-d|-f|-S|--set|--delete|--file)$/.test(a.text)),
  nmcli: (_args, ops) => ops.some((o) => /^(on|off|up|down|delete|add|modify|connect|disconnect|reload)$/.test(o)),
  // iw's wireless interfaces: set into monitor mode, added or deleted, their power or channel set; listing and scanning read.
  iw: (_args, ops) => ops.some((o) => /^(set|del|add|connect|disconnect|ibss|mesh|ocb)$/.test(o)),
  iwconfig: (_args, ops) => ops.length > 1,
  // FreeSWITCH's console told a command (`fs_cli -x reloadxml`, `-x "sofia profile internal restart"`) changes the
  // running telephone server; its status, listings and version only read.
  fs_cli: (args) => {
    const k = args.findIndex((a) => a.text === '-x');
    return k >= 0 && !/^(show|status|version|sofia status|help)\b/.test(args[k + 1]?.text ?? '');
  },
  // wpa_supplicant joins a wireless interface to the networks its configuration names, for as long as it runs.
  wpa_supplicant: (args) => !onlyAsksAbout(args) && !args.some((a) => /^-[vhL]$/.test(a.text)),
  // A VPN's client joins the machine to another network or offers its ports there; its status and pings read.
  tailscale: (_args, ops) => /^(up|down|set|login|logout|switch|serve|funnel|file|cert|drive|web|lock)$/.test(ops[0] ?? ''),
  'zerotier-cli': (_args, ops) => /^(join|leave|set|orbit|deorbit)$/.test(ops[0] ?? ''),
  netbird: (_args, ops) => /^(up|down|login|logout|service)$/.test(ops[0] ?? ''),
  // WireGuard's interfaces brought up or down (`wg-quick up wg0`) or their peers and keys set; `wg show` reads.
  'wg-quick': (_args, ops) => /^(up|down|save)$/.test(ops[0] ?? ''),
  wg: (_args, ops) => /^(set|setconf|addconf|syncconf)$/.test(ops[0] ?? ''),
  // The userspace WireGuard implementations create the tunnel's interface they are named (`wireguard-go wg0`).
  'wireguard-go': (args, ops) => ops.length > 0 && !onlyAsksAbout(args),
  boringtun: (args, ops) => ops.length > 0 && !onlyAsksAbout(args),
  // supervisord's programs started, stopped or reloaded; status and tail read.
  supervisorctl: (args) =>
    /^(start|stop|restart|update|reload|reread|shutdown|add|remove|signal|clear)$/.test(
      operands(args, /^(-c|--configuration|-s|--serverurl|-u|--username|-p|--password|-r|--history-file)$/)[0]?.text ?? '',
    ),
  // OpenStack Swift's servers on this machine (`swift-init main start`, `swift-init all restart`); status reads.
  'swift-init': (_args, ops) => ops.some((o) => /^(start|stop|restart|reload|shutdown|kill|force-reload|once|no-daemon|no-wait)$/.test(o)),
  // The machine's locale and its radios (`update-locale LANG=…`, `localectl set-locale`, `rfkill unblock wifi`).
  'update-locale': (args) => !args.some((a) => /^(-h|--help)$/.test(a.text)),
  localectl: (_args, ops) => /^set-/.test(ops[0] ?? ''),
  rfkill: (_args, ops) => /^(block|unblock|toggle)$/.test(ops[0] ?? ''),
  // BlueZ's management tool powers the Bluetooth adapter, switches its modes and pairs devices; `info` and listings read.
  btmgmt: (args, ops) =>
    ops.length > 0 && !onlyAsksAbout(args) && !/^(info|version|commands|config|con|find|find-service|devinfo|expinfo|monitor)$/.test(ops[0]!),
  // pm2 keeps the user's processes running as a daemon: starting, stopping or deleting them, saving the
  // list it brings back at boot and installing its boot service; listing and logs read.
  pm2: (_args, ops) => /^(start|restart|reload|stop|delete|kill|startup|unstartup|save|resurrect|deploy|update|install|link|plus)$/.test(ops[0] ?? ''),
  // The search servers' plugins installed into or removed from the machine's Elasticsearch, Kibana or OpenSearch, which load them at their next start.
  ...Object.fromEntries(
    ['elasticsearch-plugin', 'kibana-plugin', 'opensearch-plugin', 'opensearch-dashboards-plugin'].map((p) => [
      p,
      (_args: Word[], ops: string[]) => /^(install|remove)$/.test(ops[0] ?? ''),
    ]),
  ),
  // SoftEther's VPN server, bridge and client started or stopped as the machine's daemons (`vpnserver start`).
  ...Object.fromEntries(['vpnserver', 'vpnbridge', 'vpnclient'].map((p) => [p, (_args: Word[], ops: string[]) => /^(start|stop|execsvc)$/.test(ops[0] ?? '')])),
  // HTCondor's daemons on this machine or across the pool started, stopped, restarted or reconfigured
  // (`condor_off -all -startd`); its queue and status read.
  ...Object.fromEntries(
    ['condor_master', 'condor_on', 'condor_off', 'condor_restart', 'condor_reconfig', 'condor_drain'].map((p) => [p, (args: Word[]) => !onlyAsksAbout(args)]),
  ),
  // Cobbler's provisioning server: `sync` rewrites and restarts the machine's DHCP, DNS and TFTP; its
  // distributions, profiles and systems added, changed or imported; listings, reports and `check` read.
  cobbler: (_args, ops) =>
    /^(sync|import|replicate|buildiso|hardlink|reposync|mkloaders)$/.test(ops[0] ?? '') || /^(add|edit|copy|rename|remove)$/.test(ops[1] ?? ''),
  // supervisord itself is the daemon that starts and keeps every program of its configuration running.
  supervisord: (args) => !args.some((a) => /^(-h|--help|-v|--version)$/.test(a.text)),
  // ZFS's pools and datasets: created, destroyed, rolled back, received into or their properties set; listings and `send` to a pipe read.
  // zfs-prune-snapshots destroys the snapshots older than its age; `-n` (`-vn`) only lists them.
  'zfs-prune-snapshots': (args, ops) => ops.length > 0 && !onlyAsksAbout(args) && !hasFlag(args, 'n'),
  zfs: (_args, ops) =>
    /^(create|destroy|rollback|set|inherit|rename|promote|clone|snapshot|receive|recv|mount|unmount|umount|allow|unallow|load-key|unload-key|change-key|upgrade)$/.test(
      ops[0] ?? '',
    ),
  zpool: (_args, ops) =>
    /^(create|destroy|add|remove|attach|detach|import|export|clear|online|offline|replace|upgrade|set|split|reguid|labelclear|initialize|trim|scrub)$/.test(
      ops[0] ?? '',
    ),
  // strongSwan's connections and daemon: brought up or down, restarted; status and listings read.
  ipsec: (_args, ops) => /^(start|stop|restart|reload|up|down|rereadall|rereadsecrets|purgeike|update)$/.test(ops[0] ?? ''),
  // An ESXi host's namespaces end in a verb (`esxcli network firewall set`, `esxcli vm process kill`): list and get read.
  esxcli: (args) => {
    const words = args.map((a) => a.text);
    const start = words.findIndex((t) => !t.startsWith('-'));
    if (start < 0) return false;
    const end = words.findIndex((t, k) => k > start && t.startsWith('-'));
    return !/^(list|get)$/.test(words[(end < 0 ? words.length : end) - 1]!);
  },
  // Multipass' virtual machines launched, started, stopped, deleted or given the host's directories; listing, info and a shell in one read.
  multipass: (_args, ops) =>
    /^(launch|start|stop|restart|suspend|delete|purge|recover|mount|unmount|umount|transfer|set|alias|unalias|authenticate|snapshot|restore|clone)$/.test(
      ops[0] ?? '',
    ),
  // vim-cmd's operations are paths (`vmsvc/getallvms`, `vmsvc/power.off`): a getter or a listing reads, the rest act on the host's VMs.
  'vim-cmd': (_args, ops) => ops.length > 0 && !/(^|[/.])(get|list|query)[\w.]*$/.test(ops[0]!),
  // Apache's modules, sites and configurations, and PHP's extensions, switched on or off for the machine's
  // web server and PHP (Debian's helpers).
  ...Object.fromEntries(
    ['a2enmod', 'a2dismod', 'a2ensite', 'a2dissite', 'a2enconf', 'a2disconf', 'phpenmod', 'phpdismod'].map((p) => [
      p,
      (args: Word[], ops: string[]) => ops.length > 0 && !args.some((a) => /^(-h|--help)$/.test(a.text)),
    ]),
  ),
  // CraftBeerPi's server started at boot, or its kiosk browser (`cbpi autostart on`, `cbpi chromium off`): a service of the machine.
  cbpi: (_args, ops) => /^(autostart|chromium)$/.test(ops[0] ?? '') && /^(on|off)$/.test(ops[1] ?? ''),
  // Mininet's clean-up (`mn -c`) tears down every emulated network left over on the machine: its interfaces,
  // namespaces and switches, and the processes that ran in them.
  mn: (args) => args.some((a) => /^(-c|--clean)$/.test(a.text)),
  // Koha's Debian helpers make and remove library instances (a database, a system user, an Apache site each)
  // and switch their daemons on or off (`koha-plack --enable lib`); `koha-list` reads.
  ...Object.fromEntries(
    ['koha-create', 'koha-remove', 'koha-enable', 'koha-disable'].map((p) => [p, (args: Word[]) => !args.some((a) => /^(-h|--help)$/.test(a.text))]),
  ),
  ...Object.fromEntries(
    ['koha-plack', 'koha-z3950-responder', 'koha-indexer', 'koha-worker', 'koha-sip', 'koha-zebra', 'koha-es-indexer'].map((p) => [
      p,
      (args: Word[]) => args.some((a) => /^--(enable|disable|start|stop|restart)$/.test(a.text)),
    ]),
  ),
  // The machine's alternatives (which compiler or editor `/usr/bin/x` is) chosen, installed or removed; `--display`, `--list` and `--query` read.
  'update-alternatives': (args) => args.some((a) => /^--(config|set|install|remove|remove-all|auto|all|set-selections)$/.test(a.text)),
  // DKMS builds and installs kernel modules for every installed kernel, and makes the machine owner key
  // that signs them; `status` reads.
  dkms: (_args, ops) =>
    /^(add|remove|build|unbuild|install|uninstall|autoinstall|match|mkdeb|mkrpm|mkdriverdisk|mktarball|ldtarball|generate_mok)$/.test(ops[0] ?? ''),
  // The hardware clock set from the system's or to a time (`hwclock -w`, `--systohc`, `--set`); reading it (`-r`) changes nothing.
  hwclock: (args) => args.some((a) => /^(-w|--systohc|-s|--hctosys|--set|--adjust|-a|--localtime|--utc|-u)$/.test(a.text)),
  // A Raspberry Pi's configuration (boot options, interfaces, locale, overclocking), interactive or `nonint`.
  'raspi-config': () => true,
  // The firmware's boot entries and order created, deleted or changed (`efibootmgr -B -b 0001`, `-o`, `-n`); alone or with `-v` it lists them.
  efibootmgr: (args) =>
    args.some((a) =>
      /^(-[a-zA-Z]*[cBoOnNaAtTgr]|--(create|delete-bootnum|bootorder|delete-bootorder|bootnext|delete-bootnext|active|inactive|timeout|delete-timeout|gpt|driver|create-only))/.test(
        a.text,
      ),
    ),
  // Secure Boot's key databases (PK, KEK, db, dbx) written from update files, or the machine owner keys enrolled or removed.
  'efi-updatevar': (args) => !args.some((a) => /^(-h|--help|--version)$/.test(a.text)),
  sbkeysync: (args) => !args.some((a) => /^(-h|--help|--version|--dry-run|-n)$/.test(a.text)),
  mokutil: (args) =>
    args.some((a) =>
      /^--(import|delete|revoke-import|revoke-delete|reset|disable-validation|enable-validation|set-verbosity|sb-state-set|password|clear-password|import-hash|delete-hash|mokx|timeout|trust-mok|untrust-mok)/.test(
        a.text,
      ),
    ),
  // A Raspberry Pi's bootloader EEPROM updated, committed or switched to the other partition (`rpi-eeprom-update -a`, `rpi-eeprom-ab commit`).
  'rpi-eeprom-update': (args) => args.some((a) => /^-[a-zA-Z]*[adfru]/.test(a.text)),
  'rpi-eeprom-ab': (_args, ops) =>
    /^(update|commit|force-commit-opposite|mark-partition-valid)$/.test(ops[0] ?? '') || (ops[0] === 'tryboot' && ops.length > 1),
  // A Raspberry Pi's firmware and kernel replaced (`BRANCH=next rpi-update`).
  'rpi-update': (args) => !args.some((a) => /^(-h|--help)$/.test(a.text)),
  // BIND's control channel: its cache flushed or dumped, zones reloaded, the server stopped; `status` reads.
  rndc: (_args, ops) => ops.length > 0 && !/^(status|version|zonestatus|showzone|nta|tsig-list|validation)$/.test(ops[0]!),
  // udev's rules reloaded or its events replayed for every device (`udevadm control --reload-rules`, `trigger`); `info` and `monitor` read.
  udevadm: (_args, ops) => /^(control|trigger|test-builtin)$/.test(ops[0] ?? ''),
  // ClamAV's signature databases of the machine updated (or kept updated as a daemon), and its scanner installed as a service.
  freshclam: (args) => !args.some((a) => /^(-h|--help|-V|--version|--list-mirrors)$/.test(a.text)),
  clamd: (args) => args.some((a) => /^--(install|uninstall)-service$/.test(a.text)),
  // A device's A/B updaters: an update written to the other slot, a slot marked good or bad, a bundle
  // mounted, the update daemon run; a bundle built and the status read leave the device as it is.
  rauc: (_args, ops) => /^(install|mark-good|mark-bad|mark-active|write-slot|mount|service)$/.test(ops[0] ?? ''),
  'mender-update': (_args, ops) => /^(install|commit|rollback|daemon|resume)$/.test(ops[0] ?? ''),
  'mender-auth': (_args, ops) => /^(daemon|bootstrap)$/.test(ops[0] ?? ''),
  swupdate: (args) => args.some((a) => /^(-i|--image|-d|--download|-w|--webserver|-u|--suricatta)$/.test(a.text)),
  // The SASL user database of the machine's mail and directory servers (`saslpasswd2 -c user`).
  saslpasswd2: (args) => !args.some((a) => /^(-h|--help|-v)$/.test(a.text)),
  // A HackRF's CPLD programmed from a bitstream (`hackrf_cpldjtag -x default.xsvf`).
  hackrf_cpldjtag: (args) => args.some((a) => /^(-x|--xsvf)(=|$)/.test(a.text)),
  // A TUN/TAP interface made or removed on the machine (`tunctl -t tap0 -u kali`).
  tunctl: (args) => !args.some((a) => /^(-h|--help)$/.test(a.text)),
  // The machine's cryptographic policy for every TLS and ssh client and server; `--show` and `--check` read.
  'update-crypto-policies': (args) => !args.some((a) => /^(--show|--check|--is-applied|-h|--help)$/.test(a.text)),
  // apkg (packaging's automation) installs the build's system dependencies and the built packages on the machine.
  apkg: (_args, ops) => /^(system-setup|build-dep|install)$/.test(ops[0] ?? ''),
  // octoDNS pushes its zones to the DNS providers only with `--doit`; without it the sync is a plan.
  'octodns-sync': (args) => args.some((a) => a.text === '--doit'),
  // FreeBSD's rc.conf: `sysrc name=value` (or `-x name`) changes what starts at boot and how; `sysrc name` reads.
  sysrc: (args, ops) => ops.some((o) => o.includes('=')) || args.some((a) => /^-[a-zA-Z]*x/.test(a.text)),
  // acme.sh issues, renews, revokes and installs certificates, and installs itself with a cron job in
  // the home; `--info`, `--list` and its help read.
  'acme.sh': (args) => args.length > 0 && !args.every((a) => /^(-h|--help|-v|--version|--info|--list|-d|--domain|--ecc|[\w*.-]+\.[a-z]{2,})$/.test(a.text)),
};
const machineChange: Rule = ({ prog, args, st }) => {
  if (prog !== 'date') st.repeatable = false;
  const base = prog.replace(/^(ip6tables|iptables-legacy|iptables-nft|iptables-restore)$/, 'iptables');
  if (base === 'iptables' && prog.endsWith('restore')) return danger(st, `changes the machine's firewall (${prog})`);
  if (
    MACHINE_CHANGE[base]!(
      args,
      operands(args).map((a) => a.text),
    )
  )
    danger(
      st,
      `changes the machine's network, firewall, disks, mounts, services, clock, security policy or virtual machines (${[prog, ...args.map((a) => a.text)].join(' ')})`,
    );
};

/** The system's logs: vacuuming or rotating them deletes what happened on the machine. */
const journal: Rule = ({ args, st }) => {
  if (args.some((a) => /^--(vacuum-(size|time|files)|rotate|flush|relinquish-var)(=|$)/.test(a.text)))
    danger(st, "deletes or rotates the machine's logs (journalctl)");
};

/**
 * A file system's blocks opened directly (debugfs, the ext2/3/4 debugger): what it reads passes by every
 * file's owner and mode (`cat /etc/shadow` inside it), and `-w` writes the blocks themselves.
 */
const fileSystemDebugger: Rule = ({ prog, args, st }) => {
  if (args.length && args.every((a) => /^(-V|-h|--help)$/.test(a.text))) return;
  danger(st, `opens a file system's blocks directly, past its files' permissions (${prog} ${args.map((a) => a.text).join(' ')})`);
};

/** Windows' setx writes a variable into the user's (or with /M the machine's) environment for every later process. */
const persistentVariable: Rule = ({ args, st }) => {
  if (!(args.length === 1 && args[0]!.text === '/?'))
    danger(st, `sets an environment variable for every later process of the user (setx ${args[0]?.text ?? ''})`);
};

/** Another process's memory (gcore, gdb -p): it may hold the worker's secrets. */
const readsProcessMemory: Rule = ({ prog, st }) => danger(st, `dumps another process's memory, which may hold secrets (${prog})`);

/**
 * Memory scanners and trainers attach to a running process to search and rewrite its memory: scanmem
 * given a pid, memscan's scans, dumps and writes given one (its `info` reads the process's map), and
 * ugtrain's `-S` (it runs scanmem on the game). A trainer that only starts the game with its library
 * preloaded (`ugtrain -P`) works on a process it starts itself.
 */
const memoryScanner: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  const attaches =
    prog === 'ugtrain'
      ? args.some((a) => /^-[a-zA-Z]*S[a-zA-Z]*$|^--scanmem$/.test(a.text))
      : (!prog.startsWith('memscan') || /^(scan|dump|write|freeze)$/.test(operands(args)[0]?.text ?? '')) &&
        (args.some((a) => /^(-p|--pid)(=|$)/.test(a.text)) || operands(args).some((a) => /^\d+$/.test(a.text)));
  if (attaches) danger(st, `attaches to another process to read and rewrite its memory (${prog})`);
};
const accounts: Rule = ({ prog, st }) => danger(st, `changes system accounts (${prog})`);

/**
 * A disk image in the workspace (`mkfs.fat storage.img`, `cfdisk sd.img`), named as one, is a file the
 * build makes: formatting or partitioning it touches no disk. A device, or a name a variable holds, may be one.
 */
const DISK_IMAGE_FILE = /\.(img|raw|iso|qcow2|vhdx?|vmdk|ext[234]|fat|squashfs)$/i;
const onlyDiskImages = (prog: string, args: Word[], st: State) => {
  // The formatters' options that take a value (a label, a size, a type, a directory to copy in).
  const ops = operands(args, prog === 'parted' ? /^$/ : /^-[LnFbEOtTNmiIcUJdgGsSaCh]$/);
  // parted's first operand is the disk; the rest are its commands.
  const targets = prog === 'parted' ? ops.slice(0, 1) : ops.filter((a) => !/^\d+[KMGT]?$/i.test(a.text));
  return targets.length > 0 && targets.every((t) => DISK_IMAGE_FILE.test(t.text) && !/[$`]/.test(t.text) && classify(t, st).cls === 'inside');
};

/**
 * Whether a partitioning tool only lists the partition tables (`fdisk -l`, `sfdisk -l`, `parted -l`,
 * `parted /dev/sda print`) or prints its version or help: a read, like `lsblk`.
 */
function listsPartitions(prog: string, args: Word[]): boolean {
  if (args.length && args.every((a) => /^(-v|-V|--version|-h|--help)$/.test(a.text))) return true;
  if (/^(fdisk|sfdisk|gdisk)$/.test(prog))
    return (
      args.some((a) => /^(-l|--list|-s|--show-size|-d|--dump)$/.test(a.text)) &&
      !args.some((a) => /^(-w|--wipe|--delete|--append|--no-act)$/.test(a.text.replace(/=.*/, '')))
    );
  if (prog === 'parted') {
    const ops = operands(args, /^(-a|--align)$/).map((a) => a.text);
    // parted takes a command's unambiguous abbreviation (`p` for print).
    return args.some((a) => /^(-l|--list)$/.test(a.text)) || (ops.length === 2 && /^(p|pr|pri|prin|print)$/.test(ops[1]!));
  }
  return false;
}

/** The database's own superuser accounts (MySQL's and MariaDB's root, PostgreSQL's postgres and the BSD ports' pgsql). */
const DATABASE_SUPERUSER = /^(root|postgres|pgsql)$/;
/** MySQL's, MariaDB's and PostgreSQL's clients and administration programs. */
export const DATABASE_CLIENTS: readonly string[] = [
  'mysql',
  'mariadb',
  'mysqladmin',
  'mariadb-admin',
  'mysqldump',
  'mariadb-dump',
  'psql',
  'pg_dump',
  'pg_dumpall',
  'pg_restore',
  'createdb',
  'dropdb',
  'createuser',
  'dropuser',
];
/** The user a database client logs in as: MySQL's `-u NAME`/`-uNAME`/`--user=NAME`, PostgreSQL's `-U`/`--username`, or a URI's `postgres@`. */
function databaseUser(prog: string, args: Word[]): string | undefined {
  const [short, long] = /^(psql|pg_\w+|createdb|dropdb|createuser|dropuser|vacuumdb|reindexdb|clusterdb)$/.test(prog) ? ['-U', '--username'] : ['-u', '--user'];
  for (const [k, a] of args.entries()) {
    const t = a.text;
    if (t === short || t === long) return args[k + 1]?.text;
    if (t.startsWith(short) && t.length > 2 && !t.startsWith('--')) return t.slice(2);
    if (t.startsWith(`${long}=`)) return t.slice(long.length + 1);
    const uri = /^postgres(?:ql)?:\/\/([^:@/]+)[:@]/.exec(t);
    if (uri) return uri[1];
  }
  return undefined;
}

/**
 * A database client logged in as the database's superuser: every database, its users' password
 * hashes, and (through COPY … PROGRAM, sys_exec or INTO OUTFILE) the server's files and commands.
 */
const databaseClient: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  const user = databaseUser(prog, args);
  if (user !== undefined && DATABASE_SUPERUSER.test(user)) return danger(st, `logs in to the database as its superuser (${prog} as ${user})`);
  // MySQL's clients given the password itself (`-p'CQHEy@9M…'`, `--password=…`) log in as an account whose
  // password the text holds, a login someone else's secret opens; `-p` alone asks for it.
  if (MYSQL_CLIENT.test(prog) && args.some((a) => /^(-p|--password=)(?!\$)\S/.test(a.text)))
    danger(st, `logs in to the database with a password written in the command (${prog})`);
  // A server named by another machine's address (`mysql -h 10.201.14.189`, `--host=172.16.0.5`): its data, not the project's.
  const host = args.findIndex((a) => /^(-h|--host|-H|-S)(=|$)|^-h\d/.test(a.text));
  const address = host < 0 ? undefined : /^-h\d/.test(args[host]!.text) ? args[host]!.text.slice(2) : optionValue(args, host);
  if (address !== undefined && otherMachineAddress(address)) danger(st, `logs in to the database of another machine named by its address (${prog} ${address})`);
  else databaseElsewhere(prog, args, st, address);
};

/** A database's connection URI (`postgres://app@db.example.com/app`, `mongodb+srv://cluster0.x.mongodb.net`): its host. */
const DATABASE_URI = /^['"]?(?:postgres(?:ql)?|mysql|mariadb|mongodb(?:\+srv)?|rediss?|clickhouse|cassandra):\/\/(?:[^@/\s]*@)?([^/:?,\s'"]+)/i;
/** A host by its dotted name (`db.prod.example.com`), not this machine's and not an address's numbers alone. */
const dottedOtherHost = (name: string) => /^[\w-]+(\.[\w-]+)*\.[A-Za-z][\w-]*$/.test(name) && !namesThisMachine(name);
/** A database's host that is another machine's: by its dotted name or its address; a single word is the project's own container. */
const otherDatabaseHost = (host: string) => dottedOtherHost(host) || otherMachineAddress(host);
/** cqlsh's options that take the next word, so its host is the first operand after them (`cqlsh -f commands.cql db.example.com`). */
const CQLSH_VALUED =
  /^(-f|--file|-u|--username|-p|--password|-k|--keyspace|-e|--execute|--cqlshrc|--cqlversion|--encoding|--connect-timeout|--request-timeout|-t|--timezone)$/;
/**
 * A database client pointed at a server of another machine by its dotted name or a connection URI
 * (`psql -h db.prod.example.com`, `mongosh "mongodb+srv://cluster0…"`): a login to another host, whose
 * data is no copy of the project's. A single-word host (`-h db`, `--host=postgres`) is a container or
 * service of the project's own test setup.
 */
function databaseElsewhere(prog: string, args: Word[], st: State, hostOption?: string): void {
  const named = hostOption !== undefined && dottedOtherHost(hostOption) ? hostOption : undefined;
  const uriHost = args.map((a) => DATABASE_URI.exec(a.text)?.[1]).find((h) => h !== undefined && otherDatabaseHost(h));
  const elsewhere = named ?? uriHost;
  if (elsewhere) danger(st, `logs in to the database of another machine (${prog} ${elsewhere})`);
}
const MYSQL_CLIENT = /^(mysql|mariadb|mysqladmin|mariadb-admin|mysqldump|mariadb-dump)$/;

/** Oracle's connect string with a password, `user/password@host[:port]/service` or `user/password@//host/service`: its host. */
const ORACLE_CONNECT = /^[\w$]+\/[^@\s]+@(?:\/\/)?([^:/\s]+)/;
/**
 * Oracle's SQL*Plus logged in as the database's administrator (`as sysdba`, `sysoper`, `sysasm`), which reads every
 * schema and runs the server's own programs, or with a password written in the command to another machine's database
 * (`sqlplus scott/tiger@db.example.com:1521/XE`), as the other clients' hosts are read: one on this machine, or a single
 * word naming a container of the project's setup, is its test database. The rest is judged as any program's arguments are.
 */
const oracleClient: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  const role = args.findIndex((a, k) => /^as$/i.test(a.text) && /^sys(dba|oper|asm|backup|dg|km)$/i.test(args[k + 1]?.text ?? ''));
  if (role >= 0) return danger(st, `logs in to the database as its administrator (${prog} as ${args[role + 1]!.text})`);
  const login = args.map((a) => ORACLE_CONNECT.exec(a.text)).find((m) => m !== null);
  if (login && otherDatabaseHost(login[1]!)) danger(st, `logs in to another machine's database with a password written in the command (${prog} ${login[1]})`);
  judgeUnknownProgram(prog, args, st);
};

/**
 * A CI runner's agent registered with a server, or run, takes the server's jobs and runs them on this
 * machine with the runner's token (GitLab's, Gitea's and Forgejo's runners); listing, asking about
 * itself and a job run here (`gitlab-runner exec`) are this machine's own.
 */
const ciRunner: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  const verb = operands(args)[0]?.text;
  if (verb && !/^(list|help|version|verify|exec|generate-config)$/.test(verb) && !onlyAsksAbout(args))
    danger(st, `registers or runs a CI runner that takes another server's jobs (${prog} ${verb})`);
};

/** The machine's certificate authorities: every TLS connection of every program trusts what these add; `trust list` reads. */
const trustsAuthorities = (prog: string, st: State) => danger(st, `changes the certificate authorities the whole machine trusts (${prog})`);
const certificateAuthorities: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  if (prog === 'trust' ? /^(anchor|extract|extract-compat)$/.test(operands(args)[0]?.text ?? '') : !onlyAsksAbout(args)) trustsAuthorities(prog, st);
};
/**
 * mkcert's `-install` and `-uninstall` add or remove its own CA among the machine's (and the browsers');
 * the certificates it makes for names are files, judged by where it writes them (`-cert-file /etc/…`).
 */
const mkcert: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  if (args.some((a) => /^--?(install|uninstall)$/.test(a.text))) trustsAuthorities(prog, st);
  judgeUnknownProgram(prog, args, st);
};

/**
 * The machine's and the session's message bus (D-Bus): calling a method, setting a property or
 * emitting a signal (`busctl --user call … StartUnit`, `gdbus call --method …LinkUnitFiles`, any
 * `dbus-send`) starts services, links units and changes settings as the service that answers does;
 * introspecting, reading a property, listing and watching the bus read. Its object paths
 * (`/org/freedesktop/systemd1`) name no file; an address that runs a program (`unixexec:`) is read where
 * executing options are.
 */
const BUS_VALUED = /^(--address|-M|--machine|-H|--host|--dest|-d|--object-path|-o|--method|-m|--timeout|-t)$/;
const messageBus: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  const ops = operands(args, BUS_VALUED).map((a) => a.text);
  const verb = ops[0];
  // A method that only reads (`org.freedesktop.DBus.Properties.Get`, `Introspect`, a service's `GetSlotStatus` or
  // `ListUnits`), by gdbus' --method, busctl call's fifth word or dbus-send's second operand (after the object path).
  const k = args.findIndex((a) => /^(--method|-m)(=|$)/.test(a.text));
  const method = k >= 0 ? optionValue(args, k) : verb === 'call' ? ops[4] : prog === 'dbus-send' ? ops[1] : undefined;
  if (method !== undefined && /(^|\.)(Get|List)[A-Z]?\w*$|(^|\.)(Introspect|Ping)$/.test(method)) return;
  if (prog === 'dbus-send' || /^(call|set-property|emit|wait)$/.test(verb ?? '') || (prog === 'qdbus' && ops.length > 2))
    danger(st, `calls a method on the message bus, which starts services and changes settings (${prog}${verb && prog !== 'dbus-send' ? ` ${verb}` : ''})`);
};

/**
 * dpkg-deb asked about a package file (`-I pkg.deb control`, `--contents`, `--field`, its archives printed) reads it
 * wherever it lies; building or extracting writes where it is told, judged as a program no table names.
 */
const dpkgDeb: Rule = ({ prog, args, st }) => {
  if (args.some((a) => /^(-I|--info|-c|--contents|-f|--field|-W|--show|--ctrl-tarfile|--fsys-tarfile)$/.test(a.text))) return;
  judgeUnknownProgram(prog, args, st);
};

export const SYSTEM_RULES: RuleTable = {
  programs: {
    'dpkg-deb': dpkgDeb,
    'gitlab-runner': ciRunner,
    act_runner: ciRunner,
    'forgejo-runner': ciRunner,
    kill,
    pkill: kill,
    killall: kill,
    killall5: kill,
    fuser,
    xhost,
    vssadmin: shadowCopies,
    'vssadmin.exe': shadowCopies,
    // ntdsutil administers a domain controller's directory database: its `ifm` media and snapshots are copies of every account's hash.
    ntdsutil: ({ prog, args, st }) => {
      if (!args.every((a) => /^[/-](\?|h(elp)?)$/i.test(a.text))) danger(st, `administers or copies the domain's account database (${prog})`);
    },
    init: ({ args, st }) => {
      if (args[0] && /^[06]$/.test(args[0].text)) danger(st, `shuts down or reboots the machine (init ${args[0].text})`);
      st.repeatable = false;
    },
    systemctl: (c) => {
      if (c.args.some((a) => /^(poweroff|reboot|halt|kexec|suspend|hibernate|emergency|rescue)$/.test(a.text)))
        danger(c.st, 'shuts down or reboots the machine (systemctl)');
      services(c);
    },
    service: services,
    'rc-service': services,
    dinitctl: services,
    // Upstart's control: `initctl stop ecm` stops a job of the machine as `service` does.
    initctl: services,
    'update-rc.d': bootRegistration,
    chkconfig: bootRegistration,
    insserv: bootRegistration,
    'rc-update': bootRegistration,
    debugfs: fileSystemDebugger,
    setx: persistentVariable,
    'setx.exe': persistentVariable,
    // systemd-sysusers creates the system users and groups sysusers.d declares; its reading forms print them.
    'systemd-sysusers': ({ args, st }) => {
      if (!args.some((a) => /^(--cat-config|--tldr|--dry-run|-h|--help|--version)$/.test(a.text)))
        danger(st, 'creates system users and groups (systemd-sysusers)');
    },
    modprobe: kernelModules,
    bpftool,
    bpftrace,
    pcs: clusterManager,
    crm: clusterManager,
    drbdadm: clusterManager,
    insmod: kernelModules,
    depmod: moduleIndex,
    'apt-key': packageKeys,
    'pacman-key': pacmanKey,
    xset,
    // Ubuntu's unminimize reinstalls the packages, documentation and man pages a minimal image left out.
    unminimize: dangerUnlessOnlyAsked(() => "changes the machine's installed packages (unminimize)"),
    // The distribution's script that creates the PostgreSQL service's data directory, as its service account.
    'postgresql-setup': dangerUnlessOnlyAsked((prog) => `sets up the machine's database service (${prog})`),
    rmmod: kernelModules,
    kextload: kernelModules,
    kextunload: kernelModules,
    // FreeBSD's loader and unloader.
    kldload: kernelModules,
    kldunload: kernelModules,
    sysctl: kernelSetting,
    ldconfig: libraryCache,
    gcore: readsProcessMemory,
    scanmem: memoryScanner,
    memscan: memoryScanner,
    'memscan-cli': memoryScanner,
    ugtrain: memoryScanner,
    ...Object.fromEntries([...Object.keys(MACHINE_CHANGE), 'ip6tables', 'iptables-legacy', 'iptables-nft', 'iptables-restore'].map((p) => [p, machineChange])),
    journalctl: journal,
    postmap: postfixLookupTable,
    postalias: postfixLookupTable,
    // The desktop's settings (GNOME's gsettings and dconf, KDE's kwriteconfig, Xfce's xfconf-query) are the
    // user's, kept in the home for every later session: setting, resetting or loading them changes how the
    // desktop behaves (its lock screen, its proxies, the programs it starts); getting and listing them read.
    gsettings: desktopSetting(/^(set|reset|reset-recursively)$/),
    dconf: desktopSetting(/^(write|reset|load|compile|update)$/),
    kwriteconfig5: desktopSetting(/./),
    kwriteconfig6: desktopSetting(/./),
    // The desktop's file associations, default applications and menus, the user's (or the machine's, as root).
    'xdg-mime': desktopSetting(/^(install|uninstall|default)$/),
    'xdg-settings': desktopSetting(/^set$/),
    'xdg-desktop-menu': desktopSetting(/^(install|uninstall|forceupdate)$/),
    'xdg-icon-resource': desktopSetting(/^(install|uninstall|forceupdate)$/),
    'xfconf-query': ({ args, st }) => {
      if (args.some((a) => /^(-s|--set|-r|--reset|-n|--create|-t|--type)$/.test(a.text))) danger(st, `changes a setting of the user's desktop (xfconf-query)`);
    },
    // GNOME Shell's extensions run inside the user's desktop session, with its windows and keys: installing,
    // removing, enabling or disabling one changes the desktop; listing and showing them read.
    'gnome-extensions': ({ args, st }) => {
      const verb = operands(args)[0]?.text;
      if (/^(install|uninstall|enable|disable|reset)$/.test(verb ?? '')) danger(st, `changes the desktop's extensions (gnome-extensions ${verb})`);
    },
    busctl: messageBus,
    gdbus: messageBus,
    'dbus-send': messageBus,
    qdbus: messageBus,
    // chrony's daemon sets the machine's clock (`chronyd -q 'pool pool.ntp.org iburst'`); its client's commands
    // other than its reports steer the daemon (steps, sources, logs, the clock's file).
    chronyd: ({ args, st }) => {
      if (!args.some((a) => /^(-v|--version|-h|--help|-p)$/.test(a.text))) danger(st, "sets the machine's clock (chronyd)");
    },
    // linuxptp's daemons discipline a network card's clock and the machine's from it (ptp4l, phc2sys, ts2phc,
    // timemaster), and Facebook's ptp4u and sptp serve or take PTP time on an interface; phc_ctl sets a card's clock.
    ...Object.fromEntries(
      ['ptp4l', 'phc2sys', 'ts2phc', 'timemaster', 'ptp4u', 'sptp'].map((p) => [
        p,
        dangerUnlessOnlyAsked((prog) => `sets or serves the machine's clock (${prog})`),
      ]),
    ),
    phc_ctl: ({ args, st }) => {
      if (args.some((a) => /^(set|adj|freq)$/.test(a.text))) danger(st, "sets a network card's clock (phc_ctl)");
    },
    chronyc: ({ args, st }) => {
      const verb = operands(args)[0]?.text;
      if (
        verb &&
        !/^(tracking|sources|sourcestats|selectdata|activity|ntpdata|authdata|clients|serverstats|rtcdata|smoothing|waitsync|manual|help|sourcename)$/.test(
          verb,
        )
      )
        danger(st, `steers the machine's time daemon (chronyc ${verb})`);
    },
    // systemd-tmpfiles creates, cleans and removes the files its configuration names, the user's or the
    // machine's; its other forms print the configuration. getopt takes a long option by any unambiguous
    // prefix (`--cr`, `--rem`); `--c` and `--r` are ambiguous and refused.
    'systemd-tmpfiles': ({ args, st }) => {
      st.repeatable = false;
      const acts = args.find((a) => /^--(cr[a-z]*|cle[a-z]*|rem[a-z]*|pur[a-z]*|boot)$/.test(a.text));
      if (acts) danger(st, `creates, cleans or removes the files its configuration names (systemd-tmpfiles ${acts.text})`);
    },
    ...Object.fromEntries(DATABASE_CLIENTS.map((p) => [p, databaseClient])),
    sqlplus: oracleClient,
    mknod: ({ args, st }) => {
      // A block or character node is a door to a device (a disk read raw, its files unchecked); a fifo (p) is a pipe.
      const type = operands(args, /^(-m|--mode|-Z|--context)$/)[1]?.text;
      if (type !== 'p') danger(st, `creates a device node (mknod ${type ?? ''}), which reads or writes the device behind it`);
    },
    crontab: ({ args, st }) => {
      st.repeatable = false;
      if (hasFlag(args, 'r')) danger(st, 'removes all cron jobs (crontab -r)');
    },
    shutdown: power,
    reboot: power,
    halt: power,
    poweroff: power,
    telinit: power,
    passwd: accounts,
    chpasswd: accounts,
    useradd: accounts,
    userdel: accounts,
    usermod: accounts,
    // FreeBSD's pw: its user and group verbs (`useradd`, `user add`) add, change or remove accounts; `show` and `next` read.
    pw: (ctx) => {
      const verb = operands(ctx.args)
        .slice(0, 2)
        .map((a) => a.text)
        .join('');
      if (/^(user|group)(add|mod|del)|^(lock|unlock)/.test(verb)) accounts(ctx);
    },
    groupadd: accounts,
    groupmod: accounts,
    groupdel: accounts,
    visudo: accounts,
    adduser: accounts,
    addgroup: accounts,
    deluser: accounts,
    delgroup: accounts,
    gpasswd: accounts,
    ...Object.fromEntries(
      [
        'dracut',
        'update-initramfs',
        'mkinitcpio',
        'mkinitramfs',
        'update-grub',
        'update-grub2',
        'grub-install',
        'grub2-install',
        'grub-mkconfig',
        'grub2-mkconfig',
        'lilo',
      ].map((p) => [p, bootImage]),
    ),
    ...Object.fromEntries(['winget', 'choco', 'scoop'].map((p) => [p, windowsPackages])),
    // Chocolatey's shorthand for `choco install`.
    cinst: ({ st }) => danger(st, "changes the machine's installed packages (cinst)"),
    ...Object.fromEntries(['nginx', 'apachectl', 'apache2ctl', 'httpd'].map((p) => [p, webServer])),
    kong,
    'opensips-cli': opensipsCli,
    prosodyctl,
    ...Object.fromEntries(['filebeat', 'metricbeat', 'packetbeat', 'auditbeat', 'winlogbeat', 'functionbeat'].map((p) => [p, beat])),
    'redis-cli': redisCli,
    'valkey-cli': redisCli,
    // MongoDB's and Cassandra's shells and tools: judged as programs no table names are, and by the server they log in to.
    ...Object.fromEntries(
      ['mongosh', 'mongo', 'mongodump', 'mongorestore', 'mongoimport', 'mongoexport', 'mongofiles', 'cqlsh'].map((p): [string, Rule] => [
        p,
        ({ prog, args, st }) => {
          judgeUnknownProgram(prog, args, st);
          databaseElsewhere(prog, args, st, prog === 'cqlsh' ? operands(args, CQLSH_VALUED)[0]?.text : undefined);
        },
      ]),
    ),
    certbot,
    maddy,
    nix,
    'nix-env': nixEnv,
    rosdep,
    wsl,
    'wsl.exe': wsl,
    createuser: postgresAdmin,
    dropuser: postgresAdmin,
    dropdb: postgresAdmin,
    'nix-channel': nixChannel,
    'nixos-rebuild': nixActivation,
    'darwin-rebuild': nixActivation,
    'home-manager': nixActivation,
    'nix-installer': nixInstaller,
    ...Object.fromEntries(['update-ca-certificates', 'update-ca-trust', 'trust'].map((p) => [p, certificateAuthorities])),
    mkcert,
    'add-apt-repository': ({ prog, st }) => danger(st, `changes the machine's package repositories (${prog})`),
    'apt-add-repository': ({ prog, st }) => danger(st, `changes the machine's package repositories (${prog})`),
    // Gentoo's overlays added, removed or synced change the packages portage installs; listing them reads.
    layman: ({ prog, args, st }) => {
      const change = args.find((a) => /^(-a|--add|-d|--delete|-s|--sync|-S|--sync-all|-f|--fetch)$/.test(a.text));
      if (change) danger(st, `changes the machine's package repositories (${prog} ${change.text})`);
    },
    ...Object.fromEntries(SYSTEM_PACKAGE_MANAGERS.map((p) => [p, systemPackages])),
  },
  patterns: [
    [HESTIA_COMMAND, hestia],
    [
      /^(mkfs(\..+)?|mke2fs|mkswap|wipefs|fdisk|sfdisk|cfdisk|gdisk|sgdisk|parted|gparted|badblocks)$/,
      ({ prog, args, st }) => {
        if (!listsPartitions(prog, args) && !onlyDiskImages(prog, args, st)) danger(st, `formats or repartitions disks (${prog})`);
      },
    ],
  ],
};
