// macOS administration: the programs that change the Mac itself or the user's account on it rather
// than files in the workspace. launchd's jobs, preferences, disks and images, System Integrity
// Protection and Gatekeeper, privacy grants, the keychain, power, network and system settings,
// firmware variables and the boot volume, software updates and installers, Time Machine, FileVault,
// quarantine flags, code signing, Spotlight, directory-service accounts, the screen, kernel tracing
// and the user's automations. Each program's reading forms (`defaults read`, `diskutil list`,
// `pmset -g`, `csrutil status`, `codesign --verify`, `tmutil status`) are no change and pass; every
// other form needs a person, so a verb no list here knows is a change, not a read.
import type { Word } from '../shell-lex.js';
import { SECRET_SEARCH } from '../secrets.js';
import { judgeUnknownProgram } from './unknown.js';
import { checkWriteTarget, classify, danger, hasFlag, operands, type Rule, type RuleTable, type State } from '../state.js';

export const line = (prog: string, args: Word[]) => [prog, ...args.map((a) => a.text)].join(' ');
const HELP = /^(-h|--help|-help|help|--version|-version|version)$/;
export const onlyHelp = (args: Word[]) => args.length > 0 && args.every((a) => HELP.test(a.text));

/**
 * A program whose first operand is a verb: the verbs in `reads` only look (`launchctl list`,
 * `tmutil status`); any other, or none when `bare` says so, changes the machine.
 */
export function verbs(reads: RegExp, what: string, opts: { bare?: 'reads' | 'changes'; withValue?: RegExp } = {}): Rule {
  return ({ prog, args, st }) => {
    st.repeatable = false;
    if (onlyHelp(args)) return;
    const verb = operands(args, opts.withValue)[0]?.text;
    if (verb === undefined ? opts.bare === 'changes' : !reads.test(verb)) danger(st, `${what} (${line(prog, args)})`);
  };
}

/**
 * A program driven by options (`networksetup -getinfo`, `systemsetup -setsleep`): it only reads when
 * every option is one of `reads`; any other option is a change.
 */
function options(reads: RegExp, what: string, opts: { bare?: 'reads' | 'changes' } = {}): Rule {
  return ({ prog, args, st }) => {
    st.repeatable = false;
    const flags = args.filter((a) => a.text.startsWith('-'));
    if (flags.length === 0 ? opts.bare === 'changes' : !flags.every((a) => reads.test(a.text) || HELP.test(a.text)))
      danger(st, `${what} (${line(prog, args)})`);
  };
}

/** Files a program rewrites in place (`xattr -w`, `codesign -s -`): inside the workspace they are its own. */
function writesEach(targets: Word[], st: State, what: string): void {
  for (const t of targets) checkWriteTarget(t, st, what);
}

/** launchd's jobs start programs at login, at boot and on schedules; only the listings and dumps read. */
const launchctl = verbs(
  /^(list|print|print-cache|print-disabled|blame|dumpstate|dumpjpcategory|getenv|managerpid|manageruid|managername|error|examine|variant|version|help|procinfo|hostinfo|resolveport)$/,
  "changes launchd's agents and daemons, which run programs at login, boot or on a schedule",
);

/** Preferences of the user and the system: writing, deleting or importing one changes how programs behave. */
const defaults: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  const verb = operands(args, /^-(host)$/)[0]?.text ?? '';
  if (/^(write|delete|import|rename)$/.test(verb)) danger(st, `changes a setting of the machine or the user (${line(prog, args)})`);
  // `defaults export DOMAIN FILE` writes the plist where it is told.
  if (verb === 'export') writesEach(operands(args, /^-(host)$/).slice(2), st, 'exports preferences to');
};

/** Disks and volumes: mounting, ejecting, erasing, partitioning, repairing or renaming acts on every program's storage. */
const DISKUTIL_READS =
  /^(list|info|information|listFilesystems|activity|verifyVolume|verifyDisk|listUsers|listCryptoUsers|listSnapshots|listVolumeGroups|listLVFs|listLVGs|listSnapshot|listRAID|listDeviceIdentity|help)$/i;
