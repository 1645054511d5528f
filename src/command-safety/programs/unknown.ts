// What a program no family names is judged by: not its name, which no table can keep up with, but
// what its arguments point at. The programs every corpus brought that the tables did not know were
// most of the dangerous commands that passed (two thirds, docs/decisions.md); what they had in
// common was a path outside the workspace (a key, a device, /etc), another host, or an option that
// hands over a command. A program that only reads (safe-commands.ts) is never judged here.
import type { Word } from '../shell-lex.js';
import {
  classify,
  danger,
  MAKE_INSTALL_DIR,
  namesThisMachine,
  onlyAsksAbout,
  operands,
  optionValue,
  TEMP_DIRS,
  THIS_MACHINE_ADDRESS,
  type State,
  WINDOWS_PLACE,
} from '../state.js';
import { INSTALLED } from './places.js';
import { SHELLS } from './shells.js';

/**
 * Devices and system files any program may read or write without harm (and the temporary
 * directories, state.ts's TEMP_DIRS, /private's on macOS included); macOS's /System is a sealed,
 * read-only volume of Apple's files (color profiles, fonts, frameworks), no one's secrets. The package
 * manager's trusted keys (/usr/share/keyrings) are no shared data: a key written there signs packages.
 */
const HARMLESS_PLACE =
  /^\/(dev\/(null|zero|stdout|stderr|stdin|tty|full|random|urandom|fd\/\d+|dri\/renderD\d+)|proc\/(self\/)?(cpuinfo|meminfo|loadavg|uptime|version)|usr\/(share(?!\/keyrings(\/|$))|include|lib|local\/(share|include|lib))|etc\/ssh\/[^/]+\.pub$|System\/(Library|Applications|iOSSupport))(\/|$)/;
/** `user@host`, `user@host:path`, `host:/path`: another machine (an e-mail address in an option's value aside). */
const REMOTE = /^([\w.-]+@[\w.-]+\.?[\w-]*(:\S*)?|[\w-]+(\.[\w-]+)+:\/\S*)$/;
/**
 * An e-mail address (`admin@example.com`, `info.gmail@example.com`): a mailbox, named with its domain,
 * not a login to a machine, which names a host without a path only for the ssh family (judged by its own rules).
 */
const MAIL_ADDRESS = /^[\w.+-]+@([\w-]+\.)+[A-Za-z]{2,24}$/;
/**
 * `postgresql@15`, `python@3.12`, `node@latest`, `radare2@git`: a package at a version or from its
 * repository's head, not a user at a host (an address has four numbers).
 */
const VERSIONED_NAME = /^[\w.+-]+@(\d+(\.\d+){0,2}|latest|git|head|HEAD|main|master|nightly|stable)$/;
/**
 * Open Directory's node names (`/Local/Default`, `/Search`, `/Contacts`, `/LDAPv3/…`, `/Active
 * Directory/…`), which dsexport, dsimport, odutil and dscl take where a path would stand: names of
 * directory services, not files.
 */
const DIRECTORY_NODE = /^\/(Local|Search|Contacts|LDAPv3|Active Directory|BSD|NIS|Configure)(\/|$)/;
/**
 * An IPv4 address of another machine, alone, with a port, as a CIDR range or as a URL's host
 * (`10.10.10.20`, `10.0.0.5:8080`, `192.168.1.0/24`, `http://10.0.0.5/x`): a program given one is
 * sent there, whatever it is called (a scanner, a share lister, a client). This machine's loopback
 * (127.x) and the all-interfaces address (0.0.0.0, a bind address judged where servers are) are not
 * another machine. A word of more or fewer than four numbers (a version, an OID) is not an address. A
 * port may be given by its service's name (`10.129.14.128:imaps`), as the resolver reads it. The user
 * before it may come with its domain and password, as impacket's tools take a target
 * (`corp.com/jeffadmin:Passw0rd@192.168.50.70`); SIP's URIs name it without slashes (`sip:10.10.10.10`),
 * and a sweep gives the last number as a range (`10.10.10.1-254`).
 */
const IPV4_ADDRESS =
  /^(?:[a-z][\w+.-]*:\/\/|sips?:)?(?:(?:[\w.-]+\/)?[^@/\s]*@)?(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})(?:-\d{1,3})?(?::(?:\d{1,5}|[a-z][a-z0-9-]{1,14}))?(?:\/\d{1,2}|\/\S*)?$/;

/**
 * A shell variable whose name says it holds another machine's address (`$IP`, `${RHOST}`, `$TARGET_IP`,
 * `$IP_DNS_SERVER`, a Makefile's `$(EC2_IP)`, a machine's role glued to it: `$ETCDIP`, `$WORKER1IP`), alone, with a port, as a URL's or a share's host or after a user (`http://$IP/x`,
 * `//$IP/share`, `user@$ip:~/x`): the cheat sheets' way of writing the address the literal rule reads. A
 * bare `$HOST` or `$TARGET` is left out: CI scripts use them for a toolchain's triple (`--target $TARGET`).
 */
const HOST_VARIABLE =
  /^(?:[a-z][\w+.-]*:\/\/|\/\/)?(?:[^@/\s]*@)?\$(?:\{|\((?=[A-Z0-9_]+\)))?((?:[a-z][a-z0-9]*_)*ips?(?:_[a-z0-9]+)*|ip_?addr(?:ess)?|[rl]hosts?|(?:target|remote|victim|attacker)_?(?:host|ip|addr(?:ess)?)|(?:etcd|controller|worker\d*|srv|server|node\d*|master|cisco|router|dc|box|machine|db|api|vm\d*)ips?)[})]?(?::\S*)?(?:\/\S*)?$/i;

