// The machine itself: signalling processes (which may be the worker's), shutting down, formatting
// disks, changing accounts and cron. These are dangerous whatever the workspace.
import { danger, hasFlag, type Rule, type RuleTable } from '../state.js';

const kill: Rule = ({ prog, args, st }) => {
  if (prog === 'kill' && args.some((a) => a.expands || /^\d+$/.test(a.text))) danger(st, 'signals a process by pid (kill), which may be the worker');
  st.repeatable = false;
  if (prog === 'killall5') return danger(st, 'kills every process (killall5)');
  if (prog === 'kill') {
    let k = 0;
    if (args[0] && /^-(\d+|[A-Z][A-Z0-9+]*|SIG\w+)$/.test(args[0].text)) k = 1;
    else if (args[0] && /^-(s|n)$/.test(args[0].text)) k = 2;
    const pids = args.slice(k).filter((a) => a.text !== '--');
    if (pids.some((a) => a.text === '-1')) danger(st, 'kills every process the user can signal (kill -1)');
  }
  if ((prog === 'pkill' || prog === 'killall') && args.some((a) => a.text === '-u') && args.some((a) => a.text === 'root'))
    danger(st, `kills root's processes (${prog})`);
};

const power: Rule = ({ prog, st }) => danger(st, `shuts down or reboots the machine (${prog})`);
const accounts: Rule = ({ prog, st }) => danger(st, `changes system accounts (${prog})`);

export const SYSTEM_RULES: RuleTable = {
  programs: {
    kill,
    pkill: kill,
    killall: kill,
    killall5: kill,
    init: ({ args, st }) => {
      if (args[0] && /^[06]$/.test(args[0].text)) danger(st, `shuts down or reboots the machine (init ${args[0].text})`);
      st.repeatable = false;
    },
    systemctl: ({ args, st }) => {
      st.repeatable = false;
      if (args.some((a) => /^(poweroff|reboot|halt|kexec|suspend|hibernate|emergency|rescue)$/.test(a.text)))
        danger(st, 'shuts down or reboots the machine (systemctl)');
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
    groupadd: accounts,
    groupdel: accounts,
    visudo: accounts,
  },
  patterns: [
    [
      /^(mkfs(\..+)?|mke2fs|mkswap|wipefs|fdisk|sfdisk|cfdisk|gdisk|sgdisk|parted|badblocks)$/,
      ({ prog, st }) => danger(st, `formats or repartitions disks (${prog})`),
    ],
  ],
};