const diskutil: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  const ops = operands(args).map((a) => a.text);
  // `diskutil apfs list`, `diskutil cs info …`: the verb follows the family.
  const verb = /^(apfs|cs|coreStorage|ar|appleRAID|image)$/i.test(ops[0] ?? '') ? ops[1] : ops[0];
  if (verb !== undefined && !DISKUTIL_READS.test(verb)) danger(st, `mounts, ejects, erases, partitions or repairs a disk (${line(prog, args)})`);
};

/** Disk images: attaching one mounts it for every program; creating or converting one writes only its file. */
const HDIUTIL_CHANGES = /^(attach|mount|mountvol|detach|eject|unmount|burn|erasekeys)$/;
const hdiutil: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  const ops = operands(args, /^-(o|srcfolder|srcdevice|volname|fs|size|type|format|layout|encryption|stdinpass|imagekey|shadow)$/);
  const verb = ops[0]?.text ?? '';
  if (HDIUTIL_CHANGES.test(verb) || args.some((a) => a.text === '-attach' || a.text === '-mount'))
    return danger(st, `attaches, mounts or ejects a disk image or a volume (${line(prog, args)})`);
  const out = args.findIndex((a) => a.text === '-o');
  if (out >= 0 && args[out + 1]) checkWriteTarget(args[out + 1]!, st, 'writes an image to');
  if (/^(create|convert|makehybrid|compact|resize|segment|chpass|flatten|unflatten)$/.test(verb)) writesEach(ops.slice(1), st, 'writes an image to');
};

/** System Integrity Protection, Gatekeeper and privacy grants guard the whole machine. */
const csrutil: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  const ops = operands(args).map((a) => a.text);
  const reads = ops.length === 0 || ops[0] === 'status' || ops.includes('list') || (ops[0] === 'authenticated-root' && ops[1] === 'status');
  if (!reads && !onlyHelp(args)) danger(st, `changes a setting of the machine: System Integrity Protection (${line(prog, args)})`);
};
const spctl: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  const ops = operands(args).map((a) => a.text);
  if (
    args.some((a) => /^--(master|global)-(disable|enable)$|^--(add|remove|enable|disable|reset-default)$/.test(a.text)) ||
    (ops[0] === 'kext-consent' && !/^(status|list)$/.test(ops[1] ?? ''))
  )
    danger(st, `changes a setting of the machine: Gatekeeper's policy (${line(prog, args)})`);
};
const tccutil = verbs(/^$/, 'resets the privacy grants (TCC) of applications', { bare: 'reads' });

/**
 * The keychain holds the user's passwords, keys and certificates, and its trust settings decide
 * whom every program trusts. Listing keychains, signing identities and reading certificate files
 * are the only forms that reveal or change nothing.
 */
const SECURITY_READS =
  /^(list-keychains|default-keychain|login-keychain|show-keychain-info|find-identity|verify-cert|cms|error|help|smartcards?|requirement-evaluate|leaks|list-smartcards)$/;
const security: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  const verb = operands(args)[0]?.text;
  if (verb === undefined) return;
  // `-s` sets the list or the default; `-d DOMAIN` only says whose is read or set.
  const sets = /^(list-keychains|default-keychain|login-keychain)$/.test(verb) && args.some((a) => a.text === '-s');
  const encodes = verb === 'cms' && args.some((a) => a.text === '-S');
  if (!SECURITY_READS.test(verb) || sets || encodes) danger(st, `reads or changes the user's keychain or trust settings (${line(prog, args)})`);
};

