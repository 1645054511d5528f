// PowerShell's cmdlets, named Verb-Noun (pwsh runs on Linux and macOS too). The verb is PowerShell's
// own contract for what a cmdlet does (its approved-verbs list): Get, Test and Format read; Set,
// New, Remove, Grant and Install change the thing the noun names, which is the machine's, the user's or
// a domain's unless the noun is the session's own (an alias, a variable, the current location) or a
// value built in memory, or the cmdlet is pointed at a file by its path.
import type { Word } from '../shell-lex.js';
import { danger, type Rule, type RuleTable, type State } from '../state.js';
import { judgeUnknownProgram } from './unknown.js';

/** A cmdlet's name: an approved-style verb, a dash, a capitalised noun. */
export const CMDLET = /^[A-Z][a-z]+-[A-Z][A-Za-z0-9]*$/;

/** Verbs whose cmdlets change what their noun names (PowerShell's Common, Data, Lifecycle and Security groups). */
const CHANGING_VERBS =
  /^(Add|Set|New|Remove|Clear|Rename|Reset|Enable|Disable|Grant|Revoke|Block|Unblock|Protect|Unprotect|Install|Uninstall|Update|Register|Unregister|Repair|Restore|Publish|Unpublish|Deploy|Mount|Dismount|Initialize|Lock|Unlock|Approve|Deny|Submit|Send|Sync|Backup|Start|Stop|Restart|Suspend|Resume|Edit|Merge|Move|Copy|Optimize|Switch|Complete|Request|Connect|Disconnect|Invoke|Import|Export|Save)$/;

/** Nouns of the session's own state: changing them ends with the session. */
const SESSION_NOUNS =
  /^(Alias|Variable|Location|StrictMode|PSDebug|PSReadLine\w*|PSBreakpoint|Module|Member|Job|Sleep|Transcript|Host|Culture|ArgumentCompleter|ObjectEvent|EngineEvent|Event|FormatData|TypeData|Help|Process|ModuleMember)$/;
/** Values built in memory (`New-Object`, `New-Guid`, `New-DNSRecordArray`): nothing outside the session is made. */
const VALUE_NOUN = /^(Object|Guid|TimeSpan|\w*(Array|Hashtable|List|Credential|ScriptBlock|SessionOption|Option))$/;
/** Nouns of files, named by their path: judged by where the path points, as cp, rm and tee are. */
const FILE_NOUNS =
  /^(Item|ChildItem|Content|ItemProperty|Archive|File|Csv|Clixml|Json|ModuleManifest|ScriptFileInfo|MarkdownHelp|ExternalHelp|FileHash|PowerShellDataFile|LocalizedData)$/;
/** The project's tests, builds and lints run through their PowerShell runners. */
const LOCAL_RUNNERS = /^(Pester|Build|psake|ScriptAnalyzer|Formatter)$/;
/** The registry's drives: a path there is the machine's or the user's settings, not a file of the workspace. */
const REGISTRY_PATH = /^(HK(LM|CU|CR|U|CC)|HKEY_\w+|Registry)::?/i;
/** Modules and scripts installed for the user (`-Scope CurrentUser`, the default of PowerShellGet 3 and pwsh): the user's own tool directory. */
const MODULE_INSTALL = /^(Install|Update|Save)-(Module|Script|PSResource)$/;

function scopeOf(args: Word[]): string | undefined {
  const k = args.findIndex((a) => /^-Scope$/i.test(a.text));
  return k >= 0 ? args[k + 1]?.text : undefined;
}

const cmdlet: Rule = ({ prog, args, st }) => judgeCmdlet(prog, args, st);

export function judgeCmdlet(prog: string, args: Word[], st: State): void {
  const [verb, noun] = prog.split('-') as [string, string];
  st.repeatable = false;
  if (VALUE_NOUN.test(noun) && verb === 'New') return;
  if (args.some((a) => REGISTRY_PATH.test(a.text)) && CHANGING_VERBS.test(verb)) return danger(st, `changes the Windows registry (${prog})`);
  if (MODULE_INSTALL.test(prog)) {
    if (/^AllUsers$/i.test(scopeOf(args) ?? '')) danger(st, `installs PowerShell modules for every user of the machine (${prog} -Scope AllUsers)`);
    return judgeUnknownProgram(prog, args, st);
  }
  if (verb === 'Invoke' && noun === 'Expression') return danger(st, 'evaluates text as PowerShell code (Invoke-Expression)');
  // Started with `-Verb RunAs`, the program runs elevated, as an administrator.
  if (prog === 'Start-Process' && args.some((a, k) => /^-Verb$/i.test(a.text) && /^RunAs$/i.test(args[k + 1]?.text ?? '')))
    return danger(st, 'starts a program as an administrator (Start-Process -Verb RunAs)');
  if (
    !CHANGING_VERBS.test(verb) ||
    SESSION_NOUNS.test(noun) ||
    FILE_NOUNS.test(noun) ||
    (verb === 'Invoke' && LOCAL_RUNNERS.test(noun)) ||
    (verb === 'Import' && noun === 'Module')
  )
    return judgeUnknownProgram(prog, args, st);
  danger(st, `changes the machine's, the user's or a domain's ${noun} (${prog}: PowerShell's ${verb} verb changes what its noun names)`);
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

export const POWERSHELL_RULES: RuleTable = {
  programs: {},
  patterns: [
    [CMDLET, cmdlet],
    [DOTNET_CALL, dotnetCall],
  ],
};
