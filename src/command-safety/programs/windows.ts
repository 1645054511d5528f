// Windows' own administration programs (sc, netsh, wevtutil, procdump…), given by any case and with
// or without `.exe`, and PowerShell's cmdlets, named Verb-Noun (pwsh runs on Linux and macOS too). The verb is PowerShell's
// own contract for what a cmdlet does (its approved-verbs list): Get, Test and Format read; Set,
// New, Remove, Grant and Install change the thing the noun names, which is the machine's, the user's or
// a domain's unless the noun is the session's own (an alias, a variable, the current location) or a
// value built in memory, or the cmdlet is pointed at a file by its path.
import { parseShell, type Word } from '../shell-lex.js';
import { checkWriteTarget, danger, namesThisMachine, type Rule, type RuleTable, type State } from '../state.js';
import { judgeNamesKilled } from './system.js';
import { judgeUnknownProgram } from './unknown.js';

/** A cmdlet's name: an approved-style verb, a dash, a capitalised noun. */
const CMDLET = /^[A-Z][a-z]+-[A-Z][A-Za-z0-9]*$/;

/** Verbs whose cmdlets change what their noun names (PowerShell's Common, Data, Lifecycle and Security groups). */
const CHANGING_VERBS =
  /^(Add|Set|New|Remove|Clear|Rename|Reset|Enable|Disable|Grant|Revoke|Block|Unblock|Protect|Unprotect|Install|Uninstall|Update|Register|Unregister|Repair|Restore|Publish|Unpublish|Deploy|Mount|Dismount|Initialize|Lock|Unlock|Approve|Deny|Submit|Send|Sync|Backup|Start|Stop|Restart|Suspend|Resume|Edit|Merge|Move|Copy|Optimize|Switch|Complete|Request|Connect|Disconnect|Invoke|Import|Export|Save)$/;

/** Nouns of the session's own state: changing them ends with the session. */
const SESSION_NOUNS =
  /^(Alias|Variable|Location|StrictMode|PSDebug|PSReadLine\w*|PSBreakpoint|Module|Member|Job|Sleep|Transcript|Host|Culture|ArgumentCompleter|ObjectEvent|EngineEvent|Event|FormatData|TypeData|Help|Process|ModuleMember|SSHSession|SFTPSession)$/;
/** Values built in memory (`New-Object`, `New-Guid`, `New-DNSRecordArray`): nothing outside the session is made. */
const VALUE_NOUN = /^(Object|Guid|TimeSpan|\w*(Array|Hashtable|List|Credential|ScriptBlock|SessionOption|Option))$/;
/** Nouns of files, named by their path: judged by where the path points, as cp, rm and tee are. */
const FILE_NOUNS =
  /^(Item|ChildItem|Content|ItemProperty|Archive|File|Csv|Clixml|Json|ModuleManifest|ScriptFileInfo|MarkdownHelp|ExternalHelp|FileHash|PowerShellDataFile|LocalizedData)$/;
/**
 * A Windows path outside any workspace: a drive's root (`c:\Windows\…`, `C:/Users`) or the user's and the
 * machine's directories by their variables (`$env:HOME\bin`, `$env:APPDATA`), or another machine's share (`\\host\C$\…`,
 * read as `\hostC$…`); the temporary directory's aside. The shell's reading has dropped the backslashes (`c:Windows…`),
 * so the drive's known folders are named.
 */
