// Where a program, or the script a shell or interpreter runs, comes from. A program run by its path
// from the workspace is the project's own (`./gradlew`, `node_modules/.bin/x`, `.venv/bin/python`),
// and one from the directories where the system and its package managers install programs is
// installed software, judged by its name like any other. A program or script anywhere else (/tmp,
// /Users/Shared, a mounted volume, an application bundle, another user's or the home directory's
// files) was put there by something no one in the workspace has looked at, which is how dropped
// payloads and remote-access agents run: a person should see it first.
import type { Word } from '../shell-lex.js';
import { classify, danger, onlyAsksAbout, operands, TEMP_DIRS, type State } from '../state.js';
import { collectsStoredSecrets } from '../secrets.js';
import { editsStartupFiles } from './trust.js';

/**
 * Directories of installed programs and their libraries: the system's (/bin, /sbin, /usr with
 * /usr/libexec and /usr/local, macOS's sealed /System, Apple's /Library/Apple), the package
 * managers' (/opt with Homebrew and MacPorts, Linuxbrew, Nix's store, profiles and installer, snaps), the language installers' on
 * macOS (python.org's /Library/Frameworks, the JDKs' /Library/Java) and the developer tools
 * (Command Line Tools, Xcode's Developer directory), and a container image's own virtual environment at /venv. All are written by an installer as root or
 * by a package manager, not by a download or an agent. Application bundles in /Applications are
 * not among them: their programs are started with `open`, and one run by its path is usually an
 * agent (remote access, a helper) started behind the application's back.
 */
export const INSTALLED =
  /^\/(bin|sbin|usr|opt|venv\/bin|System|Library\/(Apple|Developer|Frameworks|Java)|nix\/(store|var\/nix\/profiles|nix-installer)|snap|home\/linuxbrew\/\.linuxbrew|Applications\/Xcode[^/]*\.app\/Contents\/Developer)(\/|$)/;
/**
 * The home directory's toolchain directories, where `cargo install`, `go install`, `pip install
 * --user`, `dotnet tool install -g`, nimble, rustup, bun, deno, local::lib and perlbrew and the version managers (pyenv's, rbenv's and pythonbrew's installed versions among them) put the programs they install,
 * pipx's applications' own environments among them (installs the corpora and this project count as the user's own).
 */
const USER_TOOLS =
  /^(~|\$\{?HOME\}?)\/(\.local\/share\/pipx\/venvs\/[^/]+\/bin|\.cargo\/bin|\.ghcup\/bin|\.dotnet\/tools|\.nimble\/bin|go\/bin|\.local\/bin|\.bun\/bin|\.deno\/bin|\.volta\/bin|\.pyenv\/shims|\.rbenv\/shims|\.pyenv\/versions\/[^/]+\/bin|\.rbenv\/versions\/[^/]+\/bin|\.pythonbrew\/pythons\/[^/]+\/bin|\.nvm\/versions\/node\/[^/]+\/bin|\.sdkman\/candidates\/[^/]+\/[^/]+\/bin|perl5\/bin|perl5\/perlbrew\/bin)\/[^/]+$/;
/**
 * The environment scripts the toolchain installers write into the home (rustup's `~/.cargo/env`, uv's
 * `~/.local/bin/env`, nvm's, SDKMAN's, ghcup's, deno's, ESP-IDF's `export.sh` in its install directory, conda's shell
 * hook in a Miniconda, Anaconda or Miniforge install, `~/miniconda3/etc/profile.d/conda.sh`): sourced,
 * they put the installed tools on the PATH, as a shell's startup files do at login.
 */
const TOOLCHAIN_ENV =
  /^(~|\$\{?HOME\}?)\/(\.cargo\/env|\.local\/bin\/env|\.nvm\/nvm\.sh|\.sdkman\/bin\/sdkman-init\.sh|\.ghcup\/env|\.deno\/env|(esp\/)?esp-idf(-v[\d.]+)?\/export\.sh|[\w.-]*(conda|forge|mamba)\d*\/etc\/profile\.d\/(conda|mamba)\.sh)$/;
/** The user's own shell startup files, sourced again to pick up what an install added to them; reading them changes nothing. */
const STARTUP_FILE = /^(~|\$\{?HOME\}?)\/\.(bashrc|zshrc|bash_profile|profile|zprofile|bash_login)$/;
/**
 * A Python virtual environment's activation script beside the workspace (`source ../.venv/bin/activate`,
 * a monorepo's shared environment) or in the home (`. ~/venv/bin/activate`, `~/build-env/bin/activate`,
 * the user's own, whatever its name) or one a CI job made under /tmp (`. /tmp/fli-railway-venv/bin/activate`): it
 * puts that environment's programs first on the PATH and nothing more.
 */
