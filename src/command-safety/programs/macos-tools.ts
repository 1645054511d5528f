// Third-party macOS tools that change the Mac or reach past it: installers of macOS and Xcode
// (mist, xcodes), cleaners (mole), the Finder's sidebar (mysides), the window manager (yabai), the
// m-cli front end to the system settings, virtual machines (OrbStack, tart), GPU ejection, a VPN
// server, the user's calendar (icalBuddy) and Jamf's MDM agent. As in macos.ts, each tool's reading
// forms pass and any other form needs a person, so a verb no list here knows is a change; tart, whose
// virtual machines are the user's own as containers are, is judged by what reaches past them.
import type { Word } from '../shell-lex.js';
import { checkWriteTarget, classify, danger, operands, TEMP_DIRS, type Rule, type RuleTable } from '../state.js';
import { line, onlyHelp, verbs } from './macos.js';

/** mist lists and downloads macOS installers and firmware; a download builds an installer application as root. */
const mistVerbs = verbs(/^(list|version|help)$/, 'downloads or builds a macOS installer or firmware for the machine', { bare: 'reads' });
const mist: Rule = (c) => {
  mistVerbs(c);
  const k = c.args.findIndex((a) => a.text === '--export' || a.text === '-e');
  if (k >= 0 && c.args[k + 1]) checkWriteTarget(c.args[k + 1]!, c.st, 'exports a list to');
};

const mole = verbs(/^(analyze|status|help|version)$/, 'cleans, optimizes, purges or uninstalls across the system and the home directory', {
  bare: 'reads',
});
const mysides = verbs(/^(list|help|version)$/, "changes the Finder's sidebar", { bare: 'reads' });
/** OrbStack: with no verb `orb` opens a shell in the default machine; ssh, exec, run and the rest act in or on one. */
const orb = verbs(/^(list|ls|status|info|version|help|logs)$/, 'runs commands in, logs in to, or changes a virtual machine (OrbStack)', {
  bare: 'changes',
});
/**
 * tart keeps the user's virtual machines in its own store (`~/.tart`), as a container runtime keeps
 * containers: running, cloning, pulling or resizing one stays there; deleting one loses what its disk
 * holds, as removing a container's volume does. It reaches past the machine when it logs in to or
 * pushes to a registry, and it hands a VM this machine's files when `--dir` shares a directory outside
 * the workspace, as a container's volume does.
 */
const tart: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  const verb = operands(args)[0]?.text;
  if (verb && /^(login|logout|push)$/.test(verb)) danger(st, `logs in to or publishes to a registry of virtual machines (${line(prog, args)})`);
  if (verb && /^(delete|prune)$/.test(verb)) danger(st, `deletes virtual machines and what their disks hold (${line(prog, args)})`);
  for (const [k, a] of args.entries()) {
    const shared = /^--dir=(.*)$/.exec(a.text)?.[1] ?? (a.text === '--dir' ? args[k + 1]?.text : undefined);
    // `[name:]path[:ro]`: the host path follows the last colon before a path.
    const source = shared?.replace(/:ro$/, '').replace(/^.*:(?=[~/$.])/, '');
    if (!source) continue;
    const c = classify(source, st);
    if (c.cls !== 'inside' && c.cls !== 'all' && !(c.abs && TEMP_DIRS.test(c.abs)))
      danger(st, `shares ${source} (outside the workspace) with a virtual machine (${prog} --dir)`);
  }
};
const jamf = verbs(/^(version|help|about|checkJSSConnection|listUsers)$/, "runs an action of the machine's MDM agent (jamf)", { bare: 'reads' });

/** Ejecting a GPU, or moving running applications off one, acts on every application using it. */
const safeEjectGpu: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  if (operands(args).some((o) => /^(Eject|Initiate|Finalize|Cancel|RelaunchPIDOnGPU|RelaunchOnGPU)$/i.test(o.text)))
    danger(st, `ejects a GPU or moves applications off it (${line(prog, args)})`);
};

/** A VPN server: running it exposes the machine to whoever connects. */
const vpnd: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  if (!onlyHelp(args)) danger(st, `runs a VPN server that exposes the machine (${line(prog, args)})`);
};

/** The user's calendar is theirs, not the workspace's. */
const icalBuddy: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  if (!onlyHelp(args)) danger(st, `reads the user's calendar (${prog})`);
};

/**
 * m-cli (`m TOPIC [VERB …]`): a topic alone or with a reading verb shows a setting (`m battery
 * status`, `m hostname`); any other verb sets it (`m firewall disable`, `m hostname NAME`), and a
 * few topics act by themselves.
 */
const M_ACTS = /^(lock|restart|reboot|shutdown|poweroff|sleep|update)$/;
const M_READS = /^(status|list|ls|info|help|show|get|tree|size|usage|available)$/;
const m: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  const [topic, verb] = operands(args).map((a) => a.text);
  if (topic === undefined || onlyHelp(args)) return;
  if (M_ACTS.test(topic) || (verb !== undefined && !M_READS.test(verb))) danger(st, `changes a setting of the machine (${line(prog, args)})`);
};

/**
 * The Xcode installers, xcodes and xcversion: listing, showing, downloading archives and refreshing
 * the list of versions read; installing, selecting or removing Xcode, a runtime or a simulator
 * changes the developer tools of the machine.
 */
const xcodes: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  const [verb, sub] = operands(args, /^--(directory|data-source|path)$/).map((a) => a.text);
  const reads =
    verb === undefined ||
    /^(list|installed|selected|version|download|update|help)$/.test(verb) ||
    (verb === 'runtimes' && (sub === undefined || /^(list|download)$/.test(sub))) ||
    (verb === 'simulators' && !args.some((a) => a.text.startsWith('--install')));
  if (!reads && !onlyHelp(args)) danger(st, `installs, selects or removes Xcode or its runtimes for the machine (${line(prog, args)})`);
};

/**
 * yabai: `-m query` and reading one setting (`-m config layout`) look; setting one, moving windows,
 * spaces and displays, rules, signals (which run commands on events) and the service and scripting
 * addition change the window manager.
 */
const yabai: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  if (onlyHelp(args) || args.every((a) => /^(-v|-V|--version|--check-sa)$/.test(a.text))) return;
  const k = args.findIndex((a) => a.text === '-m' || a.text === '--message');
  const domain = k >= 0 ? args[k + 1]?.text : undefined;
  const rest: Word[] = k >= 0 ? args.slice(k + 2) : [];
  const setting = operands(rest, /^--(space|window|display)$/);
  const reads = domain === 'query' || (domain === 'config' && setting.length <= 1);
  if (!reads) danger(st, `changes the window manager (${line(prog, args)})`);
};

export const MACOS_TOOL_RULES: RuleTable = {
  programs: {
    mist,
    mole,
    mysides,
    orb,
    orbctl: orb,
    tart,
    jamf,
    SafeEjectGPU: safeEjectGpu,
    vpnd,
    icalBuddy,
    icalbuddy: icalBuddy,
    m,
    xcodes,
    xcversion: xcodes,
    yabai,
  },
};