export const WINDOWS_OUTSIDE_PATH =
  /^['"]?([A-Za-z]:([\\/]|Windows|Users|Program|inetpub)|\$env:(HOME|USERPROFILE|APPDATA|LOCALAPPDATA|ProgramFiles|ProgramData|SystemRoot|windir|SystemDrive)|\\{1,2}[A-Za-z0-9])/i;
/** The project's tests, builds and lints run through their PowerShell runners. */
const LOCAL_RUNNERS = /^(Pester|Build|psake|ScriptAnalyzer|Formatter)$/;
/** The registry's drives: a path there is the machine's or the user's settings, not a file of the workspace. */
const REGISTRY_PATH = /^(HK(LM|CU|CR|U|CC)|HKEY_\w+|Registry)::?/i;
/** Modules and scripts installed for the user (`-Scope CurrentUser`, the default of PowerShellGet 3 and pwsh): the user's own tool directory. */
const MODULE_INSTALL = /^(Install|Update|Save)-(Module|Script|PSResource)$/;

/**
 * PowerView's and SharpView's functions (by name; Windows' own `Get-NetAdapter` and `Get-NetFirewallRule` are
 * not among them): they ask the domain's controllers for every account, group, trust, policy and permission,
 * or go through the domain's machines for sessions, shares and local admin rights, the map of an attack.
 */
const DOMAIN_RECON_FUNCTION =
  /^(Get-Net(User|Computer|Group|GroupMember|Domain|DomainController|DomainTrust|Forest|ForestDomain|ForestTrust|ForestCatalog|OU|GPO|GPOGroup|Session|LoggedOn|Share|FileServer|Site|Subnet|LocalGroup|LocalGroupMember|RDPSession|Process)|Get-Domain(User|Computer|Group|GroupMember|Trust|TrustMapping|OU|GPO|GPOLocalGroup|GPOUserLocalGroupMapping|GPOComputerLocalGroupMapping|ObjectAcl|Controller|SPNTicket|Policy|Object|ForeignUser|ForeignGroupMember|DNSRecord|DNSZone|Site|Subnet|FileServer|DFSShare|SID|ManagedSecurityGroup)|Get-Forest(Domain|Trust|GlobalCatalog)?|Get-ObjectAcl|Find-(LocalAdminAccess|PSRemotingLocalAdminAccess|WMILocalAdminAccess|DomainShare|InterestingDomainAcl|DomainUserLocation|DomainProcess|DomainUserEvent|InterestingFile|InterestingDomainShareFile|GPOLocation|GPOComputerAdmin|ForeignUser|ForeignGroup|DomainObjectPropertyOutlier|DomainLocalGroupMember|ManagedSecurityGroups)|Invoke-(ShareFinder|UserHunter|StealthUserHunter|ProcessHunter|FileFinder|ACLScanner|EnumerateLocalAdmin|CheckLocalAdminAccess|Kerberoast|MapDomainTrust))$/;
/** PowerUp's and PrivescCheck's hunts of this machine for a way to root, and the abuses they lead to (a service's binary replaced). */
const LOCAL_PRIVESC_FUNCTION =
  /^(Invoke-(AllChecks|PrivescAudit|PrivescCheck|ServiceAbuse)|Get-(ServiceUnquoted|UnquotedService|ModifiableService|ModifiableServiceFile|ModifiablePath|ModifiableScheduledTaskFile|ModifiableRegistryAutoRun|UnattendedInstallFile|RegistryAutoLogon|RegistryAlwaysInstallElevated|CachedGPPPassword|GPPPassword|SiteListPassword|WebConfig|ApplicationHost)|Write-(ServiceBinary|HijackDll|UserAddMSI)|Install-ServiceBinary|Restore-ServiceBinary|Find-(PathDLLHijack|ProcessDLLHijack))$/;

/**
 * The directory attributes an attack looks for (accounts with a service name to Kerberoast, without pre-authentication to
 * AS-REP roast, trusted for delegation) and those that hold passwords (LAPS', a Unix password).
 */
const DIRECTORY_ATTACK_ATTRIBUTE =
  /ServicePrincipalName|DoesNotRequirePreAuth|TrustedForDelegation|TrustedToAuthForDelegation|msDS-AllowedToDelegateTo|msDS-AllowedToActOnBehalfOfOtherIdentity|ms-Mcs-AdmPwd|msLAPS-(Encrypted)?Password|unixUserPassword|userPassword/i;

function scopeOf(args: Word[]): string | undefined {
  const k = args.findIndex((a) => /^-Scope$/i.test(a.text));
  return k >= 0 ? args[k + 1]?.text : undefined;
}

const cmdlet: Rule = ({ prog, args, st, judge }) => {
  const [verb, noun] = prog.split('-') as [string, string];
  st.repeatable = false;
  // Stop-Process is kill's kin: by name it is judged as a kill by name (a security daemon or a service
  // needs a person), by id it may end the worker. Start-Process runs its program with the words of its
  // argument list.
  if (prog === 'Stop-Process') return stopProcess(args, st);
  if (DOMAIN_RECON_FUNCTION.test(prog))
    return danger(st, `maps an Active Directory domain's accounts, trusts, permissions and machines for an attack (${prog}: PowerView)`);
  if (LOCAL_PRIVESC_FUNCTION.test(prog)) return danger(st, `hunts this machine for secrets and a way to root, or takes it (${prog}: PowerUp)`);
  if (/^Get-AD(User|Computer|Object|ServiceAccount)$/i.test(prog) && args.some((a) => DIRECTORY_ATTACK_ATTRIBUTE.test(a.text)))
    return danger(st, `looks in the domain for accounts to roast or delegate through, or reads the passwords it keeps (${prog})`);
  const started = prog === 'Start-Process' ? startedProgram(args) : undefined;
  if (started) judge(started);
  if (VALUE_NOUN.test(noun) && verb === 'New') return;
  if (args.some((a) => REGISTRY_PATH.test(a.text)) && CHANGING_VERBS.test(verb)) return danger(st, `changes the Windows registry (${prog})`);
  if (MODULE_INSTALL.test(prog)) {
    if (/^AllUsers$/i.test(scopeOf(args) ?? '')) danger(st, `installs PowerShell modules for every user of the machine (${prog} -Scope AllUsers)`);
    return judgeUnknownProgram(prog, args, st);
  }
  if (verb === 'Invoke' && noun === 'Expression') return danger(st, 'evaluates text as PowerShell code (Invoke-Expression)');
  // PowerShell remoting: a session on another machine, or a cmdlet run there or copying to or from it.
  // This machine named as the computer (`Test-NetConnection -ComputerName 127.0.0.1 -Port 80`, or `.`) is no other machine.
  const remote = args.find(
    (a, k) =>
      /^-(ComputerName|Cn|HostName|Session|ToSession|FromSession|VMName|VMId|ContainerId|ConnectionUri)$/i.test(a.text) &&
      !(/^-(ComputerName|Cn|HostName)$/i.test(a.text) && (namesThisMachine(args[k + 1]?.text ?? '') || args[k + 1]?.text === '.')),
  );
  if (/^(Enter|New)-PSSession$/.test(prog) || remote)
    return danger(st, `opens a session on another machine or acts there (${prog}${remote ? ` ${remote.text}` : ''}: PowerShell remoting)`);
  // Started with `-Verb RunAs`, the program runs elevated, as an administrator.
  if (prog === 'Start-Process' && args.some((a, k) => /^-Verb$/i.test(a.text) && /^RunAs$/i.test(args[k + 1]?.text ?? '')))
    return danger(st, 'starts a program as an administrator (Start-Process -Verb RunAs)');
  const outside = FILE_NOUNS.test(noun) && CHANGING_VERBS.test(verb) ? args.find((a) => WINDOWS_OUTSIDE_PATH.test(a.text)) : undefined;
  if (outside) return danger(st, `changes files outside the workspace (${prog} ${outside.text})`);
  if (
    !CHANGING_VERBS.test(verb) ||
    SESSION_NOUNS.test(noun) ||
    FILE_NOUNS.test(noun) ||
    (verb === 'Invoke' && LOCAL_RUNNERS.test(noun)) ||
    (verb === 'Import' && noun === 'Module')
  )
    return judgeUnknownProgram(prog, args, st);
  danger(st, `changes the machine's, the user's or a domain's ${noun} (${prog}: PowerShell's ${verb} verb changes what its noun names)`);
};

function stopProcess(args: Word[], st: State): void {
  const names = args.flatMap((a, k) => (/^-(Name|ProcessName)$/i.test(args[k - 1]?.text ?? '') ? a.text.split(',') : []));
  judgeNamesKilled(names, (n) => `Stop-Process -Name ${n}`, st);
  if (args.some((a) => /^-Id$/i.test(a.text))) danger(st, 'signals a process by pid (Stop-Process -Id), which may be the worker');
}

/** Start-Process's program (`-FilePath`, or its first operand) and the words of its `-ArgumentList`. */
function startedProgram(args: Word[]): Word[] | undefined {
  const valueOf = (name: RegExp) => {
    const k = args.findIndex((a) => name.test(a.text));
    return k >= 0 ? args[k + 1] : undefined;
  };
  const file = valueOf(/^-(FilePath|Path)$/i) ?? args.find((a, k) => !a.text.startsWith('-') && !/^-/.test(args[k - 1]?.text ?? ''));
  if (!file) return undefined;
  const list = valueOf(/^-(ArgumentList|Args)$/i);
  const words = list ? parseShell(list.text).flatMap((p) => p.commands.flatMap((c) => c.words)) : [];
  return [file, ...words];
}

/** A .NET type's static member called from PowerShell (`[Reflection.Assembly]::Load(…)`). */
const DOTNET_CALL = /^\[[\w.]+(\[\])?\]::\w+/;
/** Types whose static members only compute or describe: a path, a date, a number, a string. */
const DOTNET_READ_TYPE = /^\[(System\.)?(Math|IO\.Path|DateTime|TimeSpan|Guid|String|Version|Char|Int32|Int64|Double)\]::/i;
const dotnetCall: Rule = ({ prog, st }) => {
  st.repeatable = false;
  if (!DOTNET_READ_TYPE.test(prog)) danger(st, `runs .NET code from PowerShell, which the checker cannot read (${prog.replace(/\(.*$/, '')})`);
};

/** PowerShell's automatic variables, alone or read through (`$PSVersionTable.PSVersion`, `$Error | Format-List`): the session's own values. */
const AUTOMATIC_VARIABLE = /^\$(PSVersionTable|Error|Host|PSHOME|PSEdition|PSCulture|PSUICulture|IsWindows|IsLinux|IsMacOS|LASTEXITCODE|PSScriptRoot)(\.\w+)*$/;

/**
 * A PowerShell statement's command: `$res = Invoke-Pester …` assigns what the command returns, so the
 * command is the words after `=`; an automatic variable alone prints its value and runs nothing. A
 * shell would run the variable's value with `=` as its first word, which no program takes as a command.
 */
export function powershellStatement(words: Word[]): Word[] | undefined {
  if (words.length >= 2 && /^\$[A-Za-z_]\w*$/.test(words[0]!.text) && words[1]!.text === '=') return words.slice(2);
  if (words.length === 1 && AUTOMATIC_VARIABLE.test(words[0]!.text)) return [];
  return undefined;
}

/**
 * The system directory a Windows program may be given by (`C:\Windows\System32\rundll32.exe`, which
 * a POSIX shell reads without its backslashes).
 */
const SYSTEM32 = String.raw`(?:[A-Za-z]:\\?Windows\\?(?:System32|SysWOW64)\\?)?`;
const SYSTEM32_PREFIX = new RegExp(`^${SYSTEM32}`, 'i');
/** A Windows program's name as the rules know it: lower case, without its directory or `.exe`. */
const windowsName = (prog: string) =>
  prog
    .replace(SYSTEM32_PREFIX, '')
    .toLowerCase()
    .replace(/\.exe$/, '');
const verbOf = (args: Word[]) => args.find((a) => !/^[-/]/.test(a.text))?.text.toLowerCase();

/** Registry keys where programs keep saved logins, by either slash or none (the shell's reading drops backslashes). */
const REGISTRY_CREDENTIAL_KEY =
  /SimonTatham[\\/]*PuTTY[\\/]*Sessions|Martin Prikryl[\\/]*WinSCP|(ORL[\\/]*WinVNC3|RealVNC|TightVNC|TigerVNC)|CurrentVersion[\\/]*Winlogon/i;

/**
 * What each Windows administration program changes, by its words: a service's state or start-up
 * (`sc stop WinDefend`, `sc config … start= disabled`), the firewall and network (`netsh advfirewall
 * set allprofiles state off`), the event logs cleared (`wevtutil cl System`), the power settings
 * (`powercfg -h off`), Defender's signatures removed, an EDR agent's protection turned off (`cytool …
 * disable`), a process's memory dumped (`procdump -ma lsass.exe`: the logged-in users' credentials),
 * a DLL's function run (`rundll32 comsvcs.dll, MiniDump`), accounts and another server administered
 * (`net user x /add`, `net rpc password`). Their queries read, but for saved logins and the domain's controller.
 */
const WINDOWS_CHANGES: Readonly<Record<string, (args: Word[]) => string | undefined>> = {
  sc: (args) =>
    /^(stop|start|config|delete|create|pause|continue|failure|sdset|control)$/.test(verbOf(args) ?? '') ? "changes the machine's services" : undefined,
  netsh: (args) =>
    args.some((a) => /^(set|add|delete|reset|install|uninstall|import)$/i.test(a.text)) ? "changes the machine's firewall or network settings" : undefined,
  wevtutil: (args) => (/^(cl|clear-log|sl|set-log|um|uninstall-manifest)$/.test(verbOf(args) ?? '') ? "clears or changes the machine's event logs" : undefined),
  powercfg: (args) =>
    args.some((a) => /^[-/](h|hibernate|change|x|setactive|s|delete|d|import|setacvalueindex|setdcvalueindex)$/i.test(a.text))
      ? "changes the machine's power settings"
      : undefined,
  mpcmdrun: (args) =>
    args.some((a) => /^-(RemoveDefinitions|DisableService|RestoreDefaults)$/i.test(a.text)) ? "weakens the machine's antivirus (Defender)" : undefined,
  cytool: (args) => (args.some((a) => /^(disable|stop)$/i.test(a.text)) ? "turns off the machine's endpoint protection" : undefined),
  procdump: (args) => (args.some((a) => /^-m[amp]$/i.test(a.text)) ? "dumps a process's memory, which holds its secrets" : undefined),
  procdump64: (args) => WINDOWS_CHANGES.procdump!(args),
  rundll32: () => "runs a DLL's function, which the checker cannot read",
  // Windows' and Samba's `net`: its rpc, ads and rap groups administer a Windows or Samba server over the
  // network (a user's password reset, a group's members), and `/add`, `/delete` change accounts and
  // groups, the domain's with `/domain`; listing reads, but the domain's (`net user /domain`) asks its
  // controller. `net start` with no service lists those running. pth-net is Samba's with a password hash for a password.
  net: (args) =>
    /^(rpc|ads|rap)$/.test(verbOf(args) ?? '')
      ? 'administers a Windows or Samba server over the network'
      : args.some((a) => /^\/(add|delete|del|active)(:|$)/i.test(a.text))
        ? "changes the machine's or the domain's accounts or groups"
        : /^(stop|start|pause|continue)$/.test(verbOf(args) ?? '') && args.filter((a) => !a.text.startsWith('/')).length > 1
          ? "changes the machine's services"
          : verbOf(args) === 'user' && args.filter((a) => !/^\//.test(a.text)).length >= 3
            ? "sets an account's password (net user NAME PASSWORD)"
            : args.some((a) => /^\/domain$/i.test(a.text))
              ? "asks the domain's controller for its accounts, groups or password policy"
              : undefined,
  'pth-net': (args) => WINDOWS_CHANGES.net!(args),
  // The registry: keys added, deleted, imported, restored or loaded change the machine's or the user's
  // settings; `query` and `compare` read. A hive saved or exported is judged by what it names (secrets).
  // A query of where programs keep saved logins (PuTTY's and WinSCP's sessions, VNC's password, Winlogon's
  // automatic logon) or a search of the registry for passwords (`/f password`) reads credentials.
  reg: (args) =>
    /^(add|delete|import|restore|load|unload|copy|flags)$/.test(verbOf(args) ?? '')
      ? "changes the machine's or the user's registry"
      : verbOf(args) === 'query' &&
          (args.some((a) => REGISTRY_CREDENTIAL_KEY.test(a.text)) ||
            args.some((a, k) => /^\/f$/i.test(args[k - 1]?.text ?? '') && /pass|pwd|cred/i.test(a.text)))
        ? 'reads saved logins and passwords from the registry'
        : undefined,
  // Sysinternals' PsExec run here runs its program as SYSTEM (`-s`) or in another session (`-i`); given `\\host`, on another machine.
  psexec64: (args) => (args.length > 0 ? 'runs a program as SYSTEM, in another session or on another machine' : undefined),
  // Another user's rights for what it starts (`runas /user:Administrator cmd`).
  runas: () => 'runs a program as another user',
  // WMI: a method called (`process call create`, `shadowcopy delete`), or another machine's WMI (`/node:`).
  wmic: (args) =>
    args.some((a) => /^(call|delete|set|create)$/i.test(a.text) || /^\/node:/i.test(a.text))
      ? "creates or changes the machine's or another machine's processes and settings through WMI"
      : undefined,
  // A drive formatted (`format c:`), its free space wiped (`cipher /w:C:`), its partitions or boot
  // settings changed, a file's owner or rights taken, a task scheduled: the machine's, not the workspace's.
  format: (args) => (args.some((a) => /^[A-Za-z]:\\?$/.test(a.text)) ? "formats one of the machine's drives" : undefined),
  cipher: (args) => (args.some((a) => /^\/w(:|$)/i.test(a.text)) ? "wipes a drive's free space (cipher /w)" : undefined),
  diskpart: () => "changes the machine's disks and partitions (diskpart)",
  bcdedit: (args) => (args.every((a) => /^\/(enum|v)$/i.test(a.text) || !a.text.startsWith('/')) ? undefined : "changes the machine's boot settings"),
  takeown: () => "takes ownership of the machine's files",
  icacls: (args) =>
    args.some((a) => /^\/(grant|deny|setowner|reset|remove|restore|setintegritylevel)/i.test(a.text)) ? "changes who may use the machine's files" : undefined,
  schtasks: (args) => (args.some((a) => /^\/(create|delete|change|run)$/i.test(a.text)) ? "schedules or changes the machine's tasks" : undefined),
  // A certificate request made (its key in the machine's store), submitted to a certificate authority, or its issued certificate installed.
  certreq: (args) =>
    args.some((a) => /^-(new|submit|accept|retrieve|sign|enroll)$/i.test(a.text)) ? "requests or installs a certificate in the machine's store" : undefined,
  // tasklist, systeminfo and ipconfig only print; their `/fi` and `/all` switches name no path.
  tasklist: () => undefined,
  systeminfo: () => undefined,
  ipconfig: (args) => (args.some((a) => /^\/(release|renew|flushdns|registerdns)/i.test(a.text)) ? "changes the machine's network settings" : undefined),
};
const WINDOWS_PROGRAM = new RegExp(`^${SYSTEM32}(${Object.keys(WINDOWS_CHANGES).join('|')})(\\.exe)?$`, 'i');
const windowsProgram: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  const why = WINDOWS_CHANGES[windowsName(prog)]!(args);
  if (why) danger(st, `${why} (${[prog, ...args.map((a) => a.text)].join(' ')})`);
};

/**
 * cmd.exe's own file commands (a batch file's `@del` too, its echo kept quiet): the names they delete,
 * make, move or rename, and the destination they copy to, judged where they lie. A drive's path is the
 * machine's (the shell has taken out an unquoted word's backslashes: `c:\Windows\x.log` reads
 * `c:Windowsx.log`), but for a GitHub Windows runner's workspace, `D:\a\`.
 */
const WINDOWS_FILE_COMMAND = /^@?(del|erase|rd|md|copy|move|xcopy|robocopy|ren)(\.exe)?$/i;
const DRIVE_PATH = /^["']?[A-Za-z]:/;
const RUNNER_WORKSPACE = /^["']?[Dd]:[\\/]?a([\\/]|[\w.-])/;
const windowsFileCommand: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  const name = windowsName(prog.replace(/^@/, ''));
  const names = args.filter((a) => !/^\//.test(a.text));
  // copy's and xcopy's destination is their last name, robocopy's its second (files to copy follow it).
  const changed = name === 'robocopy' ? names.slice(1, 2) : /^(copy|xcopy)$/.test(name) ? names.slice(1).slice(-1) : names;
  for (const a of changed) {
    if (DRIVE_PATH.test(a.text) && !RUNNER_WORKSPACE.test(a.text)) danger(st, `${name} changes a path on one of the machine's drives (${a.text})`);
    else checkWriteTarget(a, st, `${name} changes`);
  }
};

/** cmd.exe's `/c` and `/k` run the rest of the line as a command: judged as that command. */
const windowsShell: Rule = ({ args, st, judge }) => {
  st.repeatable = false;
  const k = args.findIndex((a) => /^\/[ck]$/i.test(a.text));
  if (k >= 0 && args.length > k + 1) judge(args.slice(k + 1));
};

export const WINDOWS_RULES: RuleTable = {
  programs: { cmd: windowsShell, 'cmd.exe': windowsShell, CMD: windowsShell, 'CMD.EXE': windowsShell },
  patterns: [
    [CMDLET, cmdlet],
    // PowerShell reads cmdlet names in any case; the process cmdlets are often typed in lower case.
    [/^(start|stop)-process$/i, (c) => cmdlet({ ...c, prog: c.prog.toLowerCase().replace(/(^|-)\w/g, (m) => m.toUpperCase()) })],
    [DOTNET_CALL, dotnetCall],
    // Invoke-Expression by its alias (`iex $response`), which PowerShell reads in any case.
    [/^iex$/i, ({ st }) => danger(st, 'evaluates text as PowerShell code (iex, Invoke-Expression)')],
    [WINDOWS_PROGRAM, windowsProgram],
    [WINDOWS_FILE_COMMAND, windowsFileCommand],
  ],
};
