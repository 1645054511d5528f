// Secrets by name and by place: the credential files and directories of the worker and its user,
// the worker's own variables (the names the sandbox never passes to a command, src/sandbox/policy.ts)
// and variables whose name says they hold a credential, and the commands that print a credential.
// Reading one is dangerous wherever the text does it: in an argument, in a redirection, inside the
// value of an option (`if=`, `file:`, `@file`) or inside inline code.
import type { Word } from './shell-lex.js';

/**
 * Places whose reading is itself the harm. The sandbox hides the same ones (src/sandbox/bwrap.ts):
 * /etc's secret files and directories (certbot's site keys in /etc/letsencrypt among them), the homes, /run, agentrun's state; in a home, the
 * credential stores of ssh, cloud and package tools, shell histories and ~/.config. And macOS's,
 * where no sandbox runs: the local accounts' password hashes (/var/db/dslocal), the key that
 * unlocks the System keychain (/var/db/SystemKey), the keychains themselves, Kerberos' keytab.
 */
const SECRET_PLACE = new RegExp(
  [
    String.raw`/proc/[^/\s'"]+/(environ|root|mem|cwd|fd|maps|cmdline)`,
    String.raw`/etc/(master\.passwd|spwd\.db|sudoers(\.d)?|ssh|agentrun|ssl/private|letsencrypt|postgresql|kubernetes|security/opasswd|NetworkManager/system-connections|wpa_supplicant)`,
    // Every user's mail, root's included (cron's output, password resets).
    String.raw`/var/(spool/)?mail`,
    String.raw`/(var/)?run/secrets`,
    // A directory of secrets mounted or kept outside the workspace (`/var/secrets/db-password`, `/mnt/secrets-store`).
    String.raw`/(var|mnt|etc|opt|srv)/secrets?(-store)?`,
    String.raw`/var/lib/agentrun`,
    // A node's credentials to its cluster: the kubelet's kubeconfig, certificates and pods' mounted
    // secrets, k3s' admin kubeconfig and join token.
    String.raw`/var/lib/kubelet`,
    // etcd's data: every object of the cluster, its Secrets and service-account tokens among them,
    // unencrypted unless encryption at rest was set up.
    String.raw`/var/lib/etcd`,
    // Vault's storage: every secret it holds, and the keyring and unseal keys that open them.
    String.raw`/(opt/vault|var/lib/vault|vault)/(data|file)`,
    // A database server's data directory: its users' password hashes (MySQL's mysql.user, PostgreSQL's
    // pg_authid) and every row of every database, read around the server's own access checks.
    String.raw`/var/lib/(mysql|mariadb|postgresql|pgsql)`,
    String.raw`/etc/rancher/k3s`,
    // sudo's timestamp records: which terminals and sessions may run sudo without a password now.
    String.raw`/(var/)?run/sudo/ts`,
    String.raw`/var/lib/rancher/k3s/server/(token|node-token|cred|tls)`,
    String.raw`/var/db/(dslocal|SystemKey|krb5kdc)`,
    String.raw`Library/Keychains`,
    String.raw`/etc/krb5\.keytab`,
    // usbmon's captures: every USB device's traffic, a keyboard's keystrokes among it.
    String.raw`/dev/usbmon\d*|/sys/kernel/debug/usb/usbmon`,
    // Debian's MySQL maintenance account, a password that logs in as the server's administrator.
    String.raw`/etc/mysql/debian\.cnf`,
    // A copy of the machine's password hashes kept under their own name (`cat /tmp/shadow`, `vim shadow`); a directory of that name
    // is none, nor an option's value (`-Wno-error=shadow`, the compiler's warning).
    String.raw`(?<![=:@,(])g?shadow(\.bak|-)?(?!/)`,
    // Kerberos credentials wherever they lie: a ticket cache by its default name (`/tmp/krb5cc_1000`,
    // `krb5cc_647401106_I8I133`), a saved ticket (`administrator.ccache`, impacket's) and a keytab
    // (`carlos.keytab`): each logs in as its principal without a password. Kerberos' settings
    // (`/etc/krb5.conf`) and the compiler cache (`~/.ccache`, ccache's) are no credential.
    String.raw`krb5cc_[^\s'"/]+`,
    String.raw`[^\s'"/.][^\s'"/]*\.(ccache|keytab)`,
    // The cloud instance's metadata service hands out the instance role's credentials and the user
    // data (often holding secrets) to whoever asks by address: AWS's and Azure's link-local address
    // and its IPv6 form, ECS's task credentials, GCE's metadata host.
    String.raw`(169\.254\.169\.254|169\.254\.170\.2|\[?fd00:ec2::254\]?|metadata\.google\.internal|metadata\.goog)(:\d+)?`,
    // GCE's metadata server by its short name, as instances resolve it (`http://metadata/computeMetadata/v1/…`),
    // and Azure's metadata paths on any host (`http://169.254/metadata/identity/oauth2/token`, an address shortened).
    String.raw`metadata/computeMetadata`,
    String.raw`/metadata/(instance|identity|attested|scheduledevents)`,
    // The instance role's credentials by their path on any metadata host (a proxy's, a mock's, a name
    // resolving to the link-local address): `/latest/meta-data/iam/security-credentials/ROLE`.
    String.raw`/latest/meta-data/iam/security-credentials`,
    // Azure's managed identity endpoint (App Service, Functions, Container Apps, Arc, Cloud Shell)
    // is given by variables, not an address: a request to it returns the identity's token.
    String.raw`\$\{?(IDENTITY_ENDPOINT|MSI_ENDPOINT|IDENTITY_HEADER|MSI_SECRET|IMDS_ENDPOINT)\}?[^\s'"]*`,
    // The machine's memory, every process's secrets in it.
    String.raw`/dev/(mem|kmem)`,
    // Browsers' saved passwords, cookies and the key that decrypts them (Chromium's `Login Data`, `Web
    // Data` and `Cookies` beside `Local State`; Firefox's logins.json, key4.db and cookies.sqlite, and
    // its web storage, webappsstore.sqlite, where sites keep their login tokens).
    String.raw`(Login Data|Web Data|Local State|logins\.json|key[34]\.db|signons\.sqlite|cookies\.sqlite|webappsstore\.sqlite)`,
    // The same stores copied out under a browser's name (`ChromeCookies.db`, `EdgePasswords.db`), as cookie and password stealers leave them.
    String.raw`(Chrome|Edge|Brave|Firefox|Opera|Chromium|Vivaldi)(Cookies|Passwords|Logins|LoginData)\.(db|sqlite)`,
    String.raw`/proc/kcore`,
    // A cryptocurrency wallet (Bitcoin Core's and its forks' wallet.dat) holds the keys that spend its
    // funds, and Core Lightning's hsm_secret the node's master key, from which every channel's are made;
    // a KeePass database (`*.kdbx`) holds every password its owner keeps.
    String.raw`wallet\.dat`,
    String.raw`hsm_secret`,
    // Tomcat's users and their passwords for the manager application, which deploys code.
    String.raw`tomcat-users\.xml`,
    String.raw`[^\s'"/]+\.kdbx`,
    // A project's own `.docker/` directory of Dockerfiles (`-f .docker/Dockerfile-build`) is no client's settings; the home's
    // (`~/.docker/`, `/root/.docker/`) and any `.docker/config.json` hold registry logins; `./.docker/` is the project's.
    String.raw`\.(ssh|aws|gnupg|kube|docker(?<=(?:^|[^.])\/\.docker)|docker(?=\/config\.json|$|[\s'")])|azure|gcloud|netrc|git-credentials|npmrc|pypirc|pgpass|my\.cnf|vault-token|password-store|[\w*?-]*_history|histfile|zhistory|mylogin\.cnf|mysqlrc|gitconfig|config/gh|terraform\.d|gem/credentials|cargo/credentials(\.toml)?|m2/settings\.xml|gradle/gradle\.properties|erlang\.cookie|htpasswd)`,
  ]
    // A glob after the name (`/etc/sudoers*`, `~/.ssh*`) names the place and its kin.
    .map((p) => String.raw`(^|[\s/=:@<'"(,])${p.startsWith('/') ? p.slice(1) : p}(?=$|[/\s'")*?[])`)
    .join('|'),
);
/**
 * Windows' stores of account hashes and secrets, written with either slash, after a drive or a shadow
 * copy's name (`C:\Windows\System32\config\SAM`, `/mnt/c/Windows/System32/config/SYSTEM`), or with the
 * backslashes the shell took out of an unquoted word (`$ShadowCopyName\Windows\NTDS\NTDS.dit`): the registry
 * hives by their files or their keys (`reg save HKLM\SAM`), and a domain's database (`NTDS.dit`, a copy of it too).
 */