const VENV_ACTIVATE =
  /^((\.\.\/)+([\w.-]+\/)*[\w.-]*(venv|virtualenv)[\w.-]*\/([\w.-]+\/)?|(~|\$HOME|\$\{HOME\})\/([\w.-]+\/)+|\/tmp\/[\w.-]*venv[\w.-]*\/)bin\/activate(\.fish|\.csh)?$/;
/** Whether sourcing `t` only sets up the environment a login shell of this user has, or a virtual environment's. */
export const setsUpLoginEnvironment = (t: string) => TOOLCHAIN_ENV.test(t) || STARTUP_FILE.test(t) || VENV_ACTIVATE.test(t);
/**
 * A virtual environment's interpreter in the home (`~/klippy-env/bin/python`, `~/venvs/docs/bin/python3`):
 * the one its activation script would put first on the PATH, run without activating it. Its pip
 * installs into the home, outside the workspace, and stays judged by its place.
 */
const HOME_VENV_PYTHON = /^(~|\$HOME|\$\{HOME\})\/([\w.-]+\/){1,2}bin\/python(\d+(\.\d+)?)?$/;
/** Whether `t` is a program the toolchain installers put under the home (`$HOME/.ghcup/bin/ghcup`, `~/.cargo/bin/x`), or a home virtual environment's Python. */
export const isUserTool = (t: string) => USER_TOOLS.test(t) || HOME_VENV_PYTHON.test(t);
/** Files a shell sources to learn the system it runs on (`. /etc/os-release`) or to set up the environment a login shell has (`source /etc/profile.d/rvm.sh`). */
const SYSTEM_DESCRIPTION = /^\/etc\/(os-release|lsb-release|profile|profile\.d\/[\w.-]+\.sh)$/;
/** Devices a shell may read its script from: the input it was already handed. */
const INPUT_DEVICE = /^\/dev\/(stdin|fd\/\d+)$/;

/** Why `w`, the path a program or script is run from, is outside the workspace and the installed programs, or undefined. */
function strangePlace(w: Word, st: State): string | undefined {
  const t = w.text.trim();
  if (!t.includes('/') || isUserTool(t) || setsUpLoginEnvironment(t)) return undefined;
  // A program reached by `../` from the workspace (`../sail/bin/sail up`, `../.venv/bin/pytest`) is a sibling
  // checkout's or the monorepo's, as docs written for a subdirectory run it: the project's own tools.
  if (/^(\.\.\/)+([^./]|\.venv\/bin\/(?!activate))/.test(t) && st.cwd === st.ws) return undefined;
  const c = classify(t, st);
  if (c.cls === 'home') return t;
  if (c.cls !== 'outside' && c.cls !== 'root') return undefined;
  const abs = c.abs ?? t;
  if (INSTALLED.test(abs) || SYSTEM_DESCRIPTION.test(abs) || INPUT_DEVICE.test(abs)) return undefined;
  return t;
}

/**
 * A name for publishing or deploying, the word first or last in it (`publish-ci`, `ci-publish`,
 * `deploy:docs`, `release:publish`) or a whole step of a name in `:` steps (`ci:publish:beta`), or for releasing, the whole name or its last word after `:`, `_` or `.`
 * (`release`, `ci:release`; a `release-notes` or `release_tests` script only writes or checks, `build:release` builds, and
 * `/etc/os-release` describes the system), or for a release of a semantic version's part (`release:patch`, `release:major`), or for a
 * release tool (`semantic-release`, `release-it`), or for the Python package index
 * (`pypi`, `testpypi`, `upload-pypi`), or for an image's or a chart's push (`docker:push`): a package script (packages.ts) or a workspace script so named
 * sends the package or the site out as the verb would; `prepublish-check` and `build` send nothing.
 */
export const PUBLISHING_SCRIPT =
  /^(publish|deploy)([-:_.]|$)|[-:_.](publish|deploy)$|:(publish|deploy):|(^|(?<!^build)[:_.])release$|^release:(major|minor|patch|pre(major|minor|patch|release)|alpha|beta|rc)$|^(semantic-release|release-it)$|^(upload[-_:]?)?(test)?pypi$|(^|[-:_.])(docker|image|images|container|containers|registry|helm|chart|charts|oci)[-:_.]push([-:_.]|$)/;