/** Power, firmware variables, host names and network settings act on the machine for every user. */
const pmset: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  // Everything but -g acts: `pmset sleepnow`, `pmset repeat wake …`, `pmset -a displaysleep 10`.
  if (!args.some((a) => a.text === '-g') && !onlyHelp(args)) danger(st, `changes a setting of the machine: power management (${line(prog, args)})`);
};
const nvram: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  if (operands(args).some((o) => o.text.includes('=')) || args.some((a) => /^-[a-zA-Z]*[dcf]/.test(a.text)))
    danger(st, `changes a setting of the machine: firmware variables (${line(prog, args)})`);
};
const scutil: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  const nc = args.findIndex((a) => a.text === '--nc');
  if (args.some((a) => /^--(set|renew)$/.test(a.text)) || (nc >= 0 && !/^(list|status|show|statistics|help)$/.test(args[nc + 1]?.text ?? '')))
    danger(st, `changes a setting of the machine: its names, leases or VPN (${line(prog, args)})`);
};
const networksetup = options(/^-(list|get|show|print|version|help|is)/, 'changes a setting of the machine: network services, Wi-Fi, proxies or DNS');
const systemsetup = options(
  /^-(get|list|version|help|printCommands)/i,
  'changes a setting of the machine: clock, sleep, startup disk, remote login or restart',
);

/** The boot volume and NetBoot: which system starts next. */
const bless: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  if (!args.some((a) => /^--?(info|getBoot)$/.test(a.text)) && !onlyHelp(args)) danger(st, `changes how or from where the machine boots (${line(prog, args)})`);
};

/** Software for the whole machine: updates, packages and developer tools installed as root. */
const softwareupdateOptions = options(
  /^(-l|--list|--history|--list-full-installers|--dump-state|--no-scan|--product-types|--verbose|--include-config-data|--schedule)$/,
  'installs or downloads software for the whole machine',
  { bare: 'reads' },
);
/** `--schedule` alone shows whether updates are checked automatically; `--schedule on|off` sets it. */
const softwareupdate: Rule = (c) => {
  softwareupdateOptions(c);
  const k = c.args.findIndex((a) => a.text === '--schedule');
  if (k >= 0 && /^(on|off)$/i.test(c.args[k + 1]?.text ?? ''))
    danger(c.st, `changes a setting of the machine: automatic software updates (${line(c.prog, c.args)})`);
};
const installer: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  const queries = args.some((a) =>
    /^-(pkginfo|volinfo|dominfo|query|showChoicesXML|showChoiceChangesXML|showChoicesAfterApplyingChangesXML|vers|help)$/.test(a.text),
  );
  if (!queries || args.some((a) => /^-(target|tgt)$/.test(a.text))) danger(st, `installs a package for the whole machine (${line(prog, args)})`);
};
const pkgutil: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  if (args.some((a) => /^--(forget|learn|unlink)$/.test(a.text))) danger(st, `changes the machine's record of installed packages (${line(prog, args)})`);
  // Solaris' OpenCSW pkgutil shares the name: installing, updating or removing packages for the machine.
  else if (args.some((a) => /^(-[a-zA-Z]*[iurU][a-zA-Z]*|--(install|upgrade|remove|catalog))$/.test(a.text)))
    danger(st, `changes the machine's installed packages (${line(prog, args)})`);
};
const xcodeSelect = options(/^(-p|--print-path|-v|--version)$/, 'changes the developer tools every program uses', { bare: 'reads' });
const mas = verbs(
  /^(list|search|info|outdated|home|open|vendor|version|account|config|lookup|region|help)$/,
  'installs, updates or removes App Store software, or signs in',
);
const PORT_READS =
  /^(search|installed|info|outdated|deps|rdeps|dependents|rdependents|contents|provides|list|echo|variants|version|help|usage|location|notes|cat|dir|file|url|gohome|logfile|lint|platform|diagnose|log|work|distcheck|livecheck|mirror|fetch|checksum|extract|patch|configure|build|test|destroot|space)$/;