const WINDOWS_ACCOUNT_STORE =
  /([Ww]indows[/\\]*[Ss]ystem32[/\\]*config[/\\]*|(HKLM|HKEY_LOCAL_MACHINE)[/\\]*)(SAM|SYSTEM|SECURITY)(?=$|[/\\\s'")*?.])|[Nn][Tt][Dd][Ss]\.[Dd][Ii][Tt](?=$|[/\\\s'")*?.])/;
/** A home's ~/.config (tokens of gh, gcloud, pip, …); a workspace's own `.config/` is no secret. */
const HOME_CONFIG = /(^|[\s=:@<'"(,])(~|\$\{?HOME\}?|\/root|\/home\/[^/\s]+)\/\.config(\/|$|[\s'")])/;
/**
 * A file in a home named for what it holds (`$HOME/secret.txt`, `~/passwords.csv`, `/root/token`,
 * `~/keys/private_key.pem`): its name says it is a credential, wherever in the home it lies.
 */
const HOME_SECRET_FILE =
  /(^|[\s=:@<'"(,])(~|\$\{?HOME\}?|\/root|\/home\/[^/\s]+)\/([^\s'"]*\/)?[^/\s'"]*(secret|passw(or)?d|credential|token|private[-_]?key|api[-_]?key)[^/\s'"]*(?=$|[\s'")])/i;
/**
 * A file among the machine's settings and services' data named for a credential
 * (`/etc/systemd/gs-root-shell-key.txt`, `/opt/app/secret.yaml`, `/var/lib/app/token`); /etc/passwd
 * is public, its name no secret.
 */
const SYSTEM_SECRET_FILE =
  /(^|[\s=:@<'"(,])\/(etc|opt|srv|var\/lib|usr\/local\/etc)\/(?!pam\.d\/)([^\s'"]*\/)?[^/\s'"]*(secret|password|credential|token(?!iz)|private[-_]?key|api[-_]?key|[-_.]key(\.txt)?$|[-_.]key(\.txt)?(?=[\s'")]))[^/\s'"]*(?=$|[\s'")])/i;
/**
 * A served web application's settings outside the workspace, which hold its database's password and
 * its secret keys (WordPress' wp-config.php, Drupal's settings.php, Joomla's configuration.php,
 * MediaWiki's LocalSettings.php, phpMyAdmin's config.inc.php, Django's settings.py, a hand-written site's
 * config.php or db_config.php) and a site's .htpasswd.
 */
const WEB_APP_SECRET_FILE =
  /(^|[\s=:@<'"(,])\/(var\/www|srv|opt|usr\/share\/nginx|home\/[^/\s]+\/public_html)\/([^\s'"]*\/)?(wp-config\.php|settings\.php|configuration\.php|LocalSettings\.php|config\.inc\.php|(db[-_]?)?config\.php|db\.php|database\.php|db[-_]?conn(ect(ion)?)?\.php|\.htpasswd|settings\.py|local_settings\.py)(?=$|[\s'")])/;
/** Paths under a home directory or /root, whatever the file; Homebrew's Linux prefix lives under a home of its own but is the machine's installed software. */
const HOME_PATH = /(^|[\s=:@<'"(,])(\/root|\/home\/(?!linuxbrew\/\.linuxbrew(\/|$))[^/\s]+\/\.[^/\s]+)(\/|$)/;

/**
 * What ssh keeps that is no secret: a public key (`~/.ssh/id_ed25519.pub`, a host's
 * `/etc/ssh/ssh_host_ed25519_key.pub`) and the client's and the server's system-wide settings
 * (`/etc/ssh/ssh_config`, `/etc/ssh/sshd_config` and their `.d` directories; writing them is judged
 * as a write outside the workspace). Private keys, `~/.ssh/config` (it names the keys) and sshd's host keys
 * stay secret.
 */
const PUBLIC_SSH = /(\.ssh\/[^\s'"/]+\.pub|\/etc\/ssh\/(sshd?_config(\.d(\/[^\s'"/]+)?)?|[^\s'"/]+\.pub))(?=$|[\s'")])/g;

/**
 * A browser's profile directory, by either slash (`AppData\Roaming\Mozilla\Firefox\Profiles\…`,
 * `~/.mozilla/firefox/…`, `Google/Chrome/User Data`): its cookies, saved logins and extensions' storage,
 * where sites and password managers keep their tokens.
 */
const BROWSER_PROFILE =
  /(Mozilla[/\\]+Firefox[/\\]+Profiles|\.mozilla[/\\]+firefox|(Google[/\\]+Chrome|Microsoft[/\\]+Edge|BraveSoftware[/\\]+Brave-Browser|Chromium)[/\\]+User Data)(?=$|[/\\\s'")*?])/i;

/** PowerShell's command history (PSReadLine's `ConsoleHost_history.txt`), wherever it lies: the commands typed, passwords among them. */
const POWERSHELL_HISTORY = /ConsoleHost_history\.txt(?=$|[\s'")])/i;

/** Whether `text` (a word, an option's value, a line of inline code) names a secret place. */
export function namesSecretPlace(text: string): boolean {
  const t = text.replace(PUBLIC_SSH, ' ');
  return (
    SECRET_PLACE.test(t) ||
    HOME_CONFIG.test(t) ||
    HOME_SECRET_FILE.test(t) ||
    WEB_APP_SECRET_FILE.test(t) ||
    SYSTEM_SECRET_FILE.test(t) ||
    WINDOWS_ACCOUNT_STORE.test(t) ||
    BROWSER_PROFILE.test(t) ||
    POWERSHELL_HISTORY.test(t) ||
    (t.startsWith('~') && SECRET_PLACE.test(t.slice(1)))
  );
}

/** Whether `text` names a path in another user's home or /root (outside any workspace under them). */
export const namesHomePath = (text: string) => HOME_PATH.test(text);

/**
 * The worker's own variables, never passed to commands (src/sandbox/policy.ts, NEVER_PASSED), a CI job's
 * whole GitHub context (its token among its fields), and names whose parts say they hold a credential
 * (`GITHUB_TOKEN`, `AWS_SECRET_ACCESS_KEY`). Of the PG names the sandbox hides, those libpq connects
 * with; a script's own `PGVERSION` or `PGDATA` holds a version or a directory.
 */
const WORKER_VARIABLE =
  /^(OPENAI_API_KEY|DATABASE_URL|PG(HOST|HOSTADDR|PORT|DATABASE|USER|PASSWORD|PASSFILE|SERVICE|SERVICEFILE|OPTIONS|SSL[A-Z]*|GSSENCMODE|REQUIREAUTH|CHANNELBINDING|KRBSRVNAME|TARGETSESSIONATTRS|APPNAME)|TEMPORAL_\w*|AGENTRUN_\w*|GITHUB_CONTEXT)$/;
const CREDENTIAL_PART =
  /^(KEY|KEYS|APIKEY|TOKEN|TOKENS|SECRET|SECRETS|PASSWORD|PASSWD|PASS|PASSPHRASE|CREDENTIAL|CREDENTIALS|AUTH|COOKIE|PRIVATE|PRIKEY|PRIVKEY|PAT|KEYSTORE|P12|PFX|JWT)$/;
/**
 * A certificate's file held in a variable (`SIGNING_CERTIFICATE_BASE64`, `CERT_B64`): CI stores a
 * signing identity so, a PKCS#12 bundle with its private key (as KEYSTORE, P12 and PFX hold one), and so
 * under a name that ends in the certificate itself (`MACOS_CERTIFICATE`, `CERTIFICATES_P12`); a certificate's
 * path or name (`CA_CERTIFICATE_PATH`) is not its content, nor is a bare `CERT`, which scripts keep paths in.
 */
const CERTIFICATE_CONTENT = /(^|_)(CERTIFICATE|CERT)_(BASE64|B64)(_|$)|(^|_)CERTIFICATES?(_P12)?$/;

/**
 * A KEY that follows the name of what it indexes (`cache_key`, `SORT_KEY`, `partition_key`,
 * `OBJECT_KEY`) is a lookup key, a name for an entry, not a secret; `API_KEY` and `PRIVATE_KEY`
 * (PRIVATE is itself a credential part) stay credentials.
 */
const LOOKUP_KEY_OWNER = /^(CACHE|SORT|PARTITION|PRIMARY|FOREIGN|ROUTING|SHARD|INDEX|LOOKUP|MAP|DICT|HASH|ROW|OBJECT|IDEMPOTENCY|DEDUP|DEDUPE|GROUP|RANGE)$/;

/**
 * A KEY followed by what describes it (`KEY_NAME`, `SIGNING_KEY_ID`, `KMS_KEY_ARN`, `KEY_TYPE`) names or describes a
 * key, not the key itself, and a public key (`COSIGN_PUBLIC_KEY`) is meant to be shown; an access key's
 * id (`AWS_ACCESS_KEY_ID`) is half of a login and stays one.
 */
const KEY_DESCRIPTION = /^(NAME|ID|ARN|ALIAS|TYPE|SIZE|LENGTH|ALGORITHM|ALG|FINGERPRINT)$/;
const describesKey = (parts: string[], i: number) =>
  (KEY_DESCRIPTION.test(parts[i + 1] ?? '') && parts[i - 1] !== 'ACCESS') || (parts[i - 1] === 'PUBLIC' && parts[i + 1] === undefined);

/** A signed token's settings (`JWT_EXPIRY`, `JWT_ALGORITHM`, `JWT_ISSUER`): how tokens are made, not one. */
const TOKEN_SETTING = /^(EXPIRY|EXPIRES|EXPIRATION|EXP|TTL|LIFETIME|ALGORITHM|ALG|ISSUER|ISS|AUDIENCE|AUD|LEEWAY|HEADER)$/;

/** A variable that names where a secret lies or what holds it (`SECRET_YML_PATH`, `TOKEN_FILE`, `SECRETS_VOLUME`, `SECRET_NAME`), not the secret itself. */
const NAMES_A_PLACE = /^(PATH|FILE|DIR|FILENAME|LOCATION|NAME|VOLUME|MOUNT)$/;

/** A word that is only a variable named for where a credential lies (`"$CHAIN_CREDENTIALS_FILE"`, `${API_TOKEN_PATH}`). */
function holdsCredentialFile(text: string): boolean {
  const name = /^"?\$\{?([A-Za-z_]\w*)\}?"?$/.exec(text)?.[1];
  const parts = name?.toUpperCase().split(/_+/) ?? [];
  return parts.length > 1 && NAMES_A_PLACE.test(parts.at(-1)!) && isCredentialName(parts.slice(0, -1).join('_'));
}

export function isCredentialName(name: string): boolean {
  const parts = name.toUpperCase().split(/_+/);
  // A lower-case `pat` is a pattern; a personal access token is written PAT.
  if (name === 'pat') return false;
  if (parts.length > 1 && NAMES_A_PLACE.test(parts[parts.length - 1]!)) return WORKER_VARIABLE.test(name);
  return (
    WORKER_VARIABLE.test(name) ||
    CERTIFICATE_CONTENT.test(name.toUpperCase()) ||
    // A connection string (`AZURE_STORAGE_CONNECTION_STRING`) carries the account's key or the database's password in it.
    /(^|_)CONNECTION_?STRING(_|$)/.test(name.toUpperCase()) ||
    // A numbered credential (`TOKEN2`, `PASSWORD_1`'s `1` aside) is one of several of its kind, and one
    // written as one word with its service in the environment's capitals (`SLACKTOKEN`, `DBPASSWORD`) is
    // the service's; a script's own lower-case word (`$sqlpassword`) holds what the script made.
    parts.some(
      (p, i) =>
        (CREDENTIAL_PART.test(p) ||
          CREDENTIAL_PART.test(p.replace(/\d+$/, '')) ||
          (name === name.toUpperCase() && /^[A-Z]+(TOKEN|SECRET|PASSWORD|PASSWD)$/.test(p))) &&
        !(/^KEYS?\d*$/.test(p) && ((i > 0 && LOOKUP_KEY_OWNER.test(parts[i - 1]!)) || describesKey(parts, i))) &&
        !(p === 'JWT' && TOKEN_SETTING.test(parts[i + 1] ?? '')),
    )
  );
}

/**
 * Names of credential variables a word expands (`$GITHUB_TOKEN`, `${AWS_SECRET_ACCESS_KEY:-}`). A
 * `${NAME:+word}` expands to its word when the variable is set, never to the value, so it only tells
 * whether the secret is there.
 */
export function expandedCredentials(w: Word): string[] {
  if (!w.expands) return [];
  return [...w.text.matchAll(/\$(?:\{([A-Za-z_]\w*)(?!\w|:?\+)|([A-Za-z_]\w*))/g)].map((m) => (m[1] ?? m[2])!).filter(isCredentialName);
}

/**
 * A pattern that selects credential variables from a listing (`env | grep -i token`), or that a
 * search for secrets looks for (a private key's header, `BEGIN RSA PRIVATE`, with or without KEY).
 */
export const CREDENTIAL_FILTER = /key|token|secret|pass|cred|auth|private/i;

/**
 * The prefix of a family of environment variables that by convention holds a credential among its
 * members (`AWS_SECRET_ACCESS_KEY`, `PGPASSWORD`, `TWINE_PASSWORD`, `CI_JOB_TOKEN`, `ARM_CLIENT_SECRET`):
 * the environment filtered for the family (`env | grep AWS`) prints the credential with it.
 */
export const CREDENTIAL_FAMILY_FILTER = /(^|[^a-z])(aws|arm_|azure|pg|mysql|twine|pypi|npm_|ci_|access|session|vault|heroku|digitalocean)/i;

/** The first characters of a private key's or a token's usual shape (PEM keys, AWS access keys, GitHub and Slack tokens). */
export const KEY_SHAPE = /PRIVATE KEY|\bgh[pousr]_|\b(AKIA|ASIA)|xox[abpr]-/;

/**
 * What a search across the machine (Spotlight, the unified log) looks for when it hunts secrets: a
 * credential's word, a JWT's start, or a key's or token's shape.
 */
export const SECRET_SEARCH = new RegExp(`passw|secret|token|credential|api[_-]?key|private[ _-]?key|eyJ|${KEY_SHAPE.source}`, 'i');

/**
 * Tools whose one purpose is to collect the passwords, keys, tickets and cookies stored on the
 * machine (the browsers', the keychain's, the Wi-Fi's, Windows' DPAPI vaults, the logon session's
 * memory, Kerberos'): whatever runs them, and wherever they are, they read the user's secrets.
 */
const CREDENTIAL_DUMPERS =
  /^(lazagne|mimipenguin|chainbreaker|keychaindump|keychain_dump|hackbrowserdata|sharpchrome|sharpweb|chromepass|sharpdpapi|mimikatz|safetykatz|sharpkatz|pypykatz|nanodump|rubeus|kekeo|lsassy|ppldump|handlekatz|dumpert|spraykatz|keethief|keefarce|keepass[-_]?(dump|password[-_]?dumper)[-\w]*|firefox_decrypt|firepwd)(\.\w+)?$/i;

/** Whether the program (or a script's file name) is a tool that collects the machine's stored secrets. */
export const collectsStoredSecrets = (name: string) => CREDENTIAL_DUMPERS.test(name);

/** pass's commands that print or copy an entry, or an entry named alone (`pass web/github`). */
const PASS_READS = /^(show|otp|grep)\b|^(-c|--clip)(=\d+)?\s|^[\w@.-]+\/[\w@./-]+$/;

/**
 * Commands that print or copy out a credential: `gh auth token`, `gcloud auth print-access-token`,
 * a local account's password hash (`dscl . -read /Users/x ShadowHashData`), the password server's
 * database (`mkpassdb -dump`), a Kerberos ticket cache copied (`kcc copy_cred_cache`) or tickets
 * asked for and dumped (bifrost's actions)… (program → its words).
 */
const CREDENTIAL_PRINTERS: Readonly<Record<string, RegExp>> = {
  gh: /^auth (token|status .*(-t|--show-token))/,
  gcloud: /auth (print-access-token|print-identity-token|application-default print-access-token)/,
  az: /account get-access-token/,
  aws: /^(configure (get|export-credentials)|sts get-session-token|ecr get-login-password|codeartifact get-authorization-token)/,
  // git-secret's reveal and cat decrypt the repository's secret files with the user's GnuPG key.
  git: /^credential (fill|get)|^secret (reveal|cat)\b/,
  'git-secret': /^(reveal|cat)\b/,
  kubectl: /^config view .*--raw|create token/,
  security: /^(find-(generic|internet)-password|dump-keychain|export)/,
  doctl: /^auth/,
  op: /^(read|item get)/,
  // A file decrypted with the user's identity or passphrase, and password managers' listings and exports.
  age: /(^|\s)(-d|--decrypt)\b/,
  // sops given a file and no other action opens it decrypted in an editor.
  sops: /(^|\s)(-d|--decrypt|decrypt|exec-env|exec-file|edit)\b|^(?!.*(^|\s)(-e|--encrypt|encrypt|-r|--rotate|rotate|--set|set|--unset|unset|updatekeys|filestatus|publish|keyservice|groups|completion|-v|--version|-h|--help|help)(\s|=|$))\S/,
  'ansible-vault': /^(decrypt|view)\b/,
  passpie: /^(list|export|copy)\b/,
  // Password stores' entries shown, copied or exported, and their vaults unlocked or logged in to.
  // An entry named alone (`pass social/reddit`) is shown; `-c` copies it to the clipboard.
  pass: PASS_READS,
  // passage is pass with age in place of GnuPG.
  passage: PASS_READS,
  gopass: /^(show|cat|otp|totp|clip|copy|audit|unclip)\b/,
  rbw: /^(get|code|unlock|login|register)\b/,
  bw: /^(get|list items|export|unlock|login|serve|send receive)\b/,
  lpass: /^(show|export|login)\b/,
  'keepassxc-cli': /^(show|clip|export|totp|attachment-export)\b/,
  passbolt: /^(get|exec|configure|list)\b/,
  keyring: /^get\b/,
  // WireGuard's interface configuration and its JSON dump carry the private and preshared keys.
  wg: /^(showconf\b|show \S+ (private-key|preshared-keys)\b)/,
  'wg-json': /(?:)/,
  dscl: /(^|\s)-?read\b.*\b(ShadowHashData|KerberosKeys|HeimdalSRPKey|HeimdalNTLMKey)\b/,
  mkpassdb: /(^|\s)-dump\b/,
  kcc: /^(copy_cred_cache|copy-cred-cache)\b/,
  bifrost: /(^|\s)-action\s/,
  // Consul's ACL tokens listed or read show their secret IDs.
  consul: /^acl token (list|read)\b|^kv get (-\S+ )*\S*(passw|[_/.-]pw$|pwd|secret|token|credential|api[_-]?key|private[_-]?key)/i,
  // libgourou's acsmdownloader writes out the Adobe account's private key that opens every book it bought.
  acsmdownloader: /(^|\s)--export-private-key\b/,
  // chamber's secrets in AWS's parameter store read, exported, listed with their values or handed to a command; summon
  // fetches a secrets file's values from its provider and hands them to the command it runs.
  chamber: /^(read|export|exec|env)\b|^list\b.*\s-e\b|^find\b.*--by-value\b/,
  summon: /^(?!(-v|--version|-h|--help)$)\S/,
  // Headscale's API keys and pre-auth keys made are printed, each one a login to the tailnet.
  headscale: /^(apikeys?|preauthkeys?) create\b/,
  // mise's tokens shown unmasked, or got through an OAuth login.
  mise: /^token \S+ .*(--unmask|--oauth)\b|^token \S+ (--unmask|--oauth)\b/,
};
/** Docker's and git's credential helpers (`docker-credential-gcr get`, `git-credential-osxkeychain get`): `get` prints the stored login. */
const CREDENTIAL_HELPER = /^(docker|git)-credential-[\w-]+$/;

/**
 * A credential written out in a command by the formats its issuers give it (GitHub's, GitLab's, Slack's,
 * npm's, OpenAI's and AWS's keys): the command line goes into the shell's history, the process list, the
 * run's logs and the conversation. Documentation's placeholders (`AKIAIOSFODNN7EXAMPLE`) are none.
 */
const LITERAL_CREDENTIAL =
  /(^|[^\w])(gh[pousr]_[A-Za-z0-9]{30,40}|github_pat_\w{22,}|glpat-[\w-]{20,}|xox[abcdpr]-[\w-]{10,}|npm_[A-Za-z0-9]{30,40}|sk-(proj-)?[\w-]{32,}|(AKIA|ASIA)[0-9A-Z]{16})(?![\w])/;
export const holdsLiteralCredential = (text: string) => LITERAL_CREDENTIAL.test(text) && !/EXAMPLE|X{8}/.test(text);

/** The programs that search files' contents for a pattern. */
export const TEXT_SEARCHERS: readonly string[] = ['grep', 'egrep', 'fgrep', 'zgrep', 'zegrep', 'zfgrep', 'rg', 'ag', 'ack'];

/** Programs that print a whole file, or encode it for printing. */
export const FILE_PRINTERS = /^(cat|head|tail|less|more|strings|base64|xxd|od|tac|nl|bat|batcat|jq|yq)$/;
/**
 * A dotenv file (`.env`, `.env.local`, `.env.production`, a service's `censys.env`): the project's secrets, the database's URL
 * and password and the API keys, which printed go into the conversation and its history. Its
 * examples and templates hold none.
 */
const DOTENV = /(^|\/)[\w-]*\.env(\.(?!(example|sample|template|dist|defaults?|schema)$)[\w.-]+)?$/;
/**
 * A cloud service account's key file by its usual names (`serviceaccount.json`, `service-account-key.json`,
 * Google's `client_secret_….json`, a provider's `creds.json` or `credentials.json`, an app's `secrets.json` or `api_keys.json`), a secret, key, token or password
 * kept as a text file (`creds.txt`, `secretkey`, `jupyter-token.txt`, `admin_password.txt`, `.htpasswd`, Pure-FTPd's `pureftpd.passwd`), rsh's trusted hosts (`.rhosts`),
 * Jenkins' stored credentials (`credentials.xml`), and Rails' and Jenkins' master keys (`config/master.key`,
 * `secrets/master.key`, `hudson.util.Secret`), certbot's site key (`privkey.pem`, `privkey1.pem`), a signing keystore (`release.keystore`, `.jks`, `.p12`) and
 * an ssh private key by its usual name (`id_rsa`, `id_ed25519`) or a backup of one (`id_rsa.bak`): each is the login or the key to every
 * other secret.
 */
const KEY_FILE =
  /(^|\/)(service[-_]?account[\w.-]*\.json|creds\.(json|txt)|credentials\.(json|txt)|([\w-]*[-_])?(secrets|keys|api[-_]?keys)\.json|secret[-_]?key(\.\w+)?|secrets?\.txt|[\w-]*[-_]token\.txt|[\w-]*[-_]password\.txt|\.h?passwd|[\w-]+\.passwd|\.rhosts|credentials\.xml|client_secret[\w.-]*\.json|master\.key|privkey\d*\.pem|hudson\.util\.Secret|[\w.-]+\.(keystore|jks|p12|pfx)|([\w-]*[_-])?id_(rsa|dsa|ecdsa|ed25519)(_sk)?(\.(bak|old|orig|backup|save|copy|key))?~?)$/i;

/**
 * A file inside a container whose name says it holds a secret (a flag, a password, a key): its path
 * says nothing of this machine, but printing it or copying it out hands the secret over.
 */
export const CONTAINER_SECRET_FILE =
  /(^|\/)[^/\s]*(flag|secret|passw(or)?d|credential|token|private|id_(rsa|ecdsa|ed25519|dsa))[^/\s]*$|(^|\/)(\.env|shadow|master\.key|[^/\s]+\.(key|pem|pfx|p12))$/i;

/** Why the program and its words print a credential, or undefined. */
export function printsCredential(prog: string, args: Word[]): string | undefined {
  const re = Object.hasOwn(CREDENTIAL_PRINTERS, prog) ? CREDENTIAL_PRINTERS[prog] : undefined;
  const line = args.map((a) => a.text).join(' ');
  if (re?.test(line)) return `prints a credential (${prog} ${line})`;
  if (CREDENTIAL_HELPER.test(prog) && /^(get|list)$/.test(args[0]?.text ?? '')) return `prints a stored login (${prog} ${args[0]!.text})`;
  // A search prints the lines of the file that match (`grep APP_KEY /var/www/app/.env`): its first operand is the pattern.
  const searched = TEXT_SEARCHERS.includes(prog) ? args.filter((a) => !a.text.startsWith('-')).slice(1) : undefined;
  const dotenv = (searched ?? (FILE_PRINTERS.test(prog) ? args : [])).find((a) => !a.text.startsWith('-') && DOTENV.test(a.text));
  if (dotenv) return `prints the project's secrets file (${prog} ${dotenv.text})`;
  const key = FILE_PRINTERS.test(prog)
    ? args.find((a) => !a.text.startsWith('-') && KEY_FILE.test(a.text) && !/example|sample|template/i.test(a.text))
    : undefined;
  if (key) return `prints a key file (${prog} ${key.text})`;
  // A file a variable named for a credential's place holds (`"$CHAIN_CREDENTIALS_FILE"`, `$TOKEN_PATH`), printed or sourced.
  const held = FILE_PRINTERS.test(prog) || prog === 'source' || prog === '.' ? args.find((a) => holdsCredentialFile(a.text)) : undefined;
  if (held) return `reads the credential file a variable names (${prog} ${held.text})`;
  if (prog === 'printenv') {
    const named = args.filter((a) => !a.text.startsWith('-')).find((a) => isCredentialName(a.text));
    if (named) return `prints the credential variable ${named.text}`;
  }
  return undefined;
}