/** HOST_VARIABLE, a Makefile's variable upper case as make's are: `$(ip)` in a shell runs `ip`. */
export const hostVariable = (text: string) => HOST_VARIABLE.test(text) && !/\$\([a-z]/.test(text);

/**
 * An upper-case placeholder whose words name an IP address (`EXTERNAL-IP-ADDRESS`, `TARGET_IP`,
 * `VICTIM-IP`, `DEVICEIP`): the cheat sheets' way of writing the address to put there, as a variable is.
 */
const ADDRESS_PLACEHOLDER =
  /^(?:[A-Z]+[-_])*(?:DEVICE|HOST|SERVER|TARGET|VICTIM|ROUTER|REMOTE|PUBLIC|EXTERNAL|MACHINE|NODE)?IP(?:[-_]?ADDR(?:ESS)?)?(?:[-_][A-Z]+)*$/;
/**
 * A URL whose host is the cheat sheets' variable for the machine under attack (`http://$IP/CHANGELOG.txt`,
 * `http://$TARGET/wp-json/wp/v2/users`): in a URL's host `$TARGET` is no toolchain's triple.
 */
export const targetHostUrl = (text: string) =>
  /^[a-z][\w+.-]*:\/\//i.test(text) &&
  (hostVariable(text) || /^[a-z][\w+.-]*:\/\/(?:[^@/\s]*@)?\$\{?TARGET\}?(?::\d+)?(?:[/?#]\S*)?$/i.test(text) || placeholderHost(text));
/**
 * The same machine written as an upper-case placeholder (`http://TARGET:8080/app/`, `http://RHOST/cli`,
 * `https://VICTIM_IP/`): the write-ups' word for the host under attack.
 */
const PLACEHOLDER_HOST = /^(?:TARGET|RHOSTS?|VICTIM)(?:[-_]?(?:HOST|IP|ADDR(?:ESS)?|DOMAIN|NAME|URL))?$/;
const placeholderHost = (text: string) => {
  const host = /^[a-z][\w+.-]*:\/\/(?:[^@/\s]*@)?([^/:?#\s]+)/i.exec(text)?.[1] ?? '';
  return PLACEHOLDER_HOST.test(host) || ADDRESS_PLACEHOLDER.test(host);
};

/**
 * A web or file-transfer URL whose host is another machine named only by its address
 * (`http://192.168.137.253:8000/Main.sh`, `https://DEVICEIP/%25`): a device's, a lab's or a staging
 * server's page, which no published site is served as; loopback and the all-interfaces address are this machine.
 */
export const addressedUrl = (text: string) => {
  const host = /^(?:https?|ftps?):\/\/(?:[^@/\s]*@)?([^/:?#\s]+)/i.exec(text)?.[1];
  return host !== undefined && !host.startsWith('$') && otherMachineAddress(host);
};

/** An address written with x for the numbers to fill in (`x.x.x.x`, `10.10.x.x`), with a port or not. */
const ADDRESS_TEMPLATE = /^(?=[\d.]*x)(?:\d{1,3}|x{1,3})(?:\.(?:\d{1,3}|x{1,3})){3}(?::\d{1,5})?$/i;

/**
 * A Windows UNC path (`\\\\10.0.2.15\\tmp` as typed, `\\10.0.2.15\tmp` to the program): a share on the
 * machine it names, whichever client opens it. Win32's own prefixes (`\\?\`, `\\.\`) and this
 * machine's loopback name no other.
 */
const UNC_PATH = /^\\\\([^\\/\s]+)\\/;
const THIS_MACHINE = /^(\.|\?|localhost|127(\.\d+){3})$/i;
/**
 * A UNC path the shell has reduced (`\\\\10.10.10.1` unquoted reaches the program as `\10.10.10.1`, which
 * SMB clients still read as that machine's shares): a backslash and an IPv4 address, alone or with a
 * share after it. A name after one backslash is left out, as a word's escapes make those too.
 */
const REDUCED_UNC_PATH = /^\\{1,2}(\d{1,3}(?:\.\d{1,3}){3})(?:\\\S*)?$/;

/** Whether `text` (an operand or an option's value) is the address of another machine. */
export function otherMachineAddress(text: string): boolean {
  if (hostVariable(text) || ADDRESS_PLACEHOLDER.test(text) || ADDRESS_TEMPLATE.test(text)) return true;
  const unc = UNC_PATH.exec(text) ?? REDUCED_UNC_PATH.exec(text);
  if (unc) return !THIS_MACHINE.test(unc[1]!);
  const m = IPV4_ADDRESS.exec(text);
  if (!m) return false;
  const octets = m.slice(1, 5).map(Number);
  if (octets.some((o) => o > 255)) return false;
  return octets[0] !== 127 && !octets.every((o) => o === 0);
}

/**
 * A bare `$TARGET`, `$HOST` or `$RHOST` (left out of HOST_VARIABLE, as CI scripts name a toolchain's
 * triple so) with a port after it, or given to a tool made to probe, enumerate or log in to another
 * machine (TLS and SMB scanners, NetBIOS lookups, remote desktops, CI/CD secret extractors, password sprayers, Entra ID dumpers, EXPLIoT's plugins, impacket's scripts, under their
 * own names or the `impacket-` ones distributions install them as, its ticket requesters and its writers of a domain's
 * objects, delegations and access lists among them; the 3270 terminals that log in to a mainframe; cadaver's WebDAV sessions):
 * there it can only be the host.
 */
const BARE_HOST_VARIABLE = /^\$\{?(TARGET|HOST|RHOST)\}?(:\d{1,5})?$/;
const REMOTE_TOOL =
  /^(impacket-)?(gettgt|getst|testssl|sslscan|sslyze|rdesktop|x?freerdp\d*|mstsc|nmblookup|nbtscan|smbmap|rpcclient|enum4linux(-ng)?|samrdump|secretsdump|psexec|wmiexec|smbexec|atexec|dcomexec|lookupsid|rpcdump|getuserspns|getnpusers|getadusers|finddelegation|smbclient|cadaver|get-gpppassword|getpac|goldenpac|mssqlclient|mssqlinstance|sambapipe|rdp_check|snmpwalk|snmpget|snmpbulkwalk|onesixtyone|nikto|whatweb|wpscan|ike-scan|showmount|evil-winrm|crackmapexec|netexec|nxc|hydra|medusa|ncrack|ruler|nord-stream|gato|gato-x|atomizer|credmaster|roadrecon|roadtx|o365spray|trevorspray|sprayhound|msolspray|sprayingtoolkit|ssh-audit|expliot|sharphound|rdpscan|getnthash|gettgtpkinit|ms14-068(-checker)?|ldap_shell|cerbero|addcomputer|rbcd|dacledit|owneredit|getlapspassword|getadcomputers|changepasswd|raisechild|keylistattack|dumpntlminfo|badsuccessor|netview|wmiquery|wmipersist|rpcmap|getarch|[cswx]3270|pr3270)(\.(sh|py|pl|rb|exe))?$/i;
export const isRemoteTool = (name: string) => REMOTE_TOOL.test(name);

/** An image or artifact in a registry on this machine (`localhost:5000/app`): a push there leaves nothing past it. */
export const THIS_MACHINE_REGISTRY = /^(localhost|127\.\d+\.\d+\.\d+|\[?::1\]?)(:\d+)?\//;

/**
 * A tool made only to probe, enumerate, spray or log in to other machines, run as a program or as a
 * script (`python3 credmaster.py --config config.json`): it reaches them whatever names the targets (an
 * address, a host name, a file of hosts or accounts); pointed at this machine's loopback it probes no other.
 */
/**
 * Crytic's medusa, a smart contract fuzzer, shares its name with the login guesser: it is run with a
 * subcommand (`medusa fuzz --workers 20`, `medusa init`), the guesser with options and targets only.
 */
export const contractFuzzerRun = (args: readonly Word[]) => /^(fuzz|init|completion)$/.test(args[0]?.text ?? '');

export function remoteToolRun(tool: string, args: Word[]): string | undefined {
  const thisMachine = args.some((a) => {
    const value = a.text.replace(/^-[^=]*=/, '');
    // A share on this machine (`smbclient \\\\localhost\\share`) reads, once the shell has taken its backslashes, `\localhostshare`.
    return THIS_MACHINE_ADDRESS.test(value) || value.startsWith('unix://') || /^[\\/]{1,2}(localhost|127\.[\d.]+)/.test(value);
  });
  // ssh-audit's client audit (`-c`) waits here for clients to connect; `-L` lists its policies.
  if (/^ssh-audit/i.test(tool) && args.some((a) => /^(-c|--client-audit|-L|--list-policies)$/.test(a.text))) return undefined;
  // EXPLIoT's plugins reach the device only when one is run; its listings and shell stay here.
  if (/^expliot$/i.test(tool) && operands(args)[0]?.text !== 'run') return undefined;
  if (/^medusa$/i.test(tool) && contractFuzzerRun(args)) return undefined;
  // cerbero converts and hashes tickets held here (`cerbero convert -i x.ccache -o x.krb`); its other commands ask a domain's KDC.
  if (/^cerbero$/i.test(tool) && /^(convert|hash)$/.test(operands(args)[0]?.text ?? '')) return undefined;
  return REMOTE_TOOL.test(tool) && args.length > 0 && !onlyAsksAbout(args) && !thisMachine
    ? `probes, enumerates or logs in to other machines (${tool})`
    : undefined;
}

/**
 * An option that gives a file of hosts (`smbmap --host-file smb-hosts.txt`, nmap's `-iL`, impacket's
 * `-target-file`): a tool of the family above given one reaches every machine the file names.
 */
const HOST_LIST_OPTION = /^(--?(hosts?|targets?)[-_]?(file|list)|-iL|-tf)(=|$)/i;
export function hostListGiven(prog: string, args: readonly Word[]): string | undefined {
  if (!REMOTE_TOOL.test(prog)) return undefined;
  const k = args.findIndex((a) => HOST_LIST_OPTION.test(a.text));
  return k < 0 ? undefined : `gives ${prog} a file of other machines to reach (${args[k]!.text})`;
}

export function bareHostGiven(prog: string, args: readonly Word[]): string | undefined {
  const k = args.findIndex((a) => BARE_HOST_VARIABLE.test(a.text));
  if (k < 0) return undefined;
  const t = args[k]!.text;
  if (REMOTE_TOOL.test(prog)) return t;
  // An option's value (`--target $TARGET`) is a triple as often as a host; a port after it is not.
  if (/^-/.test(args[k - 1]?.text ?? '')) return undefined;
  return t.includes(':') || /^\d{1,5}$/.test(args[k + 1]?.text ?? '') ? t : undefined;
}

/** OpenLDAP's clients, which bind to a directory server. */
const LDAP_CLIENT = /^ldap(search|modify|add|delete|whoami|passwd|modrdn|compare|exop)$/;
const LOCAL_LDAP = /^(ldapi:\/\/|ldaps?:\/\/(localhost|127\.[\d.]+|\[::1\])([:/]|$)|localhost$|127\.[\d.]+$|ldaps?:\/\/[a-z][\w-]*:\d+\/?$)/i;

/**
 * An LDAP client given a bind password (`-w`) and a server by `-h`, `-H` or none (ldap.conf's, the
 * site's directory): it logs in to that directory with the password. A server on this machine
 * (`-H ldapi:///`, `-H ldap://localhost`) is a test's, as is one a single name and a port give
 * (`-H ldap://auth:389`), a container of the project's own compose setup.
 */
function directoryLogin(prog: string, args: readonly Word[]): string | undefined {
  if (!LDAP_CLIENT.test(prog) || !args.some((a) => /^-w./.test(a.text) || a.text === '-w')) return undefined;
  const k = args.findIndex((a) => /^-[hH]/.test(a.text));
  const server = k < 0 ? undefined : args[k]!.text.length > 2 ? args[k]!.text.slice(2) : args[k + 1]?.text;
  if (server !== undefined && LOCAL_LDAP.test(server)) return undefined;
  return `logs in to a directory server with a password (${prog} -w)`;
}

/** Windows' own system files (`%windir%\\system32\\msvcr120.dll`): a build reads them as it reads /usr/lib, and writes nothing there. */
const WINDOWS_SYSTEM_FILES = /^"?%(windir|SystemRoot)%/i;

/**
 * impacket's target, `domain/user[:password]@host` (`test.local/john:password123@10.10.10.1`), given to a
 * Python script or an `impacket-` program: it logs in to that host. The domain is a dotted name, so a
 * package at a version (`owner/name@main`, `example.com/mod@v1.2.3`) is not one; this machine's is left
 * to the rest.
 */
const IMPACKET_TARGET = /^[\w-]+(\.[\w-]+)+\/[\w.$-]+(:[^@\s]*)?@(?!(localhost|127\.[\d.]+|v?\d+(\.\d+)*|latest)$)[\w.-]+$/;
function impacketTarget(prog: string, args: readonly Word[]): string | undefined {
  if (!/\.py$|^impacket-/.test(prog)) return undefined;
  const t = args.find((a) => IMPACKET_TARGET.test(a.text));
  return t && `logs in to another machine as a domain user (${t.text})`;
}

/**
 * SQL Server's and Sybase's command-line clients (sqsh, sqlcmd, FreeTDS' tsql and bsqldb, isql, bcp):
 * given a password (`-P`) they log in to the server `-S` names (the configured default when none), a
 * session there as that account. A server on this machine (`-S localhost`, `127.0.0.1,1433`, a
 * test's container) is left to the rest.
 */
const MSSQL_CLIENT = /^(sqsh|sqlcmd|tsql|bsqldb|isql|bcp)$/;
const LOCAL_SERVER = /^(localhost|127\.[\d.]+|\.|\(local\))([,:\\]|$)/i;
function databaseLogin(prog: string, args: readonly Word[]): string | undefined {
  if (!MSSQL_CLIENT.test(prog) || !args.some((a) => /^-P/.test(a.text))) return undefined;
  const k = args.findIndex((a) => /^-S/.test(a.text));
  const server = k < 0 ? undefined : args[k]!.text.length > 2 ? args[k]!.text.slice(2) : args[k + 1]?.text;
  if (server !== undefined && LOCAL_SERVER.test(server)) return undefined;
  return `logs in to a database server with a password (${prog} -P)`;
}

/** A repository on a code host (`repo init -u https://github.com/x/manifest.git`): fetched into the workspace, not a target. */
const CODE_HOST_URL = /\.git$|^https?:\/\/((www\.)?(github\.com|gitlab\.com|bitbucket\.org|codeberg\.org)|[\w.-]*googlesource\.com)\//;
/** `-u` naming a site to crawl or scan (`katana -u https://tesla.com`), where its value is another host's URL. */
export function crawlTargetNamed(prog: string, args: Word[]): string | undefined {
  const k = args.findIndex((a, i) => a.text === '-u' && OTHER_HOST_URL.test(args[i + 1]?.text ?? '') && !CODE_HOST_URL.test(args[i + 1]!.text));
  return k < 0 ? undefined : `gives ${prog}, which no table names, another host as its target (${args[k + 1]!.text})`;
}

/**
 * A server or a target named by its host, a URL or a domain (`--server smtp.example.com`, `--target contoso.com`,
 * `--host=pool.supportxmr.com`, `--url http://portal.example.org/login`), to a program no table names: what the
 * program does, it does there. This machine's, an address's numbers alone and a version are not another host.
 */
export function serverNamed(prog: string, args: Word[]): string | undefined {
  // Go's tools spell their long options with one dash (`-host hackerone.com`, `-url`).
  const k = args.findIndex((a) => /^--?(server|target|host|url|domain|smtp-server|smtp-host|mail-server|imap-server)(=|$)/.test(a.text));
  const name =
    k < 0
      ? undefined
      : optionValue(args, k)
          ?.replace(/^https?:\/\//, '')
          .replace(/\/.*$/, '');
  if (name !== undefined && /^[\w-]+(\.[\w-]+)+(:\d+)?$/.test(name) && !namesThisMachine(name) && !/^\d+(\.\d+)*$/.test(name))
    return `gives ${prog}, which no table names, another host as its server or target (${name})`;
  // `-t` is a target only when its value is a host's name alone (`-t example.com`, `-t target.internal`):
  // a tag, a type, a file, a package or a count is not one.
  const t = args.findIndex((a) => a.text === '-t');
  const host = t < 0 ? undefined : args[t + 1]?.text;
  return host !== undefined && HOST_NAME.test(host) ? `gives ${prog}, which no table names, another host as its target (-t ${host})` : undefined;
}
/**
 * A host's name alone, by a last label the internet's or a lab's names end in; a Java package's reversed
 * name (`com.example.app`) starts with one.
 */
const HOST_NAME =
  /^(?!(com|org|net|io)\.)[a-z0-9-]+(\.[a-z0-9-]+)*\.(com|net|org|io|co|edu|gov|info|biz|xyz|me|us|uk|de|fr|ru|cn|jp|br|au|ca|eu|nl|internal|corp|lan|htb|thm|onion|cloud)$/;

/**
 * A serial port of a board or device plugged into this machine (`--rpico /dev/ttyACM0`, `-p /dev/ttyUSB0`,
 * `serial:/dev/tty.usbmodem1101`) given to a program or script no table names: it flashes, glitches, reads
 * or drives that device, hardware past the workspace that no sandbox holds.
 */
const SERIAL_DEVICE = /(^|[:=]|\/\/)\/dev\/(tty(USB|ACM|AMA|THS|S)\d|tty\.(usb|wch|SLAB)|cu\.|serial\/)/;
function serialDeviceDriven(prog: string, args: readonly Word[]): string | undefined {
  const device = args.find((a) => SERIAL_DEVICE.test(a.text));
  return device && `gives ${prog}, which no table names, a device's serial port (${device.text})`;
}

/**
 * What a program or a script no table names signs in to, attacks or drives, by its words: a domain user's
 * login, a target a scanner is aimed at, a password given, a device's serial port.
 */
export const signsInOrTargets = (prog: string, args: Word[]): string | undefined =>
  impacketTarget(prog, args) ??
  scannerAimed(prog, args) ??
  passwordSignIn(prog, args) ??
  serialDeviceDriven(prog, args) ??
  targetListGiven(prog, args) ??
  mailRecipientGiven(prog, args) ??
  paymentCardsGiven(prog, args);

/** The text editors a person opens a file in (files.ts judges what their save writes). */
export const TEXT_EDITORS = ['nano', 'pico', 'micro', 'emacs', 'gedit', 'kate', 'mousepad', 'joe', 'jed', 'mcedit', 'vi', 'vim', 'nvim'];
/** A file of payment cards (`cards.txt`, `TestCards.txt`, `my_cards.csv`, `ccs.txt`). */
const CARD_LIST_FILE = /^(\w*[_-])?(test)?(cards?|ccs?)([_-]\w*)?\.(txt|csv|lst)$/i;
/**
 * A program or a script given a file of payment cards to go through (`checker.py cards.txt --gate low`):
 * a card tester, which tries each card against a shop's or a payment provider's checkout.
 */
function paymentCardsGiven(prog: string, args: Word[]): string | undefined {
  // An editor or a pager opens the file for a person; it tries nothing.
  if (TEXT_EDITORS.includes(prog) || /^(less|more|code)$/.test(prog)) return undefined;
  const cards = args.find((a) => CARD_LIST_FILE.test(a.text.replace(/^--?[\w-]+=/, '').replace(/^.*\//, '')));
  return cards && `gives ${prog} a list of payment cards to try against shops (${cards.text})`;
}

/**
 * A recipient's address given as one (`--to someone@example.com`, `--rcpt=…`): the program sends mail
 * there on the user's behalf. A mailbox on this machine (`user@localhost`) reaches no one else.
 */
function mailRecipientGiven(prog: string, args: Word[]): string | undefined {
  const k = args.findIndex((a) => /^--(to|rcpt|rcpt-to)(=|$)/.test(a.text));
  const value = k < 0 ? undefined : optionValue(args, k);
  return value !== undefined && MAIL_ADDRESS.test(value) ? `gives ${prog}, which no table names, a mail recipient (${value})` : undefined;
}

/**
 * A program or script named for a backdoor, a phishing kit or a command-and-control server or beacon
 * (`backdoor_client.exe`, `maskphish.sh`, `z-beac0n-C2.py`); one named for finding them
 * (`xz-backdoor-scan`, `phishing-detector`) is a defender's.
 */
const IMPLANT_NAME = /backdoor|phish|(^|[_.-])(c2|beac0?n)([_.-]|$)/i;
const FINDS_IMPLANTS = /scan|detect|check|audit|find|hunt|analy[sz]|yara|ioc/i;
/** A request smuggler (`smugglex`, `http-smuggler`, `h2csmuggler`): it desynchronises the servers it is aimed at. */
const SMUGGLER_NAME = /smuggl(er|ex)/i;
/**
 * A run of a program named for a backdoor, a phishing kit or a C2, anything but a question about it;
 * or of a request smuggler given something to work on that is not only this machine.
 */
export function implantRun(name: string, args: readonly Word[]): string | undefined {
  if (onlyAsksAbout(args as Word[])) return undefined;
  if (IMPLANT_NAME.test(name) && !FINDS_IMPLANTS.test(name))
    return `runs a program named for a backdoor, a phishing kit or a command-and-control server (${name})`;
  if (SMUGGLER_NAME.test(name) && args.length > 0 && !aimedOnlyAtThisMachine(args))
    return `runs a request smuggler, which desynchronises the servers it is aimed at (${name})`;
  return undefined;
}

/** A program named for a reverse or bind shell or the relay of one (`./reverse_server.elf`, `bind_shell`, `reverse_proxy_agent`). */
const SHELL_HANDOFF_NAME = /(^|[_.-])(reverse|bind)[_-]?(shell|payload|server|client|proxy|agent)([_.-]|$)/i;
/** A debugger's server (Delve's with `--listen`), which runs whatever its client sends, and a port on every interface (`:6666`, `*:1234`, `0.0.0.0:2345`). */
const DEBUG_SERVER = /^(gdbserver|debugserver|lldb-server|dlv)$/;
const EVERY_INTERFACE_PORT = /^['"]?(\*|0\.0\.0\.0|\[::\])?:\d+['"]?$/;

/**
 * An account's password given on the command line (`--password Pa55w0rd`, `-password=secret`), or a user
 * and a password given together (`-u dave -p dragon`, `-U admin -P pass`), to a program no table names: it
 * signs in with them somewhere, a service's or a site's account used from here; a token's PIN (`--pin 1234`,
 * `--so-pin`) opens its keys the same way, and so does an access token written out (`--token bb03b43b-…`). A
 * number after `-p` is a port; a sign-in to this machine's own server is a test's.
 */
const PASSWORD_OPTION = /^--?(password|passwd|pass|pwd|pin|so-pin|user-pin)(=|$)/i;
/** An access token's option, and a value that is one written out (letters and digits, long as keys are). */
const TOKEN_OPTION = /^--?(token|api-key|apikey|api-token|access-token|auth-token|secret-key)(=|$)/i;
const TOKEN_VALUE = /^(?=[\w:.-]*\d)(?=[\w:.-]*[A-Za-z])[\w:.-]{16,}$/;
const USER_OPTION = /^(-[uU]|--?(user|username|login))(=|$)/;
/**
 * A login or a session written out in another form: a user and password joined (`--auth admin:secretpass`),
 * a session's cookie (`--cookies "session_id=abc123"`), an Authorization header (`--extra-headers
 * "Authorization:Bearer abc123"`), a `password=` word of a program's own `key=value` arguments.
 */
const JOINED_LOGIN_OPTION = /^--?(auth|basic-auth|http-auth|credentials|creds)(=|$)/i;
const COOKIE_OPTION = /^--?(cookie|cookies)(=|$)/i;
const HEADER_OPTION = /^(-H|--?(header|headers|extra-headers?))(=|$)/i;
function sessionGiven(args: Word[]): Word | undefined {
  return args.find((a, k) => {
    if (/^(password|passwd|pass)=./i.test(a.text) && !a.expands) return true;
    const v = /^-/.test(a.text) ? optionValue(args, k) : undefined;
    if (v === undefined || /\$/.test(v)) return false;
    return (
      (JOINED_LOGIN_OPTION.test(a.text) && /^[^:\s]+:\S+$/.test(v)) ||
      (COOKIE_OPTION.test(a.text) && /=/.test(v)) ||
      (HEADER_OPTION.test(a.text) && /^[\s{'"]*(authorization|cookie|x-api-key)['"]?\s*:/i.test(v))
    );
  });
}
/**
 * An application's own account made with the password it is to have (`doccano createuser --password pass`,
 * `ckan user add NAME password=…`, `devpi user -c NAME password=…`): the password is set there, not used to sign in.
 */
function makesAccount(args: Word[]): boolean {
  const words = args.map((a) => a.text);
  return (
    words.some((w) => /^(create_?user|create_?admin|createsuperuser|add_?user)$/i.test(w)) ||
    (words.some((w) => /^users?$/.test(w)) && words.some((w) => /^(add|create|new|-c|--create)$/.test(w)))
  );
}
function passwordSignIn(prog: string, args: Word[]): string | undefined {
  if (makesAccount(args)) return undefined;
  // A URL after `-u` or `-p` is a target or a proxy (`sj convert -u https://…/swagger.json -p http://127.0.0.1:8080`), no account.
  const given = (k: number, numbers = false) => {
    const v = optionValue(args, k);
    return v !== undefined && v !== '' && (numbers || !/^\d+$/.test(v)) && !/^[a-z][\w+.-]*:\/\//i.test(v) ? v : undefined;
  };
  // A PIN is numbers; only `-p`'s number is read as a port.
  const named = args.findIndex((a, k) => PASSWORD_OPTION.test(a.text) && given(k, /pin/i.test(a.text)) !== undefined);
  const userGiven = args.some((a, k) => USER_OPTION.test(a.text) && given(k) !== undefined);
  const k = named >= 0 ? named : userGiven ? args.findIndex((a, k) => /^-[pP]$/.test(a.text) && given(k) !== undefined) : -1;
  const session = k < 0 ? sessionGiven(args) : undefined;
  if (session && !aimedOnlyAtThisMachine(args))
    return `signs in with a login or a session written in its command line (${prog} ${session.text.replace(/=.*/, '')})`;
  if (k < 0) {
    // An access token written out (`--token bb03b43b-1d81-…`, `--api-key=glrt-7OE…`): letters and digits, long
    // as keys are; a variable's or a file's name is where it is kept, not the key.
    const token = args.findIndex((a, k) => TOKEN_OPTION.test(a.text) && TOKEN_VALUE.test(optionValue(args, k) ?? ''));
    if (token < 0 || aimedOnlyAtThisMachine(args)) return undefined;
    return `signs in with an access token written in its command line (${prog} ${args[token]!.text.replace(/=.*/, '')})`;
  }
  if (aimedOnlyAtThisMachine(args)) return undefined;
  return `signs in with a password given on its command line (${prog} ${args[k]!.text.replace(/=.*/, '')})`;
}

/**
 * A program named for scanning, exploiting or brute-forcing (`iis_shortname_scanner.jar`, `mikrotikapi-bf.py`,
 * `struts-exploit.py`, `Hadoop_Yarn_RPC_RCE.py`, `CVE-2019-7609-kibana.py`, `ftp-bruteforcer`, `CitrixBleed2.py`,
 * `citrix-netscaler-memory-leak`, `takeover.py`, `SpringBoot-Scan.py`) given a web URL of another host or a file listing them: it probes or attacks
 * those hosts' services, whether an address or a name names them. This machine's own is a test's. Jenkins' command-line client (`jenkins-cli.jar -s URL`)
 * is aimed the same way: it runs its commands on the server the URL names.
 */
const SCANNER_NAME =
  /(^|[_.-])(exploit|exp|rce|poc|cve-\d{4}-\d+|brute(forcer?)?|bf|sprayer|leak|jenkins-cli|jwt_tool|takeover|deface|scan)([_.-]|$)|(^|[^\d])scanner([_.-]|$)|[a-z\d]bleed\d*([_.-]|$)/i;
/** Whether a program's or an image's name says it scans, exploits or brute-forces (`spring4shell-poc`, `takeover`). */
export const namedForAttack = (name: string) => SCANNER_NAME.test(name);
export const OTHER_HOST_URL = /^(https?|wss?):\/\/(?!(?:[^@/]*@)?(localhost|127\.[\d.]+|\[::1\])([:/]|$))[\w-]+(\.[\w-]+)+/i;
/** A host of another machine written without a scheme, with a port or a path (`example.com:8080`, `api.example.org/v1`). */
const OTHER_HOST_BARE = /^(?!(localhost|127\.[\d.]+)([:/]|$))[\w-]+(\.[\w-]+)+(:\d+(\/|$)|\/\S)/i;
/**
 * Every host the words name is this machine (`http://localhost:8042/x`, `127.0.0.1:9001`, an option's
 * `--url=http://localhost`): what the program sends goes to a server here, the project's own.
 */
export const aimedOnlyAtThisMachine = (args: readonly Word[]) =>
  args.some((a) => namesThisMachine(a.text) || namesThisMachine(a.text.replace(/^--?[\w-]+=/, ''))) &&
  !args.some((a) => {
    const value = a.text.replace(/^--?[\w-]+=/, '');
    return OTHER_HOST_URL.test(value) || OTHER_HOST_BARE.test(value);
  });
/** A site's name alone (`www.cloudflarechallenge.com`, `target.example.org`): a name under a public top-level domain, not a file's. */
const SITE_NAME = /^([a-z0-9-]+\.)+(com|net|org|io|gov|edu|mil|co|uk|de|fr|ru|cn|jp|info|biz|xyz|dev|app|cloud|ai|me|us|eu)$/i;
/** A file of the sites or hosts a tool is to go through (`-i urls.txt`, `--url-file websites.txt`, `-l targets.lst`). */
export const TARGET_LIST_FILE =
  /^([\w.-]*[_-])?(urls?|targets?|hosts?|domains?|subdomains?|websites?|sites?|ips?|iplist|hostlist|urllist|cameras?|shops?|stores?)(\.(txt|lst|list|csv))?$/i;
function scannerAimed(prog: string, args: readonly Word[]): string | undefined {
  if (!SCANNER_NAME.test(prog)) return undefined;
  const url = args.find((a) => OTHER_HOST_URL.test(a.text));
  if (url && /jenkins-cli/i.test(prog)) return `runs commands on another host's Jenkins server (${prog} ${url.text})`;
  if (url) return `gives ${prog}, named for scanning or attacking, another host's web service (${url.text})`;
  const site = args.find((a) => !a.text.startsWith('-') && SITE_NAME.test(a.text));
  if (site) return `gives ${prog}, named for scanning or attacking, another host by its name (${site.text})`;
  const list = args.find((a, k) => {
    const option = /^(--?[\w-]+)(?:=(.*))?$/.exec(a.text);
    if (!option) return TARGET_LIST_FILE.test(a.text);
    if (option[2] !== undefined && TARGET_LIST_FILE.test(option[2])) return true;
    // An option named for its targets (`--ip`, `--host`, `-targets`) aims the tool at its value; this machine's is a test's.
    const value = option[2] ?? args[k + 1]?.text;
    return TARGET_LIST_FILE.test(option[1]!.replace(/^-+/, '')) && !(value !== undefined && namesThisMachine(value));
  });
  return list && `gives ${prog}, named for scanning or attacking, a list of sites or hosts to go through (${list.text})`;
}

/**
 * A script given another host's web address to work on, as an operand or an option's value (`python3
 * main.py -u http://example.com/chamilo -a scan`, `liffy.py "http://example.com/page.php?file="`), or a
 * file of them (`firethief.py -T targets.txt`): a script
 * is written for a purpose no table knows, and what it does to a site it does there. An archive's or a
 * package's address is a download's source, not a site worked on.
 */
const DOWNLOAD_URL = /\.(tar\.\w+|tgz|zip|whl|jar|deb|rpm|gz|xz|bz2|zst|exe|msi|dmg|iso|img|bin|py|sh)([?#]|$)/i;
/**
 * An option naming the address a generator's output links to (`generate_docs.pl --base-url http://example.com`,
 * `--site-url=…`): written into the pages it makes, not a site it works on.
 */
const LINK_BASE_OPTION = /^--?(base|site|public|root|canonical)[-_]?url$|^--?(url[-_]?prefix|base[-_]?href)$/i;
export function scriptGivenSite(script: string, args: readonly Word[]): string | undefined {
  const site = args.find((a, k) => {
    const value = a.text.replace(/^--?[\w-]+=/, '');
    const option = value === a.text ? args[k - 1]?.text : a.text.replace(/=.*$/s, '');
    return OTHER_HOST_URL.test(value) && !DOWNLOAD_URL.test(value) && !LINK_BASE_OPTION.test(option ?? '');
  });
  if (site) return `gives ${script}, a script, another host's web address to work on (${site.text})`;
  const list = targetListOption(args);
  return list && `gives ${script}, a script, a list of sites or hosts to go through (${list.text})`;
}

/** An option that names where output goes (`-o urls.txt`): a list written, not one gone through. */
const OUTPUT_OPTION = /^(--?o|-w|--?(out|output|outfile|output-file|write))(=|$)/i;
/**
 * A file listing the sites or hosts to go through, given as an option's value (`-T targets.txt`,
 * `--urls=url.txt`, `-f targets.txt`, `-l ips.txt`): the program is pointed at every host it names.
 */
function targetListOption(args: readonly Word[]): Word | undefined {
  const listFile = (v: string) => TARGET_LIST_FILE.test(v) && /\.(txt|lst|list|csv)$/i.test(v);
  return args.find((a, k) =>
    /^--?[\w-]+=/.test(a.text)
      ? !OUTPUT_OPTION.test(a.text) && listFile(a.text.replace(/^--?[\w-]+=/, ''))
      : !a.text.startsWith('-') && /^-/.test(args[k - 1]?.text ?? '') && !OUTPUT_OPTION.test(args[k - 1]!.text) && listFile(a.text),
  );
}
/** Filters of URL lists that only reshape the lines they read, reaching no site (uro and urldedupe drop near-duplicates). */
const URL_LIST_FILTERS = /^(uro|urldedupe|qsreplace|anew|unfurl)$/;
/** A program no table names given a file of hosts or sites to go through (`sikscan -f targets.txt`, `naabu -list hosts.txt`). */
function targetListGiven(prog: string, args: readonly Word[]): string | undefined {
  const list = URL_LIST_FILTERS.test(prog) ? undefined : targetListOption(args);
  return list && `gives ${prog}, which no table names, a list of sites or hosts to go through (${list.text})`;
}

/** A version option (`--version 1.2.3.4`, `--assembly-version=1.0.0.0`): four numbers there are a version. */
const VERSION_OPTION = /^--?[\w-]*version(=|$)/i;

const INSTALLS_VERSION = /^(install|uninstall|use|upgrade)$/;

/**
 * The options whose address names no other machine: the layout of a container network being made (its
 * range, gateway and addresses kept aside), or this machine's own interface a program sends from.
 */
const OWN_NETWORK_OPTION = /^--(subnet|gateway|ip-range|aux-address|ipv6-subnet|ifaddr|source-address|src-addr|local-address|bind-address)$/;

/** An option naming an address to assign (`-ip`, `--address`). */
const ADDRESS_OPTION = /^--?(ip|address|addr)$/;
/** An IPv4 address with its prefix length whose host part is not zero (`192.168.100.2/24`): one host's address in its network. */
const assignedAddress = (value: string) => {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/.exec(value);
  if (!m || Number(m[5]) >= 32) return false;
  const address = ((Number(m[1]) * 256 + Number(m[2])) * 256 + Number(m[3])) * 256 + Number(m[4]);
  return address % 2 ** (32 - Number(m[5])) !== 0;
};

/** An option naming the configuration file a program reads (`--config`, `--config_file`, `--conf`). */
const CONFIG_OPTION = /^--(config|conf|config[-_]file|config[-_]path|configfile)$/;

/** The first word of `args`, an operand or an option's value, that is another machine's address. */
export function addressGiven(args: readonly Word[]): string | undefined {
  for (const [k, a] of args.entries()) {
    const t = a.text;
    // A Windows-style switch's value (`xfreerdp /v:10.11.1.50`) is read as an option's is.
    const value = t.startsWith('-') ? (t.includes('=') ? t.slice(t.indexOf('=') + 1) : '') : WINDOWS_SWITCH.test(t) ? t.slice(t.indexOf(':') + 1) : t;
    if (VERSION_OPTION.test(t) || VERSION_OPTION.test(args[k - 1]?.text ?? '')) continue;
    // A version manager's tool and version (`ghcup install cabal 3.6.0.0`, `use node 18.0.0.1`).
    if (/^\d/.test(t) && args.slice(Math.max(0, k - 2), k).some((w) => INSTALLS_VERSION.test(w.text))) continue;
    // A network being made (`--subnet 192.168.0.0/24 --gateway 192.168.0.1`) or this machine's own interface
    // to send from (`emqtt_bench pub --ifaddr 192.168.1.10`) names no other machine.
    if (OWN_NETWORK_OPTION.test(t.replace(/=.*/, '')) || OWN_NETWORK_OPTION.test(args[k - 1]?.text ?? '')) continue;
    // A host's own address in its network, given to an address option (`nebula-cert sign -ip 192.168.100.2/24`): what a
    // certificate or an overlay network assigns, not a machine reached. A network's range (`10.0.0.0/24`) may be a scan's.
    if (ADDRESS_OPTION.test(t.startsWith('-') ? t.replace(/=.*/, '') : (args[k - 1]?.text ?? '')) && assignedAddress(value)) continue;
    // A public resolver given as an option's value (`dnsproxy -u 8.8.8.8:53`, `--upstream=tls://dns.google`) is the name server asked.
    if (PUBLIC_RESOLVER.test(value) && RESOLVER_OPTION.test(t.startsWith('-') ? t.replace(/=.*/, '') : (args[k - 1]?.text ?? ''))) continue;
    if (value && otherMachineAddress(value)) return value;
  }
  return undefined;
}

/** An option that names the name servers a program asks (`-u`/`--upstream`, `-f`/`--fallback`, `--dns`, `--resolver`). */
const RESOLVER_OPTION = /^(-u|--upstream|-f|--fallback|-b|--bootstrap|--dns|--dns-server|--resolvers?|--nameservers?)$/;
/** The public DNS resolvers (Google's, Cloudflare's, Quad9's, OpenDNS', AdGuard's), by address or name, with a scheme and port or not. */
const PUBLIC_RESOLVER =
  /^((udp|tcp|tls|https|quic|h3|sdns):\/\/)?(8\.8\.8\.8|8\.8\.4\.4|1\.1\.1\.1|1\.0\.0\.1|9\.9\.9\.9|149\.112\.112\.112|208\.67\.222\.222|208\.67\.220\.220|dns\.google|cloudflare-dns\.com|one\.one\.one\.one|dns\.quad9\.net|dns\.adguard(-dns)?\.com)(:\d+)?(\/dns-query)?$/i;

/**
 * A URL of a file on another machine over a login or a file share (`vim scp://user@host//etc/fstab`,
 * `sftp://`, `smb://`, `ftp://`): a program that opens files opens, and may write, that machine's.
 * This machine's own (localhost, 127.x) is not another.
 */
const REMOTE_FILE_URL = /^(scp|sftp|ssh|smb|cifs|nfs|fish|ftps?|tftp|davs?|webdavs?):\/\/(?!(?:[^@/]*@)?(localhost|127\.[\d.]+|\[::1\])([:/]|$))\S+/i;

/**
 * A URL of a directory or mail service on another machine by its domain name or address
 * (`ldap://dc.support.htb`, `ldaps://10.0.0.5`, `imaps://mail.example.com`): a program given one
 * queries or logs in to that machine's directory or mailboxes. A host without a dot (`ldap://ldap`, a
 * CI job's service container) and this machine's own are not another.
 */
/**
 * A URL that carries a user and password for another host (`postgres://amjith:pa$$w0rd@example.com/db`,
 * `mongodb://root:prisma@mongo:27017`): a login there, with the password in the command.
 */
const CREDENTIAL_URL = /^[a-z][a-z0-9+.-]*:\/\/[^:@/\s]+:[^@/\s]+@(?!(localhost|127\.[\d.]+|\[::1\])([:/?]|$))[\w.-]+/i;
export const SERVICE_URL = /^(ldaps?|imaps?|pop3s?|smtps?):\/\/(?!(?:[^@/]*@)?(localhost|127\.[\d.]+|\[::1\])([:/]|$))(?:[^@/\s]*@)?[\w-]+\.[\w.-]+/i;

/**
 * An option that chooses the interpreter a tool builds or runs with (`virtualenv -p /usr/bin/python2`,
 * `--python=/usr/local/bin/python3.12`, zipapp's `-p "/usr/bin/env python3"`), given an installed one by its path: the tool runs that
 * interpreter for the project, as it would the one first on the PATH.
 */
const INTERPRETER_CHOICE = /^(-p|--python|--interpreter)(=|$)/;
const INSTALLED_INTERPRETER = /^\/(usr\/(local\/)?|opt\/homebrew\/)?bin\/(env )?(python|pypy|ruby|node|perl|php)[\d.]*$/;
const choosesInstalledInterpreter = (args: Word[], k: number, value: string) =>
  INSTALLED_INTERPRETER.test(value) && (INTERPRETER_CHOICE.test(args[k]!.text) || /^(-p|--python|--interpreter)$/.test(args[k - 1]?.text ?? ''));

/** The verbs and modes of guessing by brute force or spraying passwords. */
const BRUTE_FORCE = /^(brute|bruteforce|brute-force|brute_force|passwordspray|password-spray|spray)$/i;

/** An option whose value is a command the program runs. */
export const EXEC_OPTION = /^--?(exec|execute|command|cmd|shell|eval|pre|post|hook|on-[\w-]+|[\w-]+-(cmd|command|program|exec|hook|shell))(=|$)/;
/** A shell named by its path (the bare word is judged where it is handed over, with what it runs). */
const SHELL_VALUE = /^\/(usr\/)?bin\/(sh|bash|zsh|dash|ksh|fish)(\s|$)/;
/** A file of account names by its usual names (`users.txt`, `usernames.lst`, `user_list.txt`). */
const ACCOUNT_LIST = /^(users?|usernames?|user_?list|logins?)\.(txt|lst)$/;
/** A file of passwords to try by its usual names (`passwords.txt`, `pass_list.txt`, `pwd.lst`). */
const PASSWORD_LIST = /^(pass(words?)?|pwds?|pass_?list|password_?list)\.(txt|lst)$/;
/** A file of accounts with their passwords (`userpass_list.txt`, `creds.txt`). */
const ACCOUNT_PASSWORD_LIST = /^(userpass(_?list)?|user_?pass_?list|creds|combos?)\.(txt|lst)$/;
/** Options giving passwords or hashes to try, beyond a password's own (`-p`, `-P`, `-pl`, `--passwords`, `--passlist`, `-H`). */
const TRIED_PASSWORDS_OPTION = /^(-p|-P|-pl|-pw|-H|--passwords|--passlist|--password-list|--hashes)(=|$)/;
/**
 * Verbs that delete, destroy, stop, send or unlock, as a subcommand of a program no table names, alone or
 * before what they act on (`delete-topic`, `destroy-cluster`); a send
 * says what it sends, the last word of its name (`manage.py sendalerts`, `sendtestemail`, `send-notification`,
 * `send_monthly_activity_emails`). One run of letters and separators before that word, not nested runs:
 * a long word that never ends in one is then given up in time proportional to its length squared.
 */
const DESTRUCTIVE_OR_OUTWARD_VERB =
  /^((delete|destroy)(-[a-z]+)+|delete|del|rm|destroy|drop|wipe|kill|shutdown|reboot|push|upload|send([-_a-z]*?(e?mails?|alerts?|reports?|notifications?|messages?|sms|testemail|digests?|newsletters?))?|grant|unlock|flash|erase|burn)$/;
/** The clients of wallets and of payment-channel nodes: Bitcoin Core's and its forks' `-cli`, lnd's, Core Lightning's, Eclair's, Electrum, Monero's wallet. */
const WALLET_CLIENT = /^([a-z]*coin|dash|zcash|elements|liquid)-cli$|^(lncli|lightning-cli|eclair-cli|electrum|monero-wallet-cli)$/;
/** Their verbs that spend or pay, open, close or forget a channel, or print or import the wallet's private keys. */
const WALLET_SPEND =
  /^(send(toaddress|many|from|rawtransaction|coins|payment|pay|all|onion)?|withdraw|multiwithdraw|payto(many)?|pay|payinvoice|keysend|(fund|open|close|abandon|force-close)channel|closeallchannels|close|(dev-)?forget-channel|dumpprivkey|dumpwallet|getprivatekeys|importprivkey|sweep(_all|all)?|transfer)$/;
/** A regression-test or simulation chain, whose coins are made on demand. */
const TEST_CHAIN = /^(-?-regtest|-testnet|--network=(simnet|regtest))$/;
/**
 * A subcommand that reaches past the machine: publishing (`mkdocs gh-deploy` pushes the built site, a task
 * named for the package index alone, `invoke pypi`, uploads; `guarddog pypi scan` names an ecosystem), deploying, promoting a
 * release to its users' channel (`snapcraft promote`), logging in, destroying.
 */
const OUTWARD = /^(publish|deploy|gh-deploy|release|promote|upload|([a-z]+-)?login|destroy|push|(test)?pypi)$/;

/**
 * A code forge's objects (`gh pr`, `glab mr`, `tea issues`) and the verbs that create or change them
 * there, not here; starting a workflow or a pipeline (`gh workflow run`, `glab ci run`) runs its jobs there.
 */
const FORGE_OBJECT = /^(pr|mr|issues?|epic|sprint|gists?|releases?|repo|label|secret|variable|workflow|run|ci|deployments?)$/;
const FORGE_CHANGE =
  /^(create|new|merge|comment|review|edit|close|reopen|delete|upload|fork|archive|rename|set|enable|disable|cancel|rerun|run|approve|ready|lock|unlock|transfer|pin|unpin|finalize|set-commits|deploys)$/;

/** The word that holds option k's value: the option itself (`--cmd=x`) or the next word. */
const optionWord = (args: Word[], k: number): Word | undefined => (args[k]!.text.includes('=') ? args[k] : args[k + 1]);

/** A Windows-style switch with a value (`/p:Configuration=Debug`, `/verbosity:minimal`). */
const WINDOWS_SWITCH = /^\/[A-Za-z][\w-]*:/;
/** Windows' compilers and build tools, whose bare switches (`/nologo`, `/unsafe`, `/m`) start with a slash and name no file. */
const WINDOWS_TOOLCHAIN = /^(msbuild|csc|vbc|cl|link|lib|nuget|vstest\.console|devenv|rc|ml64?)(\.exe)?$/i;

/** A listening option with a port (`tgcd -L -p 9999`, `--listen --port=8000`): a server for the network. */
const LISTEN_OPTION = /^(-L|--listen)$/;
/** A client's options naming the server it reaches. */
const SERVER_OPTION = /^(-s|--server|--servers|--url|-H|--host|--endpoint|--broker)$/;
const EVERY_INTERFACE_URL = /^[a-z][\w+.-]*:\/\/(\[::\]|0\.0\.0\.0)?:\d+([/?,]|$)/i;
const PORT_GIVEN = (args: Word[]) =>
  args.some((a, k) => /^--port=\d+$/.test(a.text) || (/^(-p|--port)$/.test(a.text) && /^\d+$/.test(args[k + 1]?.text ?? '')));

/** FTP and TFTP servers by their daemon's name, and SMB servers made to share a directory at once (impacket's). */
const FILE_SERVER_DAEMON = /^(in\.)?[a-z-]*ftpd$|^(impacket-)?smbserver(\.py)?$/;
/** Remote-desktop servers: they let other machines see and drive this one's screen and keyboard. */
const REMOTE_DESKTOP_SERVER = /^(vncserver|tigervncserver|tightvncserver|x11vnc|Xvnc|xrdp|wayvnc)$/;
/**
 * Web and shared terminals and ssh servers (OpenSSH's, Dropbear): they serve a shell, or the program
 * they are given, to whoever reaches them.
 */
const SHARED_TERMINAL_SERVER = /^(gotty|ttyd|tty2web|wetty|shellinaboxd?|upterm|sshx|tmate|sshd|dropbear)(\.exe)?$/;
/** Java's object registries and ORB daemons: they listen on every interface for calls that load and run classes. */
const JAVA_OBJECT_SERVER = /^(rmiregistry|rmid|orbd|tnameserv)$/;

/**
 * The commands an unknown program is given through an option that takes one
 * (`--notifications-command "say 'ready'"`), when written out: those are read and judged as commands
 * of their own (executors.ts); one held in a variable or built at run time cannot be read.
 */
export function commandOptionValues(args: Word[]): Word[] {
  const out: Word[] = [];
  for (const [k, a] of args.entries()) {
    if (!a.text.startsWith('-') || !EXEC_OPTION.test(a.text)) continue;
    const v = optionValue(args, k);
    const w = optionWord(args, k);
    // A shell named bare to a shell-choosing option (`shellspec --shell bash`, `fnm env --shell zsh`) picks the
    // shell the program's own scripts or printed text are for; it hands nothing typed to it.
    if (v !== undefined && /^--?([\w-]+-)?shell(=|$)/.test(a.text) && SHELLS.has(v)) continue;
    if (v !== undefined && w && !w.expands) out.push({ ...w, text: v });
  }
  return out;
}

/**
 * Schema-migration tools' verbs that erase the database they migrate, every table and row, not one
 * migration rolled back: `dbmate drop`, golang-migrate's `drop`, `flyway clean`, Liquibase's `drop-all`,
 * `atlas schema clean`.
 */
const ERASES_DATABASE: Readonly<Record<string, RegExp>> = {
  dbmate: / drop /,
  migrate: / drop /,
  flyway: / clean /,
  liquibase: / (drop-all|dropAll) /,
  atlas: / schema clean /,
};

/**
 * A configure script's install prefix or dependency location given as the next word (`./configure
 * --prefix /usr/local`, apptainer's `./mconfig -p /usr/local`): it is recorded for a later install, not
 * written now, as with `--prefix=/usr/local`.
 */
const namesInstallPrefix = (prog: string, option = '') =>
  /^--(prefix|exec-prefix|with-[\w-]+)$/.test(option) || (/^(configure|mconfig)$/.test(prog) && option === '-p');

/** A delete verb whose every target is a named file of the workspace (`rm path/to/file`, `del notes.txt`). */
function deletesWorkspaceFiles(verb: Word, positional: Word[], st: State): boolean {
  const targets = positional.slice(positional.indexOf(verb) + 1);
  return (
    /^(rm|del|delete)$/.test(verb.text) &&
    targets.length > 0 &&
    targets.every((a) => /\/|\.\w+$/.test(a.text) && !a.text.includes(':') && classify(a.text, st).cls === 'inside')
  );
}

/** Whether an install prefix lies outside the workspace and the temporary directories (where a staged install goes). */
export function installsOutside(prefix: string, st: State): boolean {
  const c = classify(prefix, st);
  return (c.cls === 'outside' || c.cls === 'home' || c.cls === 'root') && !(c.abs && TEMP_DIRS.test(c.abs));
}

/** setuptools' and distutils' install places (`setup.py install --prefix=/srv/x`, `--install-scripts=/usr/bin`, `--root "$DESTDIR"`). */
const SETUPTOOLS_PLACE = /^--(prefix|exec-prefix|home|root|install-(base|platbase|lib|purelib|platlib|headers|scripts|data))(=|$)/;

/** The first install place outside the workspace among setuptools' options (`--prefix=/srv/x`, `--root /`), with its option. */
export function setuptoolsPlaceOutside(args: Word[], st: State): string | undefined {
  for (const [k, a] of args.entries()) {
    const place = SETUPTOOLS_PLACE.test(a.text) ? optionValue(args, k) : undefined;
    if (place === undefined) continue;
    // DESTDIR alone is empty unless a packager sets it, and the root is then the machine's own.
    const staging = /^"?\$(DESTDIR|\{DESTDIR\}|\(DESTDIR\))"?$/.test(place);
    if (staging || installsOutside(place, st)) return `${a.text.replace(/=.*/, '')} ${place}`;
  }
  return undefined;
}

const URL_PATH_OPTION = /^--[\w-]*(url|uri|endpoint|route)s?$/i;

/** `readsCommandOptions`: the caller judges the commands commandOptionValues reads, so only an unreadable one is flagged here. */
export function judgeUnknownProgram(prog: string, args: Word[], st: State, readsCommandOptions = false): void {
  st.repeatable = false;
  for (const [k, a] of args.entries()) {
    const t = a.text;
    // A configure script's or meson's settings (`--sysconfdir=/etc`, `--with-ca-bundle=/etc/ssl/…`) are recorded
    // for the build and a later install, where that install is judged; configuring touches none of them.
    if (/^(configure|mconfig|meson)$/.test(prog) && /^--[\w-]+=/.test(t)) {
      // The prefix is carried to the install that follows (`… && make install`), which writes there.
      const prefix = /^--prefix=(.+)$/.exec(t)?.[1];
      if (prefix !== undefined) st.installPrefix = { text: prefix, outside: installsOutside(prefix, st) };
      continue;
    }
    const value = t.startsWith('-') ? (t.includes('=') ? t.slice(t.indexOf('=') + 1) : '') : t;
    // A web path given to an option for one (`--health-endpoint /action/health`, `--server-base-url=/prefix/`, `--urls /home,/about`) names no file.
    const webPath = URL_PATH_OPTION.test(t.startsWith('-') ? t.replace(/=.*/, '') : (args[k - 1]?.text ?? ''));
    // A distinguished name (`-subj /CN=example.com/O=EL`, an empty one `-subj "/"`) starts with a slash but names no file, and
    // neither does a Windows-style switch (`/p:Configuration=Debug`, `/t:Build`, MSBuild's and dotnet's)
    // or an XPath with a test (`//activity/intent-filter/data[@android:scheme]`).
    // A quoted `~` (`--variant-level '~'`) is the character itself, which the shell leaves unexpanded.
    if (
      value &&
      !webPath &&
      !(a.literalTilde && value === t) &&
      (/^(\/|~|\$\{?HOME\b)/.test(value) ||
        (/^"?\$\(/.test(value) && MAKE_INSTALL_DIR.test(value)) ||
        (WINDOWS_PLACE.test(value) && !WINDOWS_SYSTEM_FILES.test(value))) &&
      !DIRECTORY_NODE.test(value) &&
      !/^\/[A-Za-z]+=/.test(value) &&
      !/^-(subj|subject)$/.test(args[k - 1]?.text ?? '') &&
      !/^\/\/[^\s]*\[@/.test(value) &&
      !WINDOWS_SWITCH.test(value) &&
      !(WINDOWS_TOOLCHAIN.test(prog) && /^\/[A-Za-z][\w-]*$/.test(value)) &&
      !(/^[cw]script(\.exe)?$/i.test(prog) && /^\/\/[A-Za-z]+(:\S*)?$/.test(value)) &&
      !choosesInstalledInterpreter(args, k, value)
    ) {
      const c = classify(value, st);
      // An option's value in an installed prefix configures a build against installed software
      // (`--with-libpsl=/opt/homebrew/opt/libpsl`); an operand there may be a file it writes.
      // So is a library or header prefix given as the next word (`qemu-arm -L /usr/arm-linux-gnueabihf/`).
      const previous = args[k - 1]?.text ?? '';
      const optionValue = /^(-L|-I|-isystem|--sysroot|--library-path|--include-dir)$/.test(previous);
      const installed = (t.startsWith('-') || optionValue || namesInstallPrefix(prog, previous)) && c.abs !== undefined && INSTALLED.test(c.abs);
      // A configuration file named by its option (`behat --config /var/www/behat.yml`) is read, not written; one in the home is the user's.
      const configRead = c.cls === 'outside' && (CONFIG_OPTION.test(previous) || CONFIG_OPTION.test(t.replace(/=.*/, '')));
      if (
        (c.cls === 'outside' || c.cls === 'home' || c.cls === 'root') &&
        !(c.abs && (HARMLESS_PLACE.test(c.abs) || TEMP_DIRS.test(c.abs))) &&
        !installed &&
        !configRead
      )
        return danger(st, `gives ${prog}, which no table names, a path outside the workspace (${value})`);
    }
    if (REMOTE_FILE_URL.test(value)) return danger(st, `gives ${prog}, which no table names, a file on another host (${value})`);
    if (SERVICE_URL.test(value)) return danger(st, `gives ${prog}, which no table names, a directory or mail service on another host (${value})`);
    if (CREDENTIAL_URL.test(value)) return danger(st, `logs in to another host with a password written in the command (${prog})`);
    if (!t.startsWith('-') && REMOTE.test(t) && !VERSIONED_NAME.test(t) && !MAIL_ADDRESS.test(t) && !/^-/.test(args[k - 1]?.text ?? ''))
      return danger(st, `gives ${prog}, which no table names, another host (${t})`);
    if (t.startsWith('-') && EXEC_OPTION.test(t)) {
      const v = optionValue(args, k);
      if (v !== undefined && !(readsCommandOptions && !optionWord(args, k)?.expands))
        return danger(st, `gives ${prog}, which no table names, a command to run (${t.replace(/=.*/, '')})`);
    }
    if (SHELL_VALUE.test(value)) return danger(st, `gives ${prog}, which no table names, a shell (${value})`);
  }
  // A daemon named for serving files by FTP, TFTP or SMB (ptftpd, in.tftpd, vsftpd, pure-ftpd,
  // impacket-smbserver) offers a directory to the network, whatever directory or interface it is given.
  if (FILE_SERVER_DAEMON.test(prog) && !onlyAsksAbout(args)) return danger(st, `runs a file-transfer server (${prog})`);
  if (REMOTE_DESKTOP_SERVER.test(prog) && !onlyAsksAbout(args) && !args.some((a) => /^-(kill|list)$/.test(a.text)))
    return danger(st, `runs a remote-desktop server that lets other machines see and drive this one (${prog})`);
  // `sshd -t`/`-T` test and print a configuration and serve nothing; past `--` the words are the program served.
  const served = args.findIndex((a) => a.text === '--');
  const ownOptions = served < 0 ? args : args.slice(0, served);
  if (SHARED_TERMINAL_SERVER.test(prog) && !onlyAsksAbout(args) && !ownOptions.some((a) => /^-[tT]$/.test(a.text)))
    return danger(st, `serves a terminal to the network, where others type commands that run here (${prog})`);
  if (JAVA_OBJECT_SERVER.test(prog) && !onlyAsksAbout(args))
    return danger(st, `serves Java's remote objects on every interface, where callers load and run classes (${prog})`);
  // Windows' logon process named as what to dump (`procdump.exe -ma lsass.exe lsass.dmp`, `$lsass_pid`): its memory holds the logged-on users' credentials.
  const lsass = /^(findstr|find|grep|select-string|tasklist|get-process|echo|where)(\.exe)?$/i.test(prog)
    ? undefined
    : args.find((a) => /^(lsass(\.exe)?|\$\{?lsass_pid\}?)$/i.test(a.text));
  if (lsass) return danger(st, `dumps the memory of Windows' logon process, the users' credentials (${prog} ${lsass.text})`);
  if (SHELL_HANDOFF_NAME.test(prog) && !onlyAsksAbout(args)) return danger(st, `runs a program named for a reverse or bind shell or its relay (${prog})`);
  const implant = implantRun(prog, args);
  if (implant) return danger(st, implant);
  if (DEBUG_SERVER.test(prog) && args.some((a) => EVERY_INTERFACE_PORT.test(a.text.replace(/^--listen=/, ''))))
    return danger(st, `serves a debugger on every network interface, which runs code for whoever connects (${prog})`);
  // A VNC server's password set for this user (`vncpasswd` writes ~/.vnc/passwd); `-f` only turns its input into the file's form on the output.
  if (/^(tiger|tight)?vncpasswd$/.test(prog) && !onlyAsksAbout(args) && !args.some((a) => a.text === '-f'))
    return danger(st, `sets the password of this user's VNC server, in the home (${prog})`);
  // VLC's web interface (`--extraintf http`, `-I http`) takes commands from the network on its port.
  if (prog === 'vlc' && args.some((a, k) => /^(http|--extraintf=http|-Ihttp)$/.test(a.text) && /^(--extraintf|-I|--intf)$/.test(args[k - 1]?.text ?? a.text)))
    return danger(st, `runs VLC's web interface, which takes commands from the network (${prog})`);
  // ftp's and tftp's sessions are judged by what they are told to do (dangerous.ts: a here-document
  // that only fetches stays a download).
  // Given a capture file (`netflows capture.pcap --source-ip 192.168.1.100`), an address picks out its packets.
  const readsCapture = args.some((a) => /\.(pcap|pcapng)$/i.test(a.text));
  const address = /^(ftp|tftp)$/.test(prog) || readsCapture ? undefined : (addressGiven(args) ?? bareHostGiven(prog, args));
  if (address) return danger(st, `gives ${prog}, which no table names, another machine's address (${address})`);
  // A brute-force mode or verb (`mssqlpwner hosts.txt brute -ul users.txt`, `-mode bruteforce`) guesses logins or paths.
  const brute = args.find((a) => BRUTE_FORCE.test(a.text));
  if (brute) danger(st, `guesses logins, passwords or paths by brute force (${prog} ${brute.text})`);
  const login = directoryLogin(prog, args) ?? databaseLogin(prog, args) ?? signsInOrTargets(prog, args);
  if (login) return danger(st, login);
  // A tool made only to probe, enumerate or log in to other machines reaches them whatever names the
  // targets: an address, a host name, or a file of hosts (`onesixtyone -c dict.txt -i hosts`); pointed
  // at this machine's loopback it probes no other.
  const remote = remoteToolRun(prog, args);
  if (remote) return danger(st, remote);
  const server = serverNamed(prog, args);
  if (server) return danger(st, server);
  if (args.some((a) => LISTEN_OPTION.test(a.text)) && PORT_GIVEN(args)) return danger(st, `listens on a port for connections from the network (${prog})`);
  // A URL with no host, or the any-address, and a port (`wss://[::]:8080`, `sflow://:6343`, `tcp://0.0.0.0:10400`) is where a server listens: on every interface.
  // A GStreamer pipeline that receives from the network: udpsrc binds every interface unless given a loopback address.
  if (/^gst-launch(-[\d.]+)?$/.test(prog) && args.some((a) => a.text === 'udpsrc') && !args.some((a) => /^address=(127\.|localhost|::1)/.test(a.text)))
    return danger(st, `listens on every network interface for what arrives (${prog} udpsrc)`);
  // The URL may be an option's or a property's value (`--listen=tcp://0.0.0.0:9000`, GStreamer's `uri=srt://:8888`).
  // Given to a client as the server to reach (`nats pub x -s nats://0.0.0.0:4222`), the any-address is this machine: it connects, not listens.
  const everywhere = args.find(
    (a, k) =>
      !SERVER_OPTION.test(args[k - 1]?.text ?? '') &&
      !SERVER_OPTION.test(a.text.replace(/=.*$/, '')) &&
      EVERY_INTERFACE_URL.test(a.text.replace(/^(-{1,2}[\w-]+|[a-z][\w.-]*)=/, '').replace(/^['"]|['"]$/g, '')),
  );
  if (everywhere) return danger(st, `listens on every network interface (${prog} ${everywhere.text})`);
  const positional = args.filter((a) => !a.text.startsWith('-'));
  const [sub, verb] = positional;
  // A build script's `release` is the build's mode (`./build_odin.sh release`), as is an option's
  // (`meson --buildtype release`), not a release made.
  const buildMode =
    sub?.text === 'release' &&
    (/^(build|compile|make)([-_.]|$)/.test(prog) ||
      /^--?[\w-]*(type|mode|profile|config|configuration|variant)$/.test(args[args.indexOf(sub) - 1]?.text ?? ''));
  // Elixir's `mix release` assembles the release in `_build`; melos' `publish` only lists what it would
  // publish unless told `--no-dry-run`; a version bumper's `release` is the part of the version it bumps, in the project's files;
  // go-appimage's `appimagetool deploy` bundles an AppDir's libraries into it.
  const staysHere =
    (prog === 'mix' && sub?.text === 'release') ||
    (prog === 'melos' && sub?.text === 'publish' && !args.some((a) => /^--no-dry-run$/.test(a.text))) ||
    (/^appimagetool/i.test(prog) && sub?.text === 'deploy') ||
    /^(bump2?version|bump-my-version)$/.test(prog);
  // A push to a registry on this machine (`bee push localhost:5000/x`) goes nowhere past it.
  const toThisMachine = verb !== undefined && THIS_MACHINE_REGISTRY.test(verb.text);
  // A login's topic commands (`firebase login:ci`, `login:add`, `login:use`) log in or switch the stored account; listing them reads.
  const loginTopic = sub !== undefined && /^login:(?!list$)\w/.test(sub.text);
  // A cloud project's stored secrets by topic (`firebase functions:secrets:set KEY`, `…:secrets:access`): set or removed, or printed.
  const secretTopic = sub === undefined ? null : /(^|:)secrets?:(\w+)$/.exec(sub.text);
  if (secretTopic && /^(access|get|show|reveal|describe|view|export)$/.test(secretTopic[2]!))
    return danger(st, `reads a secret stored in a cloud project (${prog} ${sub!.text})`);
  if (secretTopic && /^(set|add|create|put|update|delete|destroy|prune|unset|rm|remove)$/.test(secretTopic[2]!))
    return danger(st, `changes a secret stored in a cloud project (${prog} ${sub!.text})`);
  // Patch stacks' `push` and `pop` (quilt, StGit, guilt) apply and unapply patches in the working tree.
  const patchStack = /^(quilt|stg|guilt)$/.test(prog) && /^(push|pop)$/.test(sub?.text ?? '');
  if (
    sub &&
    ((OUTWARD.test(sub.text) && !(/pypi$/.test(sub.text) && verb !== undefined)) || loginTopic) &&
    !buildMode &&
    !staysHere &&
    !toThisMachine &&
    !patchStack &&
    // A release's or a deployment's listing (`gh release view`, `r10k deploy display`) reads what is out there.
    !(/^(release|deploy)$/.test(sub.text) && /^(view|show|list|ls|display|status|verify|verify-asset|download)$/.test(verb?.text ?? '')) &&
    !args.some((a) => /^(--dry-run|-h|--help)$/.test(a.text))
  )
    return danger(st, `${prog} ${sub.text} reaches past this machine`);
  // An object deployed or published (`solana program deploy`, `wrangler pages deploy`) goes out as the verb alone would.
  if (
    sub &&
    verb &&
    /^(deploy|publish|upload|push)$/.test(verb.text) &&
    !args[args.indexOf(verb) - 1]?.text.startsWith('-') &&
    !args.some((a) => a.text === '--dry-run')
  )
    return danger(st, `${prog} ${sub.text} ${verb.text} reaches past this machine`);
  if (sub && verb && FORGE_OBJECT.test(sub.text) && FORGE_CHANGE.test(verb.text)) danger(st, `${prog} ${sub.text} ${verb.text} reaches past this machine`);
  // A login under an auth topic (`speakeasy auth login`, `tool auth login --token …`) signs in with the user's account and
  // keeps its token, as a bare `login` does.
  if (sub?.text === 'auth' && verb?.text === 'login' && !onlyAsksAbout(args)) danger(st, `${prog} auth login signs in with the user's account`);
  // A scan, a fuzz or an attack aimed at another host's URL (`pit scan run http://api.example.com`, `ronin-vulns scan "http://…"`)
  // probes that site; one at this machine's own service tests the project, and a URL an option names (`--rpc-url`) is where it reads.
  const probed =
    sub && /^(scan|fuzz|attack|exploit)$/.test(sub.text)
      ? args.find((o, k) => k > 0 && !args[k - 1]!.text.startsWith('-') && /^https?:\/\//.test(o.text) && !namesThisMachine(o.text))
      : undefined;
  if (probed && !onlyAsksAbout(args)) danger(st, `${prog} ${sub!.text} probes another host's site (${probed.text})`);
  // An issue tracker's issues, epics and sprints assigned, moved, linked, cloned or logged against (`jira issue move ISSUE-1 Done`);
  // apart from FORGE_CHANGE, where a repository's `clone` is a download.
  if (sub && verb && /^(issues?|epic|sprint)$/.test(sub.text) && /^(assign|move|link|unlink|clone|transition|add|remove|worklog)$/.test(verb.text))
    danger(st, `${prog} ${sub.text} ${verb.text} reaches past this machine`);
  // A deployed app's environment set or removed (`cf set-env APP NAME VALUE`, `heroku config:set`): it changes there.
  if (sub && /^(set-env|unset-env|config:set|config:unset|env:set|env:unset)$/.test(sub.text) && !onlyAsksAbout(args))
    return danger(st, `${prog} ${sub.text} changes a deployed app's environment`);
  // A deployed service's secrets set or removed (`apify secrets add KEY VALUE`, a platform CLI's `secret put NAME`): they change there.
  if (sub && verb && /^secrets?$/.test(sub.text) && /^(put|set|add|create|update|delete|rm|remove|bulk)$/.test(verb.text) && !onlyAsksAbout(args))
    return danger(st, `${prog} ${sub.text} ${verb.text} changes a deployed service's secrets`);
  // A verb that says the run is an attack (`bees attack -u http://…`, `flood`, `spray`, `bruteforce`).
  if (sub && /^(attack|attackStream|flood|spray|bruteforce|brute)$/.test(sub.text) && !onlyAsksAbout(args))
    return danger(st, `${prog} ${sub.text}: a program no table names, told to attack`);
  // A list of accounts given by an option beside a password or a list of them (`-u users.txt -p 'Summer2023#'`,
  // `-ul user_list.txt -p …`), a list of passwords beside an account (`-u admin -pl pass_list.txt`), or a list of
  // both (`-up userpass_list.txt`): each account is tried with each password, a spray or a brute force.
  const listed = (list: RegExp) => args.find((a, k) => list.test(a.text.replace(/^.*\//, '')) && /^--?[\w-]+$/.test(args[k - 1]?.text ?? ''));
  const accounts = listed(ACCOUNT_LIST);
  const passwords = listed(PASSWORD_LIST);
  const guessed =
    listed(ACCOUNT_PASSWORD_LIST) ??
    (accounts && args.some((a) => PASSWORD_OPTION.test(a.text) || TRIED_PASSWORDS_OPTION.test(a.text)) ? accounts : undefined) ??
    (passwords && (accounts || args.some((a) => USER_OPTION.test(a.text))) ? passwords : undefined);
  if (guessed && !onlyAsksAbout(args)) return danger(st, `${prog}: tries passwords against accounts, listed in ${guessed.text}`);
  // Told by its first or second word to delete, destroy, wipe, kill, shut down, push, upload, send,
  // grant, unlock, flash or erase (`s5cmd rm s3://…`, `tkn bundle push …`, `rbw unlock`), a program no
  // table names changes or sends what only a table could show is its own; deleting named files of the
  // workspace (`fileicon rm path/to/file`) is the workspace's.
  // Told by an option to wipe or shred (`cleaner.py --wipe-all`), unless only to show what it would.
  // Told by an option to push what it made (`mike set-default --push latest` pushes the docs' branch).
  const pushes = args.find((a) => a.text === '--push');
  if (pushes && !args.some((a) => /^(--dry-run|-n|-h|--help)$/.test(a.text))) danger(st, `${prog} --push: a program no table names, told to push what it made`);
  // A blockchain node's client told to make a transaction from a key (`junod tx wasm execute … --from $KEY`, Cosmos SDK's
  // and its chains' CLIs) signs it with that key and broadcasts it to the chain, where it spends and cannot be taken back.
  if (sub?.text === 'tx' && args.some((a) => /^--from(=|$)/.test(a.text)) && !args.some((a) => /^(--generate-only|--dry-run)$/.test(a.text)))
    danger(st, `${prog} tx: signs a transaction with a key and broadcasts it to the chain`);
  // A wallet's or a payment-channel node's client told to spend, pay, open, close or forget a channel, or to hand out the
  // wallet's keys (`bitcoin-cli sendtoaddress …`, `lightning-cli withdraw $ADDR all`, `lncli payinvoice …`): value leaves
  // the wallet and cannot be taken back. A regression-test chain (`-regtest`, `--network=simnet`) holds nothing of value.
  if (WALLET_CLIENT.test(prog) && sub && WALLET_SPEND.test(sub.text) && !onlyAsksAbout(args) && !args.some((a) => TEST_CHAIN.test(a.text)))
    danger(st, `${prog} ${sub.text}: moves a wallet's funds or channels, or hands out its keys`);
  // HDFS's name node formatted (`hdfs namenode -format`): the cluster's whole file system is emptied.
  if (/^(hdfs|hadoop)$/.test(prog) && sub?.text === 'namenode' && args.some((a) => a.text === '-format'))
    danger(st, `${prog} namenode -format: empties the cluster's file system`);
  const wipes = args.find((a) => /^--(wipe|shred|secure-delete|erase-all|destroy-all)([-_][\w-]+)?$/.test(a.text));
  if (wipes && !args.some((a) => /^(--dry-run|-n|--list|--show)$/.test(a.text)))
    danger(st, `${prog} ${wipes.text}: a program no table names, told to wipe or shred what it finds`);
  const told = [sub, verb].find((w) => w !== undefined && DESTRUCTIVE_OR_OUTWARD_VERB.test(w.text));
  // coverage.py's `erase` deletes its own data file in the current directory (`coverage3` is the same program for Python 3).
  const erasesCoverageData = /^coverage(\d(\.\d+)?)?$/.test(prog) && told?.text === 'erase';
  // A dry run (`bashbrew push --dry-run`) only shows what it would send.
  const rehearses = args.some((a) => a.text === '--dry-run');
  if (told && !onlyAsksAbout(args) && !rehearses && !toThisMachine && !patchStack && !erasesCoverageData && !deletesWorkspaceFiles(told, positional, st))
    danger(st, `${prog} ${told.text}: a program no table names, told to delete, send or change what lies past the workspace`);
  // A service's objects deleted by name (`prefect work-pool delete pool`), cloud resources made for
  // it (`--provision-infra`), or its database erased without the question it would ask.
  if (sub && verb && /^(delete|destroy)$/.test(verb.text) && !rehearses)
    danger(st, `deletes ${prog}'s ${sub.text} where the service keeps it (${prog} ${sub.text} ${verb.text})`);
  // A program registered as one of the machine's services, or removed as one (`pgbouncer -regservice`, `--install-service`).
  const service = args.find((a) => /^--?(reg|unreg|register|unregister|install|uninstall|remove)-?service$/i.test(a.text));
  if (service) danger(st, `registers or removes a service of the machine (${prog} ${service.text})`);
  const provision = args.find((a) => /^--provision(-[\w-]+)?$/.test(a.text));
  if (provision) danger(st, `provisions cloud infrastructure (${prog} ${provision.text})`);
  const words = positional.map((a) => a.text);
  const eraser = Object.hasOwn(ERASES_DATABASE, prog) ? ERASES_DATABASE[prog] : undefined;
  // The verb follows the options' values (`dbmate -e TEST_DATABASE_URL drop`).
  if (eraser?.test(` ${words.join(' ')} `)) return danger(st, `drops or empties the whole database the migrations run on (${prog} ${words.join(' ')})`);
  if (
    words.some((w) => /^(db|database)$/.test(w)) &&
    words.some((w) => /^(reset|drop|wipe|purge)$/.test(w)) &&
    args.some((a) => /^(-y|--yes|-f|--force)$/.test(a.text))
  )
    danger(st, `erases ${prog}'s database without asking (${words.join(' ')})`);
  // A PHP application's console told to drop its database (`n98-magerun2.phar db:drop`, `bin/console doctrine:database:drop`):
  // the shop's or the application's configured database goes, where the task runners of rails, rake or sequelize keep to development's.
  const dropsDatabase = /console|magerun/i.test(prog) ? words.find((w) => /^([\w-]+:)?(db|database):(drop|wipe)$/.test(w)) : undefined;
  if (dropsDatabase) danger(st, `drops ${prog}'s configured database (${dropsDatabase})`);
  const crawled = st.reasons.length ? undefined : crawlTargetNamed(prog, args);
  if (crawled) danger(st, crawled);
}