const portVerbs = verbs(PORT_READS, "changes the machine's installed packages (MacPorts)");
// `port select --list python` shows the versions to choose from, and `--show` the one chosen; `--set` chooses.
const port: Rule = (c) => (c.args[0]?.text === 'select' && c.args.some((a) => /^--(list|show|summary)$/.test(a.text)) ? undefined : portVerbs(c));
const kmutil = verbs(
  /^(find|log|inspect|check|showloaded|print-diagnostics|libraries|dumpstate|help|emit-macho|print-boot-collection)$/,
  'loads, unloads or rebuilds kernel extensions',
);
const systemextensionsctl = verbs(/^(list|help)$/, "changes the machine's system extensions");
const profiles = verbs(/^(list|show|status|help|version|validate|sync)$/, 'installs or removes configuration profiles of the machine', { bare: 'reads' });

/** Time Machine's backups and FileVault's encryption: disabling, deleting or redirecting them loses the user's data. */
const tmutil = verbs(
  /^(status|listbackups|latestbackup|destinationinfo|machinedirectory|isexcluded|compare|uniquesize|calculatedrift|verifychecksums|listlocalsnapshots|listlocalsnapshotdates|version|help)$/,
  "changes Time Machine's backups, destinations or exclusions",
);
const fdesetup = verbs(
  /^(status|list|isactive|haspersonalrecoverykey|hasinstitutionalrecoverykey|usingrecoverykey|supportsauthrestart|version|help|showdeferralinfo)$/,
  'changes FileVault',
);

/**
 * Extended attributes: the quarantine flag is what makes Gatekeeper check a download, so removing it
 * (`-d com.apple.quarantine`, or `-c`, which clears every attribute) trusts the file; other
 * attributes are the file's own business, inside the workspace.
 */
const xattr: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  const writes = hasFlag(args, 'w') || hasFlag(args, 'd') || hasFlag(args, 'c');
  if (!writes) return;
  const ops = operands(args);
  if (hasFlag(args, 'c') || (hasFlag(args, 'd') && ops[0]?.text === 'com.apple.quarantine'))
    return danger(st, `removes the quarantine flag, so Gatekeeper no longer checks the file (${line(prog, args)})`);
  writesEach(ops.slice(hasFlag(args, 'w') ? 2 : hasFlag(args, 'd') ? 1 : 0), st, 'changes the attributes of');
};

/** Signing with an identity uses the user's key from the keychain; ad-hoc signing (`-s -`) and verifying do not. */
const codesign: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  const sign = args.findIndex((a) => a.text === '--sign' || (/^-[a-zA-Z]*s$/.test(a.text) && !a.text.startsWith('--')));
  const identity = sign >= 0 ? args[sign + 1]?.text : args.find((a) => a.text.startsWith('--sign='))?.text.slice(7);
  if (identity !== undefined && identity !== '-') return danger(st, `signs with the user's signing identity (${line(prog, args)})`);
  if (sign >= 0 || args.some((a) => /^--(remove-signature|sign=)/.test(a.text))) writesEach(operands(args).slice(identity === '-' ? 1 : 0), st, 'signs');
};

/** install_name_tool rewrites the load commands of the Mach-O file it is given last, in place; the library names and run paths of its options are text. */
const installNameTool: Rule = ({ args, st }) => {
  st.repeatable = false;
  const file = args[args.length - 1];
  if (file && !file.text.startsWith('-')) checkWriteTarget(file, st, 'rewrites the load commands of');
};

/**
 * Property lists: printing or checking one (`plutil -p`, `-lint`) reads, wherever it is; converting,
 * inserting, replacing, removing or extracting rewrites the files named in place, or writes where
 * `-o` says (`-o -` is the output).
 */