/**
 * A task of a task runner's named for publishing, deploying or releasing (`grinder pkg-npm-deploy`,
 * `pkg-github-release`, `just deploy-docs`): a task's name is a word of its own, not a file's, so
 * `release` counts as its last word after `-` too, unless the word before says the task comes before
 * or checks the release (`double-check-before-release`, `pre-release`, `test-release`).
 */
/** A name's words, split where camel case starts one (`publishToSonatype` → publish, to, sonatype). */
export const camelWords = (name: string) => name.split(/(?=[A-Z])/).map((w) => w.toLowerCase());
/**
 * A task or pipeline whose first word publishes (`publishToSonatype`, `PushClient`, `Release`),
 * unless its last says it only writes or checks (`releaseNotes`, `publishCheck`).
 */
export const outwardFirst = (words: string[]) =>
  /^(publish|upload|deploy|release|push)$/.test(words[0]!) && !/^(notes|changelog|check|verify|info|version)$/.test(words.at(-1)!);

export const OUTWARD_TASK = (task: string) =>
  PUBLISHING_SCRIPT.test(task) || (/(^|[-:_.])release$/.test(task) && !/(^|[-:_.])(before|pre|prepare|check|test|verify)[-:_.]release$/.test(task));

/**
 * A script of the project's run by its path whose name, its extension aside, is a publishing or
 * deploying verb first or last (`scripts/publish`, `./deploy-docs.sh`, `bash ci/npm-publish.sh`):
 * it sends the package or the site out, as the package script of that name would (packages.ts). A
 * step named for coming before or checking it (`before_deploy.sh`, `prepare-deploy.bash`) sends nothing.
 */