const PLUTIL_VALUES: Readonly<Record<string, number>> = {
  '-convert': 1,
  '-insert': 1,
  '-replace': 1,
  '-remove': 1,
  '-extract': 2,
  '-o': 1,
  '-e': 1,
  '-type': 1,
  '-bool': 1,
  '-integer': 1,
  '-float': 1,
  '-string': 1,
  '-date': 1,
  '-data': 1,
  '-xml': 1,
  '-json': 1,
};
const plutil: Rule = ({ args, st }) => {
  st.repeatable = false;
  if (!args.some((a) => /^-(convert|insert|replace|remove|extract|create)$/.test(a.text))) return;
  const files: Word[] = [];
  let out: Word | undefined;
  for (let k = 0; k < args.length; k++) {
    const t = args[k]!.text;
    if (t === '-o') out = args[k + 1];
    if (t.startsWith('-') && t !== '-') k += PLUTIL_VALUES[t] ?? 0;
    else files.push(args[k]!);
  }
  if (!out) return writesEach(files, st, 'rewrites the property list');
  if (out.text !== '-') checkWriteTarget(out, st, 'writes a property list to');
};

/** Spotlight's index: turning it on or off, erasing or rebuilding it acts on whole volumes. */
const mdutil: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  if (args.some((a) => /^-[a-zA-Z]*[iEdXpL]/.test(a.text))) danger(st, `changes Spotlight's index of a volume (${line(prog, args)})`);
};

/** Directory-service accounts and groups, the root account, passwords and the firmware password. */
const DSCL_CHANGES = /^-?(create|delete|append|merge|change|passwd|changei|createpl|deletepl|mergepl|authonly|auth)$/;
/**
 * `dscl [options] DATASOURCE COMMAND …`: the command after the data source (`.`, `/Local/Default`,
 * `/Search`) may be spelled with or without its dash (`dscl . passwd`, `dscl . -create`).
 */
const dscl: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  const command = operands(args, /^-[uPf]$/)[1]?.text ?? '';
  if (DSCL_CHANGES.test(command) || args.some((a) => a.text.startsWith('-') && DSCL_CHANGES.test(a.text))) danger(st, `changes system accounts (${prog})`);
};
const dseditgroup: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  const op = args.findIndex((a) => a.text === '-o');
  if (!/^(read|checkmember)$/.test(args[op + 1]?.text ?? '') || op < 0) danger(st, `changes system accounts (${prog})`);
};
const sysadminctl: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  const reads = args.some((a) => a.text === 'status' || a.text === '-secureTokenStatus') && !args.some((a) => /^(on|off)$/.test(a.text));
  if (!reads) danger(st, `changes system accounts (${prog})`);
};
const accounts: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  if (!onlyHelp(args)) danger(st, `changes system accounts, passwords or the root account (${prog})`);
};
const pwpolicy: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  // Only the get… verbs read (`pwpolicy getaccountpolicies`, `-gethashtypes`).
  const reads = args.some((a) => /^-?get/i.test(a.text)) && !args.some((a) => /^-?(set|enable|disable|clear|delete|create|add|remove)/i.test(a.text));
  if (!reads && !onlyHelp(args)) danger(st, `changes account and password policies (${line(prog, args)})`);
};
const firmwarepasswd = options(/^-(check|mode|verify)$/, 'changes the firmware password', { bare: 'changes' });

/** What the screen shows is the user's, not the workspace's; and automations that live outside it. */
const screencapture: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  if (!onlyHelp(args)) danger(st, `captures the screen, which shows the user's other windows (${prog})`);
};
const shortcuts = verbs(/^(list|view|sign|help)$/, "runs one of the user's Shortcuts, automation that lives outside the workspace");

/** Kernel tracing: a D script or probe sees every process, and -w lets it change them. */
const dtrace: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  if (args.some((a) => /^-([snPmfiAapw]|[a-zA-Z]*[snw])$/.test(a.text))) danger(st, `traces the kernel or another process (${line(prog, args)})`);
};
const dtruss: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  if (hasFlag(args, 'p') || hasFlag(args, 'n')) danger(st, `traces another process (${line(prog, args)})`);
};