const PREPARES = /^(before|after|pre|post|prepare|check|test|verify|validate|build|lint)[-_.]/;
function namedForPublishing(path: string, st: State, args: Word[]): void {
  // Told to stay here (`script/release --local`, `--dry-run`, `--snapshot`), it builds and sends nothing.
  if (args.some((a) => /^(--local|--dry-run|--dry|--snapshot|--no-publish|--skip-publish|-h|--help)$/.test(a.text))) return;
  // Nor when its first word asks only for a step that stays here (`maint/release build tarball`, `release clean`)
  // or only reads what is out there (`./scripts/deploy.sh status`, `deploy.sh logs server`).
  if (/^(build|clean|check|test|lint|verify|validate|notes|changelog|help|status|logs?|ps|list|info|show)$/.test(args[0]?.text ?? '')) return;
  const name = path.replace(/^.*\//, '').replace(/\.(sh|bash|py|rb|pl|js|mjs|ts)$/, '');
  // A script file's name joins words with `-` too (`x86-64-release.bash`); one that ends in push
  // pushes (`build-and-push.bash`), whatever it does first; one that starts with it pushes what the
  // rest names (`push_repocard_examples.py`). (`/etc/os-release` is no script.)
  const script = /\.(sh|bash|py|rb|pl|js|mjs|ts)$/.test(path);
  // So does one with upload among its words (`build-and-upload-assets.mjs`, whatever it builds first); an
  // upload of test fixtures (`upload-test-images.sh`) goes to the test's own registry.
  const uploads = script && /(^|[-_.])upload([-_.]|$)/.test(name) && !/(^|[-_.])tests?([-_.]|$)/.test(name);
  // A nightly build's script (`x86-64-nightly.bash`, `ci/nightly.py`) uploads the night's build and prunes the old ones.
  const nightly = script && /(^|[-_.])nightly$/.test(name);
  // One that starts with release releases what the rest names (`release-9x.sh`, `release_pip.sh`, `release_docker.sh`),
  // unless the rest says it only tests, checks, prints or writes notes (`release_smoke_test.sh`, `release-channel.js`).
  const releasesPart =
    script &&
    /^release[-_.]/.test(name) &&
    !/(^|[-_.])(tests?|smoke|notes|changelog|checks?|verify|validate|lint|dry|channel|version|info|status)([-_.]|$)/.test(name);
  if (
    // A release on the forge is one whatever the file's extension (`bin/create-github-release v1.2`).
    ((PUBLISHING_SCRIPT.test(name) ||
      (script && /-release$/.test(name)) ||
      /(^|[-_.])(github|gh)[-_]release$/.test(name) ||
      releasesPart ||
      uploads ||
      nightly) &&
      (!PREPARES.test(name) || /[-_.]and[-_.](upload|release|publish|deploy)/.test(name))) ||
    (script && /(^|[-_.])push$|^push[-_.]/.test(name))
  )
    danger(st, `runs a script named for publishing or deploying (${path})`);
  if (script && namedForCloudAttack(name)) danger(st, `runs a script named for attacking a cloud account or harvesting its secrets (${path})`);
  // A build bootstrapper (Nuke's `build.cmd`, psake's and Invoke-Build's `build.ps1`) given a target named for publishing
  // (`./build.cmd Publish`, `-Task PublishNuget`) runs that target.
  const target = /^build\.(sh|cmd|ps1|bat)$/i.test(path.replace(/^.*\//, ''))
    ? (args.find((a, k) => /^-(task|target)$/i.test(args[k - 1]?.text ?? '')) ?? args[0])
    : undefined;
  // `Release` first is as often the build's configuration (`./build.sh Release`) as a target.
  const targetWords = target && !target.text.startsWith('-') ? target.text.split(/[-_:.]/).flatMap(camelWords) : [];
  if (target && targetWords[0] && targetWords[0] !== 'release' && outwardFirst(targetWords))
    danger(st, `runs a build target named for publishing or deploying (${path} ${target.text})`);
}

/**
 * A script of the project's named for installing (`./install.sh`, `hst-install.sh`, `scripts/installer`,
 * `src/install/pre_install.sh`, `install-service.bat`, `add-firewall-rule.bat`): it installs the software
 * onto the machine, its packages, services, firewall rules and programs, as `make install` does. One
 * in a CI directory (`ci/install.sh`, `.github/…`) readies the CI's own throwaway machine, and one named
 * for a language's package manager (`pip_install.py`) installs into the project's environment. Docker's
 * and Helm's installers are named for what they get (`get-docker.sh`, `get_helm.sh`): system packages and
 * a service, a program in /usr/local/bin.
 */
const INSTALLER_NAME = /(^|[-_.])install(er)?$|^get[-_.](docker|helm(-3)?)$/;
/** A script named for setting up or removing one of the machine's services or firewall rules (`install-service.bat`, `add-firewall-rule.bat`). */
const SERVICE_SETUP_NAME = /(^|[-_.])(install|uninstall|autostart|add|delete|remove|enable|disable)[-_.](service|daemon|firewall([-_.]rules?)?)$/;
const PROJECT_ENVIRONMENT_INSTALL = /(^|[-_.])(pip|npm|yarn|pnpm|gem|cargo|poetry|bundle|deps|dev|bootstrap)[-_.]install$/;
/** A test of the install (`tests/test_install.sh`) runs in the test's own place; a script that makes an installer (`create-windows-installer.sh`) builds a file. */
const TESTS_OR_BUILDS_AN_INSTALLER = /^(tests?|create|make|build|package)[-_.]/;
const CI_DIRECTORY = /(^|\/)(\.github|\.circleci|\.gitlab|\.travis|travis|ci|\.ci)\//;
function namedForInstalling(path: string, st: State, args: Word[]): void {
  const name = path.replace(/^.*\//, '').replace(/\.(sh|bash|py|rb|pl|bat|cmd|ps1)$/i, '');
  if (
    !(INSTALLER_NAME.test(name) || SERVICE_SETUP_NAME.test(name)) ||
    PROJECT_ENVIRONMENT_INSTALL.test(name) ||
    TESTS_OR_BUILDS_AN_INSTALLER.test(name) ||
    CI_DIRECTORY.test(path)
  )
    return;
  if (args.some((a) => /^(-h|--help|--dry-run|--version)$/.test(a.text))) return;
  // Told to install into the workspace or a temporary directory (`--dir .`, `--to /tmp`, `--prefix=./out`), it stays there.
  const destination = args.findIndex((a) => /^--(dir|to|prefix|destdir|root|target|install-dir)(=|$)/.test(a.text));
  const place =
    destination < 0 ? undefined : args[destination]!.text.includes('=') ? args[destination]!.text.replace(/^[^=]*=/, '') : args[destination + 1]?.text;
  if (place !== undefined) {
    const c = classify(place, st);
    if (c.cls === 'inside' || c.cls === 'all' || TEMP_DIRS.test(c.abs ?? '')) return;
  }
  danger(st, `runs a script named for installing onto the machine (${path})`);
}

/** Verbs that name an attack whatever they act on. */
const ATTACK_VERB = /^(disrupt|exfil|exfiltrate|steal|harvest|backdoor|hijack)$/;
/** Verbs that act on an account's principals, keys or resources when one of those is named beside them. */
const ACCOUNT_VERB = /^(validate|assume|add|attach|enum|enumerate|brute|bruteforce|spray|dump)$/;
/** A cloud account's principals, keys, policies and the resources whose settings hold secrets. */
const ACCOUNT_OBJECT =
  /^(iam|cloudtrail|roles?|principals?|accounts|buckets|keys|policy|policies|permissions|credentials|creds|secrets|tokens|instance|cloudformation|userdata|ssm|lambda)$/;

/**
 * A script of the project's named for attacking a cloud account (`disrupt_cloudtrail.py`,
 * `validate_iam_access_keys.py`, `assume_roles.py`, `dump_instance_attributes.py`, aws_pwn's
 * kind): an attack verb, or a verb on an account's principals, keys or resources beside one of them.
 */
function namedForCloudAttack(name: string): boolean {
  const words = name.toLowerCase().split(/[-_.]/);
  return words.some((w) => ATTACK_VERB.test(w)) || (ACCOUNT_VERB.test(words[0] ?? '') && words.slice(1).some((w) => ACCOUNT_OBJECT.test(w)));
}

/** The program itself, run by its path: `/Users/Shared/.agent`, `/tmp/x`, `~/Downloads/tool`. */
export function judgeProgramPlace(first: Word, prog: string, st: State, args: Word[] = []): void {
  if (collectsStoredSecrets(prog) && !onlyAsksAbout(args)) return danger(st, `runs a tool that collects the machine's stored passwords and keys (${prog})`);
  editsStartupFiles(prog, args, st);
  if (first.text.includes('/')) {
    namedForPublishing(first.text, st, args);
    namedForInstalling(first.text, st, args);
    // A script named for the keychain (`prepare_macos_keychain.sh`, `keychains.sh`) makes, unlocks, reads or
    // changes the keychains that hold the user's passwords and signing keys.
    if (/keychains?([-_.]|$)/i.test(first.text.replace(/^.*\//, '')) && !onlyAsksAbout(args))
      danger(st, `runs a script named for the keychain, which holds the user's passwords and signing keys (${first.text})`);
  }
  const place = strangePlace(first, st);
  // Even asked only for its version, a program put there runs its own code: its place decides. An
  // application's own program in /Applications asked only for its version is the installed application.
  if (place && !(/^\/Applications\/[^/.][^/]*\.app\/Contents\/MacOS\/[^/]+$/.test(place) && onlyAsksAbout(args)))
    danger(st, `runs a program from outside the workspace and the installed programs (${place})`);
}

/** Options of each runner that take a value, so the script is the operand after them. */
const WITH_VALUE: Readonly<Record<string, RegExp>> = {
  osascript: /^-[ls]$/,
  automator: /^-[iD]$/,
  python: /^-[WX]$/,
  node: /^(-r|--require|--import|--loader|--input-type)$/,
  ruby: /^-[rIC]$/,
  shell: /^(-o|\+o|-O|\+O|--rcfile|--init-file)$/,
};

/**
 * The script a shell, an interpreter or osascript is given as a file (`bash /tmp/x.sh`, `osascript
 * /tmp/.s.scpt`, `python3 laZagne.py`): judged by where it lies and what it is. Inline code, a module
 * (`-m`) and a script read from the input (`-s`) are judged elsewhere.
 */
export function judgeScriptPlace(prog: string, args: Word[], st: State, shell: boolean): void {
  if (args.some((a) => a.text === '-m' || (shell && a.text === '-s') || /^-[a-zA-Z]*c[a-zA-Z]*$/.test(a.text))) return;
  // A shell's `-n` reads the script for syntax errors and runs none of it (`bash -n install.sh`).
  if (shell && args.some((a) => a.text === '-n' || a.text === '--noexec')) return;
  const family = shell ? 'shell' : /^python/.test(prog) ? 'python' : prog;
  const script = operands(args, WITH_VALUE[family] ?? /^$/)[0];
  if (!script || script.text === '-') return;
  judgeScript(prog, script, args.slice(args.indexOf(script) + 1), st);
}

/** A script file a runner is given, judged by where it lies and what it is; `rest` are the script's own arguments. */
export function judgeScript(prog: string, script: Word, rest: Word[], st: State): void {
  const name = script.text.replace(/^.*\//, '');
  editsStartupFiles(name, rest, st);
  namedForPublishing(script.text, st, rest);
  namedForInstalling(script.text, st, rest);
  if (collectsStoredSecrets(name) && !onlyAsksAbout(rest))
    return danger(st, `runs a tool that collects the machine's stored passwords and keys (${prog} ${name})`);
  const place = strangePlace(script, st);
  if (place) danger(st, `runs a script from outside the workspace and the installed programs (${prog} ${place})`);
}