/** Default applications, the Dock, Wi-Fi and the local web server: the user's settings and network. */
const duti: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  // `duti -s …` sets a handler, and a settings file given alone is applied; -x, -d and -l only look.
  const applies = !args.some((a) => a.text.startsWith('-')) && operands(args).length > 0;
  if (hasFlag(args, 's') || applies) danger(st, `changes the user's default applications (${line(prog, args)})`);
};
const dockutil = options(/^--(list|find|no-restart|version|help)$/, "changes the user's Dock", { bare: 'reads' });
const airport: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  if (operands(args).some((o) => o.text === 'sniff') || args.some((a) => /^(-z|--disassociate|-c\d+|--channel=.+|-P|--psk)/.test(a.text)))
    danger(st, `sniffs or changes the Wi-Fi connection (${line(prog, args)})`);
};
const wifiPassword: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  if (!onlyHelp(args)) danger(st, `reads a Wi-Fi password from the keychain (${prog})`);
};
const valet = verbs(
  /^(paths|links|parked|status|list|log|which|diagnose|help|--version|-V)$/,
  "changes the machine's web server, DNS or trust, or shares a site",
  { bare: 'reads' },
);
const macCleanup: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  if (!args.some((a) => /^(-n|--dry-run)$/.test(a.text)) && !onlyHelp(args))
    danger(st, `deletes caches, logs and files across the home directory and the system (${prog})`);
};
const sntp: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  if (hasFlag(args, 'S') || hasFlag(args, 's')) danger(st, `sets the machine's clock (${prog})`);
};
const asr = verbs(/^(help|imagescan|version)$/, 'restores or erases a volume', { bare: 'changes' });

/**
 * open hands a file to the application that opens it: a document, a folder or a URL is only shown,
 * and an installed application started by name (`open -a Safari`) is the user's own; a bundle or a
 * Terminal script from outside the workspace (`open /tmp/x.app`, `open ~/Downloads/x.command`) is
 * a program no one has looked at. A file-sharing or remote-login URL (`open smb://host/share`,
 * `vnc://`, `ssh://`) mounts another machine's volume or logs in to it, and the words after `--args`
 * are the application's own arguments, judged as an unknown program's (`--load-extension=/tmp/x`).
 */
const REMOTE_URL = /^(smb|afp|nfs|cifs|ftp|vnc|ssh|telnet):\/\//i;
const RUNNABLE = /\.(app|command|tool|terminal|workflow|prefPane|pkg|mpkg)\/?$/i;
const open: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  const passed = args.findIndex((a) => a.text === '--args');
  const own = passed < 0 ? args : args.slice(0, passed);
  for (const o of operands(own, /^-[abe]$|^--(env|stdin|stdout|stderr)$/)) {
    const c = classify(o, st);
    if (RUNNABLE.test(o.text) && c.cls !== 'inside' && c.cls !== 'all') danger(st, `starts a program from outside the workspace (${prog} ${o.text})`);
    if (REMOTE_URL.test(o.text)) danger(st, `mounts or logs in to another machine (${prog} ${o.text})`);
  }
  if (passed >= 0) judgeUnknownProgram(prog, args.slice(passed + 1), st);
};

/** PlugInKit: matching lists the plug-ins; electing (`-e use|ignore`), adding or removing one changes what other programs load. */
const pluginkit = options(/^-[mvADip]+$/, 'enables, disables, adds or removes a plug-in of other programs', { bare: 'reads' });

/** Launch Services' database decides which application opens what; only `-dump` reads it. */
const lsregister = options(/^-(dump|h|help)$/, "registers, removes or resets applications in Launch Services' database", { bare: 'reads' });

/** Background task management: the login items and agents the system shows the user; only the dumps read. */
const sfltool = verbs(/^(dumpbtm|dump-storage|list|help)$/, 'resets or changes login items and background tasks', { bare: 'reads' });

/**
 * Installer packages: building one writes its file (the last operand, a distribution or component
 * list too); `--sign` signs it with the user's identity from the keychain, and productsign does
 * nothing else.
 */
const packageBuilder: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  if (onlyHelp(args)) return;
  if (prog === 'productsign' || args.some((a) => a.text === '--sign' || a.text.startsWith('--sign=')))
    return danger(st, `signs a package with the user's signing identity (${line(prog, args)})`);
  const out = operands(
    args,
    /^--(root|component|identifier|version|install-location|scripts|filter|component-plist|distribution|package-path|resources|product|package|min-os-version|compression|ownership|prior|quiet|keychain|cert|timestamp|large-payloads|preserve-xattr|plugins|identity|scripts-path)$/,
  ).at(-1);
  if (out) checkWriteTarget(out, st, 'writes a package to');
};

/**
 * SetFile sets a file's Finder attributes and dates: inside the workspace they are its own; hiding
 * files (`-a V`) anywhere else, or where the names are computed, needs a person.
 */
const setFile: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  const targets = operands(args, /^-[acdmt]$/);
  const a = args.findIndex((w) => w.text === '-a');
  const hides = a >= 0 && (args[a + 1]?.text ?? '').includes('V');
  for (const t of targets) {
    const c = classify(t, st);
    if (hides && c.cls !== 'inside') danger(st, `hides files outside the workspace (${prog} -a V ${t.text})`);
    else checkWriteTarget(t, st, 'changes the Finder attributes of');
  }
};

/** Spotlight searched for a credential's word or a key's shape: hunting the machine's secrets, unless it searches only the workspace. */
const mdfind: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  const k = args.findIndex((a) => a.text === '-onlyin');
  const within = k >= 0 && args[k + 1] !== undefined && /^(inside|all)$/.test(classify(args[k + 1]!, st).cls);
  if (!within && args.some((a, i) => (k < 0 || i !== k + 1) && SECRET_SEARCH.test(a.text)))
    danger(st, `searches the machine for credentials (${line(prog, args)})`);
};

/** The unified log: collecting it gathers every process's records; erasing or reconfiguring it changes the machine's; a predicate for secrets hunts them. */
const logVerbs = verbs(/^(show|stream|stats|help)$/, "collects, erases or reconfigures the machine's logs");
/** Every verb of the unified log's tool; a script's own `log` function is given a message instead (`log "building"`). */
const LOG_VERB = /^(collect|config|diagnose|erase|help|repack|show|stats|stream)$/;
const log: Rule = (c) => {
  const first = operands(c.args)[0]?.text;
  if (first !== undefined && !LOG_VERB.test(first)) return;
  logVerbs(c);
  const k = c.args.findIndex((a) => a.text === '--predicate');
  const predicate = k >= 0 ? c.args[k + 1]?.text : c.args.find((a) => a.text.startsWith('--predicate='))?.text;
  if (predicate !== undefined && SECRET_SEARCH.test(predicate)) danger(c.st, `searches the machine's logs for credentials (${line(c.prog, c.args)})`);
};

export const MACOS_RULES: RuleTable = {
  programs: {
    launchctl,
    defaults,
    diskutil,
    hdiutil,
    csrutil,
    spctl,
    tccutil,
    security,
    pmset,
    nvram,
    scutil,
    networksetup,
    systemsetup,
    bless,
    softwareupdate,
    installer,
    pkgutil,
    'xcode-select': xcodeSelect,
    mas,
    port,
    kmutil,
    systemextensionsctl,
    profiles,
    tmutil,
    fdesetup,
    xattr,
    codesign,
    install_name_tool: installNameTool,
    mdutil,
    plutil,
    dscl,
    dseditgroup,
    sysadminctl,
    chpass: accounts,
    chfn: accounts,
    chsh: accounts,
    dsenableroot: accounts,
    pwpolicy,
    firmwarepasswd,
    screencapture,
    shortcuts,
    dtrace,
    dtruss,
    duti,
    dockutil,
    airport,
    'wifi-password': wifiPassword,
    valet,
    'mac-cleanup': macCleanup,
    sntp,
    log,
    asr,
    open,
    pluginkit,
    lsregister,
    sfltool,
    productbuild: packageBuilder,
    pkgbuild: packageBuilder,
    productsign: packageBuilder,
    SetFile: setFile,
    mdfind,
  },
};
