// Builders, test runners, linters and formatters: repeatable when they only build, test or check
// (`cargo test`, `make`, `vitest run`, `prettier --check`), not when they fix, install or deploy.
// cargo's publishing commands are dangerous, as every registry's are (packages.ts).
import path from 'node:path';
import type { Word } from '../shell-lex.js';
import {
  checkWriteTarget,
  classify,
  danger,
  HOME_CWD,
  hasFlag,
  onlyAsksAbout,
  operands,
  optionValue,
  type Rule,
  type RuleTable,
  type State,
  word,
} from '../state.js';
import { dryRun, nugetSettings } from './packages.js';
import { camelWords, judgeScript, OUTWARD_TASK, outwardFirst } from './places.js';
import { ADB_VALUED } from './executors.js';
import { FRIDA_ELSEWHERE } from './operators.js';
import { crawlTargetNamed, installsOutside, judgeUnknownProgram, otherMachineAddress, serverNamed } from './unknown.js';

const CARGO_READ = ['test', 'build', 'check', 'clippy', 'doc', 'fmt', 'tree', 'metadata', 'bench', 'version', 'nextest', 'verify-project'];
const GO_READ = ['test', 'build', 'vet', 'list', 'version', 'doc', 'fmt'];
const MAKE_UNSAFE = new Set(['install', 'uninstall', 'deploy', 'publish', 'release', 'push', 'upload', 'dist', 'distclean']);
const JVM_GOAL = /^(test|compile|verify|package|build|check|clean|assemble|validate|dependencies|tasks|lint)$/;
const CHECK_FLAGS = ['--check', '-c', '--diff', '--check-only', '--list-different', '-l'];

const cargo: Rule = (c) => {
  const { args, st } = c;
  const sub = operands(args)[0]?.text;
  // cargo-hack runs the cargo subcommand after it over each feature set or package (`cargo hack publish`): that subcommand is judged.
  if (sub === 'hack') return cargo({ ...c, args: args.slice(args.findIndex((a) => a.text === 'hack') + 1) });
  // binstall downloads a crate's prebuilt binary from its author's releases onto the home's PATH.
  if (sub === 'binstall' && operands(args).length > 1)
    return danger(st, "installs a prebuilt binary from its author's releases onto the user's PATH (cargo binstall)");
  if (sub === 'dist' && distReleases(args.slice(args.findIndex((a) => a.text === 'dist') + 1)))
    return danger(st, 'uploads or publishes a release (cargo dist host)');
  // cargo-release changes nothing until told `--execute`: then its whole run (or its `publish` and `push`
  // steps) publishes the crates and pushes the commits and tags, unless told not to; `tag --sign-tag` signs with the user's key.
  if (sub === 'release' && args.some((a) => /^(-x|--execute)$/.test(a.text))) {
    const step = operands(args).map((a) => a.text)[1] ?? '';
    const has = (flag: string) => args.some((a) => a.text === flag);
    if (step === 'tag' && has('--sign-tag')) return danger(st, "signs the release's tags with the user's secret key (cargo release tag --sign-tag)");
    const outward =
      step === 'publish' ||
      step === 'push' ||
      (!/^(changes|version|replace|hook|commit|owner|tag|config)$/.test(step) && !(has('--no-publish') && has('--no-push')));
    if (outward) return danger(st, `publishes the crates or pushes the release (cargo release${step && !/^\d/.test(step) ? ` ${step}` : ''} --execute)`);
  }
  // cargo-c installs the C library into its prefix (/usr/local unless told), as `make install` does; a `--destdir` stages it there instead.
  if (sub === 'cinstall') {
    const valueOf = (name: string) => {
      const k = args.findIndex((a) => a.text === name || a.text.startsWith(`${name}=`));
      return k < 0 ? undefined : optionValue(args, k);
    };
    const place = valueOf('--destdir') ?? valueOf('--prefix') ?? '/usr/local';
    if (installsOutside(place, st)) return danger(st, `installs into ${place}, outside the workspace (cargo cinstall)`);
  }
  // `cargo install --root DIR` puts the programs in DIR/bin (`--root /usr` is the system's).
  if (sub === 'install') {
    const k = args.findIndex((a) => /^--root(=|$)/.test(a.text));
    const root = k < 0 ? undefined : optionValue(args, k);
    if (root !== undefined && installsOutside(root, st)) return danger(st, `installs into ${root}, outside the workspace (cargo install --root)`);
  }
  // probe-rs' cargo subcommands write the built program into the attached chip's flash.
  if (sub === 'flash' || sub === 'embed') return danger(st, `writes, erases or burns the flash or fuses of an attached board (cargo ${sub})`);
  if ((sub === 'publish' && !dryRun(args) && !hasFlag(args, 'n')) || sub === 'yank' || sub === 'owner' || sub === 'login')
    return danger(st, `publishes to a package registry or logs in to one (cargo ${sub})`);
  // `cargo new` and `cargo init` make the package's directory where they are told (`cargo new --bin /app`).
  const made = /^(new|init)$/.test(sub ?? '') ? operands(args, /^--(name|vcs|edition|registry|config)$/)[1] : undefined;
  if (made) checkWriteTarget(made, st, `makes a package (cargo ${sub}) in`);
  if (!CARGO_READ.includes(sub ?? '') || args.some((a) => a.text === '--fix')) st.repeatable = false;
};

/**
 * `go run FILE.go` compiles and runs the files it is given, as an interpreter runs a script: files
 * outside the workspace are judged by where they lie, and one this text wrote itself
 * (`echo 'package main…' > /tmp/t.go && go run /tmp/t.go`) is code the checker cannot read.
 */
const go: Rule = ({ args, st }) => {
  const ops = operands(args);
  const sub = ops[0]?.text;
  if (!GO_READ.includes(sub ?? '') && !(sub === 'env' && !hasFlag(args, 'w'))) st.repeatable = false;
  // `go env -w`/`-u` writes the user's go env file, read by every later go command of every module.
  if (sub === 'env' && (hasFlag(args, 'w') || hasFlag(args, 'u')))
    danger(st, `changes Go's settings for every later go command (go env ${args.find((a) => /^-[wu]$/.test(a.text))?.text ?? '-w'})`);
  // The module cache lies in the home (GOPATH) and serves every module of the user.
  if (sub === 'clean' && args.some((a) => a.text === '-modcache')) danger(st, "deletes the user's module cache, outside the workspace (go clean -modcache)");
  if (sub !== 'run') return;
  for (const file of ops.slice(1).filter((o) => /\.go$/.test(o.text))) {
    judgeScript('go run', file, [], st);
    const written = file.expands || st.cwd === null ? undefined : st.written.get(path.resolve(st.cwd, file.text));
    if (written !== undefined) danger(st, `runs go code it wrote itself, which the checker cannot read (${file.text})`);
  }
  // The program's own arguments follow its package or files (`go run . -host scanme.sh`): a host or a site
  // to crawl given there is its target, as it would be a program's no table names.
  const after = operands(args, GO_BUILD_VALUED).slice(1);
  const files = after.findIndex((o) => !/\.go$/.test(o.text));
  const last = files === 0 ? after[0] : files < 0 ? after.at(-1) : after[files - 1];
  const own = last ? args.slice(args.indexOf(last) + 1) : [];
  const target = serverNamed('the program go runs', own) ?? crawlTargetNamed('the program go runs', own);
  if (target) danger(st, target);
  // Playwright for Go's CLI (`go run github.com/playwright-community/playwright-go/cmd/playwright@v0.x install --with-deps`) is `playwright` given its words.
  if (last && /\/cmd\/playwright(@[\w.-]+)?$/.test(last.text)) {
    const installs = playwrightSystemInstall(
      'go run playwright',
      operands(own).map((a) => a.text),
      own.some((a) => a.text === '--with-deps'),
    );
    if (installs) danger(st, installs);
  }
};
/** `go build`'s and `go run`'s options that take a value. */
const GO_BUILD_VALUED = /^-(tags|ldflags|gcflags|asmflags|exec|o|mod|modfile|C|p|pkgdir|overlay|toolexec|covermode|coverpkg)$/;

/**
 * A make target named for sending the build out (`musl-upload`, `push-docker`, `publish-docs`,
 * `deploy`, `pypi`): a word of its name uploads, publishes or deploys, or pushes first or last. `release`
 * alone is as often a build mode (`gmake release`) and stays the Makefile's; goreleaser's release
 * (`make goreleaser-release`) is the publishing one.
 */
export const outwardTarget = (target: string) => {
  // A target's path of steps (`publish/multi-arch-base-tag`) is words as well.
  const words = target.split(/[-_:./]/);
  // goreleaser's release publishes to the forge and the registries; its snapshot and checks build here.
  const goreleaser = words.includes('goreleaser') && words.includes('release') && !words.some((w) => /^(snapshot|dry|check|build)$/.test(w));
  // A release drafted or created on the forge (`make draft-release`, `github-release`) is made there, not built here; twine's is uploaded to the index.
  const forgeRelease = words.includes('release') && words.some((w) => /^(draft|github|gh|gitlab|create|twine)$/.test(w));
  // An image's or a chart's push names the component after it (`docker-push-flagd`); a multi-platform image's
  // manifest list (`docker-manifest`) is made in the registry, from the images pushed there.
  const imagePush =
    words.some((w, i) => w === 'push' && /^(docker|image|images|container|containers|registry|helm|chart|charts|oci)$/.test(words[i - 1] ?? '')) ||
    (words.at(-1) === 'manifest' && /^(docker|image|container|oci)$/.test(words.at(-2) ?? ''));
  // A cloud stack created, updated or deleted (`make create-stack`, CloudFormation's and Pulumi's) is made in the account.
  const stackChange = words.includes('stack') && words.some((w) => /^(create|update|delete|destroy)$/.test(w));
  return (
    goreleaser ||
    forgeRelease ||
    imagePush ||
    stackChange ||
    words.some((w) => /^(upload|publish|deploy)$/.test(w)) ||
    // A target named for the package index alone (`make pypi`, `testpypi`) uploads there; `pypi-check` checks.
    /^(test)?pypi$/.test(target) ||
    /^push$/.test(words[0]!) ||
    /^push$/.test(words.at(-1)!)
  );
};
/**
 * A make variable naming where an install goes (`PREFIX=/usr/local`, `DESTDIR=/`, `PREFIX=~/.local`),
 * pointed outside the workspace: the same judgement as a prefix configure was given.
 */
const outsidePrefix = (assignment: string, st: State) => {
  const m = /^(\w*PREFIX|prefix|DESTDIR|\w*DIR)=(.+)$/.exec(assignment);
  return m !== null && installsOutside(m[2]!.replace(/^["']|["']$/g, ''), st);
};
const make: Rule = ({ prog, args, st, env = [] }) => {
  // make's variables, given as arguments or as the command's leading assignments (`DESTDIR=… make install`).
  const settings = [...args.map((a) => a.text), ...env];
  const targets = operands(args, /^-(C|f|j|l|o|W|I)$/).filter((a) => !a.text.includes('='));
  if (targets.some((t) => MAKE_UNSAFE.has(t.text))) st.repeatable = false;
  // make's own rehearsal (`-n`): it prints the recipes and runs none.
  const onlyPrints = args.some((a) => /^(-n|--dry-run|--just-print|--recon)$/.test(a.text));
  const outward = targets.find((t) => outwardTarget(t.text) && !/^(pre|check|test|verify|before)[-_]/.test(t.text));
  if (outward && !onlyPrints) danger(st, `runs a make target named for publishing, uploading or deploying (${prog} ${outward.text})`);
  // An install target told to install under a system directory (`make PREFIX=/usr install`, `DESTDIR=/`),
  // the home's (`PREFIX=$HOME/.local`) or anywhere else outside the workspace writes there; a staging
  // directory here or in /tmp does not.
  const install = targets.find((t) => /^(un)?install/.test(t.text));
  const into = install && settings.find((t) => outsidePrefix(t, st));
  if (into) danger(st, `installs outside the workspace (${prog} ${into} ${install.text})`);
  // An install after a configure told to install outside the workspace (`./configure --prefix=$HOME/.local && make install`).
  else if (install && st.installPrefix?.outside)
    danger(st, `installs into ${st.installPrefix.text}, outside the workspace, the prefix configure was given (${prog} ${install.text})`);
  // The build's own install (`make install`, `ninja install`) with no prefix given anywhere in the text goes
  // to its default, /usr/local, and its `uninstall` deletes from there; one staged by a variable (`DESTDIR=…`, `INSTALL_ROOT=appdir`) or after a
  // prefix in the workspace stays here. A target that installs the project's tools (`install-dev`) is the Makefile's.
  else if (
    install &&
    /^(un)?install(-strip)?$/.test(install.text) &&
    !st.installPrefix &&
    !onlyPrints &&
    !settings.some((t) => /^\w*(PREFIX|prefix|DESTDIR|ROOT|DIR)=/.test(t))
  )
    danger(st, `installs into the build's default prefix, a directory of the system (${prog} ${install.text})`);
  // An embedded project's `make flash` and `make erase` write or wipe the attached board (boards.ts).
  // A target named for a flasher (`install-with-avrdude`, `program-dfu`) writes the board the same way.
  // So does an install of a dongle's firmware or bootloader (rfcat's `installRfCatDonsDongle`,
  // `installdonsbootloader`, `restoredongle`): the install is onto the attached device.
  const flash = targets.find((t) => flashesBoard(t.text));
  if (flash && !onlyPrints) danger(st, `runs a make target that flashes or erases an attached board (${prog} ${flash.text})`);
  // A target named for giving the built program capabilities or its owner's rights (`make setcap`, `setuid`): root's
  // raw sockets, Bluetooth or ports below 1024 for every later run, set with sudo.
  const privilege = targets.find((t) => /^(set[-_]?cap|setcaps|set[-_]?suid|setuid|suid)$/.test(t.text));
  if (privilege && !onlyPrints) danger(st, `runs a make target named for giving a program root's capabilities (${prog} ${privilege.text})`);
  // A target named for an attack, an exploit or an exfiltration (`make attack1`, `hardened-attack2`, `exfil`),
  // or for a lab's attacker or victim (`make run-attacker`, `launch_victim`): an attack lab's Makefile runs its
  // attacks by these names. The dumps of a chip's flash and options too.
  const attack = targets.find(
    (t) => t.text.split(/[-_:.]/).some((w) => /^(attack(er)?|victim|exploit|exfil|pwn)\d*$/.test(w)) || /^dump[-_](flash|opt|rom|eeprom)$/.test(t.text),
  );
  if (attack && !onlyPrints) danger(st, `runs a make target named for an attack, an exploit, an exfiltration or a chip's dump (${prog} ${attack.text})`);
  // A target named for a login (`make docker-login`, `registry-login`) signs in to a registry or a service with the user's
  // credentials; one named for ssh alone (`make ssh`, `pi-ssh`) opens a shell on the host the Makefile names.
  const login = targets.find((t) => t.text.split(/[-_:.]/).includes('login') || /^([\w-]+[-_])?ssh$/.test(t.text));
  if (login && !onlyPrints) danger(st, `runs a make target that logs in to a registry, a service or a host (${prog} ${login.text})`);
  // A kernel module's own targets install it under /lib/modules or load it into the running kernel.
  const kernel = targets.find((t) => /^(modules_install|modprobe|insmod|rmmod)$/.test(t.text));
  if (kernel && !onlyPrints) danger(st, `runs a make target that installs or loads a kernel module (${prog} ${kernel.text})`);
  // A target named for the machine's package manager or device rules (`install_apt`, `deps-brew`, `reload_udev`) installs
  // system packages or rewrites the machine's udev rules.
  const machine = targets.find((t) => {
    const words = t.text.split(/[-_:.]/);
    return words.some((w) => /^(install|setup|deps|reload|update)$/.test(w)) && words.some((w) => /^(apt|brew|dnf|yum|pacman|zypper|apk|udev)$/.test(w));
  });
  if (machine && !onlyPrints) danger(st, `runs a make target named for the machine's packages or device rules (${prog} ${machine.text})`);
};

/**
 * Maven's and Gradle's goals and tasks that upload artifacts (`deploy`, `gpg:sign-and-deploy-file`, `publish`, `:lib:publishToSonatype`,
 * `release:perform`), tag and push a release to the repository's remote (`release:prepare`, `release:rollback`),
 * or send the code's analysis to a SonarQube server (`sonarqube`, `sonar:sonar`).
 */
const JVM_PUBLISH =
  /^(.*:)?(deploy(:.*)?|sign-and-deploy-file|publish\w*|upload\w*|release:(prepare|perform|stage|rollback|branch)|closeAndReleaseRepository|closeAndReleaseSonatypeStagingRepository|jib|jib:build|sonarqube|sonar(:sonar)?)$/;
/**
 * Gradle's tasks that upload, read by the words of their camel-cased name (a project path before
 * `:` aside), whose first word is the verb by Gradle's habit: publish, upload, deploy, release or
 * push first (`publishToSonatype`, `uploadArchives`, `deployToS3`, `releaseToCentral`, `pushImage`;
 * not `releaseNotes` or `releaseCheck`, which write or check); a plugin's name before its verb,
 * which is then last (`gitPublishPush`, `dockerPush`, `appengineDeploy`, `herokuPublish`); a forge's
 * or a publisher's release (`githubRelease`, `jreleaserFullRelease`). A variant's build
 * (`assembleRelease`, `bundleRelease`) or a step before an upload (`prepareDocsForUploadToGhPages`)
 * sends nothing; `publishToMavenLocal` and its kind write the local Maven repository only.
 */
function gradlePublishes(task: string): boolean {
  const name = task.replace(/^.*:/, '');
  if (/ToMavenLocal$/.test(name)) return false;
  const words = camelWords(name);
  const [first, last] = [words[0]!, words.at(-1)!];
  if (/^(publish|upload|deploy|release|push)$/.test(first)) return outwardFirst(words);
  return (
    JVM_PUBLISH.test(name) ||
    /^(push|publish|upload|deploy)$/.test(last) ||
    (last === 'release' && /^(github|gitlab|gitea|jreleaser|bintray|sonatype|nexus)$/.test(first))
  );
}
/**
 * Gradle's tasks that provision or store a credential (`provisionDevelocityAccessKey`,
 * `storeSigningPassword`): a verb that writes first, a secret's noun last. The credential is
 * fetched or written to the user's Gradle home, for every later build.
 */
function gradleStoresCredential(task: string): boolean {
  const words = camelWords(task.replace(/^.*:/, ''));
  return (
    /^(provision|store|save|set|add|create|rotate|write)$/.test(words[0]!) &&
    /^(key|keys|token|tokens|credentials?|password|secret|secrets)$/.test(words.at(-1)!)
  );
}
/** Options whose value is the next word: a task excluded (`-x publish`), a file, a directory, a project list. */
const GRADLE_VALUED = /^(-x|--exclude-task|-p|--project-dir|-b|--build-file|-c|--settings-file|-I|--init-script|-g|--gradle-user-home)$/;
const MAVEN_VALUED =
  /^(-f|--file|-s|--settings|-gs|--global-settings|-pl|--projects|-rf|--resume-from|-T|--threads|-P|--activate-profiles|-t|--toolchains|-l|--log-file)$/;

const jvm: Rule = ({ prog, args, st }) => {
  const gradle = /^gradlew?$/.test(prog);
  const goals = operands(args, gradle ? GRADLE_VALUED : MAVEN_VALUED);
  const publish = goals.find((g) => (gradle ? gradlePublishes(g.text) : JVM_PUBLISH.test(g.text) && !/^publishToMavenLocal$/.test(g.text.replace(/^.*:/, ''))));
  if (publish) danger(st, `publishes to a package registry or an analysis server (${prog} ${publish.text})`);
  const credential = gradle ? goals.find((g) => gradleStoresCredential(g.text)) : undefined;
  if (credential) danger(st, `provisions or stores a credential (${prog} ${credential.text})`);
  // Spring Boot's image build pushes the image it built when told to publish.
  const pushes = args.find((a) => /^-Dspring-boot\.build-image\.publish=true$|^--publishImage$/.test(a.text));
  if (pushes) danger(st, `pushes an image to a registry (${prog} ${pushes.text})`);
  // Playwright for Java's CLI run through Maven's exec plugin (`-D exec.mainClass=com.microsoft.playwright.CLI
  // -D exec.args="install --with-deps"`) is `playwright` given those words.
  const playwrightArgs = args.some((a) => /^(-D)?exec\.mainClass=com\.microsoft\.playwright\.CLI$/.test(a.text))
    ? (args
        .find((a) => /^(-D)?exec\.args=/.test(a.text))
        ?.text.replace(/^(-D)?exec\.args=/, '')
        .split(/\s+/) ?? [])
    : [];
  const playwrightInstalls = playwrightSystemInstall(
    `${prog} exec:java playwright`,
    playwrightArgs.filter((w) => !w.startsWith('-')),
    playwrightArgs.includes('--with-deps'),
  );
  if (playwrightInstalls) danger(st, playwrightInstalls);
  if (!goals.length || goals.some((g) => !JVM_GOAL.test(g.text.replace(/^:/, '')))) st.repeatable = false;
};

/**
 * cargo-dist's `host` announces and uploads a release unless its steps are only the local ones
 * (`--steps=create`, `--steps=check`); `build`, `plan`, `init` and `generate` stay here.
 */
function distReleases(args: Word[]): boolean {
  if (operands(args)[0]?.text !== 'host') return false;
  const steps = args.flatMap((a, k) => (a.text.startsWith('--steps=') ? [a.text.slice(8)] : a.text === '--steps' ? [args[k + 1]?.text ?? ''] : []));
  return !steps.length || steps.some((s) => !/^(create|check)$/.test(s));
}

/** goreleaser's release (its default command) publishes unless it is a snapshot or told to skip publishing. */
const goreleaser: Rule = ({ args, st }) => {
  st.repeatable = false;
  const sub = operands(args, /^(-f|--config|--release-notes|--release-header|--release-footer|-p|--parallelism|--timeout|--skip)$/)[0]?.text;
  if (sub !== undefined && sub !== 'release') return;
  const local = args.some(
    (a, k) =>
      /^--(snapshot|skip-publish)$/.test(a.text) ||
      /^--skip=.*\bpublish\b/.test(a.text) ||
      (a.text === '--skip' && /\bpublish\b/.test(args[k + 1]?.text ?? '')),
  );
  if (!local) danger(st, 'publishes a release (goreleaser release)');
};

/**
 * Kamal deploys to the servers its configuration names and runs its commands there (`kamal setup`,
 * `kamal app exec`, `kamal lock acquire`); its config resolves the deploy's secrets. Only its
 * scaffolding, version and help stay here.
 */
const kamal: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  const [verb, action] = operands(args).map((a) => a.text);
  // A command group named alone (`kamal lock`, `kamal server`) prints its commands.
  const groupAlone = /^(app|lock|server|accessory|proxy|registry|secrets|build|prune|traefik)$/.test(verb ?? '') && action === undefined;
  if (verb !== undefined && !/^(init|version|help|docs)$/.test(verb) && !groupAlone && !onlyAsksAbout(args))
    danger(st, `acts on the servers of its deploy configuration (${prog} ${verb})`);
};

/**
 * Release tools whose one job is the release: np and release-it bump the version, tag, push and publish
 * to npm and the forge; semantic-release does it from CI; ghr uploads files to a GitHub release (a draft
 * included). Their dry runs and previews, and the
 * version or changelog they would use, change nothing.
 */
const releaseTool: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  if (onlyAsksAbout(args) || args.some((a) => /^(--dry-run|--dry|-d|--preview|--release-version|--changelog|--only-version)$/.test(a.text))) return;
  danger(st, `makes a release: a version tagged, pushed and published (${prog})`);
};

/**
 * Everyday tools of other ecosystems (Ruby's, PHP's, Elixir's, Swift's and Xcode's, Rust's
 * toolchain manager, meson, coverage, linters and formatters): judged by their arguments as a
 * program no table names is (a path outside the workspace, another host, an option that runs a
 * command, a subcommand that publishes or deploys), so the default verdict stays what it was, and
 * known where commands run unsandboxed. `own` reads what the tool itself runs or sends.
 */
const everyday =
  (own?: Rule): Rule =>
  (c) => {
    judgeUnknownProgram(c.prog, c.args, c.st);
    own?.(c);
  };

/** strip rewrites the binaries it names in place, or writes its `-o` file: a write wherever those are. */
const strip: Rule = ({ args, st }) => {
  const output = args.findIndex((a) => a.text === '-o');
  const targets = output >= 0 ? args.slice(output + 1, output + 2) : operands(args, /^(-[RKN]|--(remove-section|keep-symbol|strip-symbol))$/);
  for (const f of targets) checkWriteTarget(f, st, 'rewrites');
};

/**
 * A site alias of Drush's or WP-CLI's (`drush @staging updatedb`, `drush rsync @staging:%files/
 * @live:%files`, `wp @prod plugin update`) names a site on another host, reached over ssh; `@self` and
 * `@none` are this one, and WP-CLI's `--ssh=` names the host itself.
 */
const REMOTE_SITE = /^(@(?!(self|none)(:|$))[\w.-]+(:\S*)?|--ssh=\S+)$/;
const cmsCli: Rule = everyday(({ prog, args, st }) => {
  const remote = args.find((a) => REMOTE_SITE.test(a.text));
  if (remote) danger(st, `runs ${prog} on a site on another host (${remote.text})`);
  const ops = operands(args).map((a) => a.text);
  if (prog === 'wp' && ops[0] === 'cli' && ops[1] === 'update') danger(st, 'replaces the installed wp-cli program outside the workspace (wp cli update)');
});

/** makepkg's (and MSYS2's makepkg-mingw's) `-i` installs the built package and `-s` its dependencies, through pacman and sudo. */
const makepkg: Rule = everyday(({ prog, args, st }) => {
  const flag = args.find((a) => /^(-[a-zA-Z]*[is][a-zA-Z]*|--install|--syncdeps)$/.test(a.text));
  if (flag) danger(st, `installs packages into the system through pacman (${prog} ${flag.text})`);
});

/** Where commands run unsandboxed, code given inline to a tool is code the checker does not read. */
const inlineCode = (st: State, what: string) => {
  if (st.askUnknown) danger(st, `runs ${what}, which the checker does not read, outside the sandbox: a person must approve it`);
};

/**
 * GitHub's CLI: its verbs that change the forge (a release, a merge, a secret) are judged as any
 * program's are; `gh api` changes it when told another method than GET, or given fields (which
 * make it a POST). Its `auth` verbs but `status` store, print or hand out the user's token: `gh auth
 * setup-git` makes gh git's credential helper in the global git config, `gh auth token` prints it.
 */
const githubCli: Rule = ({ prog, args, st }) => {
  const ops = operands(args);
  const [group, verb] = ops.map((a) => a.text);
  // `gh api`'s endpoint (`/user`, `/repos/o/r/pulls`) is a path of GitHub's API, not of this machine.
  const endpoint = group === 'api' ? ops[1] : undefined;
  judgeUnknownProgram(prog, endpoint ? args.filter((a) => a !== endpoint) : args, st);
  if (group === 'auth' && verb !== undefined && verb !== 'status')
    return danger(st, `stores, prints or hands out the user's GitHub credential (gh auth ${verb})`);
  // `gh repo sync OWNER/REPO` updates that repository on GitHub from its parent; without a name it updates the clone here.
  if (group === 'repo' && verb === 'sync' && ops[2] !== undefined) return danger(st, `changes a repository on GitHub (gh repo sync ${ops[2].text})`);
  if (group === 'api') judgeGithubApiCall(prog, args, st);
};

/** A call to GitHub's API changes something there when told another method than GET, or given fields (which make it a POST). */
const judgeGithubApiCall = (prog: string, args: Word[], st: State) => {
  const method = args.find((a, k) => /^(-X|--method)$/.test(args[k - 1]?.text ?? '') || /^(-X|--method=)\S/.test(a.text));
  const value = method?.text.replace(/^(-X|--method=)/, '');
  if (
    (value !== undefined && !/^(GET|HEAD)$/i.test(value)) ||
    (value === undefined && args.some((a) => /^(-f|-F|--field|--raw-field|--input)(=|$)/.test(a.text)))
  )
    danger(st, `changes something on GitHub through its API (${prog} api ${value?.toUpperCase() ?? 'with fields'})`);
};

/**
 * hub, GitHub's older CLI, wraps git: its own one-word verbs that make or remove something on GitHub
 * (`hub fork`, `hub pull-request`, `hub create`, `hub delete`) act there on the user's behalf; its
 * objects' verbs (`hub release create`) are judged as any program's are, and `hub api` as gh's.
 */
const HUB_FORGE_VERB = /^(fork|pull-request|create|delete)$/;
const hubCli: Rule = ({ prog, args, st }) => {
  const ops = operands(args);
  const verb = ops[0]?.text;
  const endpoint = verb === 'api' ? ops[1] : undefined;
  judgeUnknownProgram(prog, endpoint ? args.filter((a) => a !== endpoint) : args, st);
  if (verb !== undefined && HUB_FORGE_VERB.test(verb)) return danger(st, `changes something on GitHub on the user's behalf (hub ${verb})`);
  if (verb === 'api') judgeGithubApiCall(prog, args, st);
};

/**
 * Android's debug bridge acts on a device or an emulator: `root`, `remount`, `disable-verity` and
 * `reboot` change its system or restart it; a shell there is a login to it, and its command is judged as a
 * command too (executors.ts).
 * A push or an install writes to the device, as a connected iPhone's are judged (boards.ts); a pull
 * reads it, and only this machine's side of it is judged, as a program no table names is.
 */
const adb: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  const ops = operands(args, ADB_VALUED);
  const verb = ops[0]?.text ?? '';
  if (/^(root|remount|disable-verity|enable-verity|reboot|reboot-bootloader|sideload)$/.test(verb))
    return danger(st, `changes the device's system or restarts it (adb ${verb})`);
  // A backup copies the apps' private data (messages, accounts, tokens) off the device; `tcpip` opens
  // its debug bridge to the network; an uninstall deletes an app and everything it kept.
  if (/^(backup|restore|tcpip|uninstall)$/.test(verb)) return danger(st, `copies off, restores, exposes or deletes what the device holds (adb ${verb})`);
  // The device's log cleared (`logcat -c`) loses what its apps and system recorded.
  if (verb === 'logcat' && args.some((a) => /^(-c|--clear)$/.test(a.text))) return danger(st, "clears the device's log (adb logcat -c)");
  // A device picked by its network address (`-s 10.0.0.46:5555`) is another machine reached over its debug bridge.
  const serialAt = args.findIndex((a) => a.text === '-s');
  const serial = serialAt < 0 ? undefined : args[serialAt + 1]?.text;
  if (serial !== undefined && otherMachineAddress(serial)) return danger(st, `drives a device over the network by its address (adb -s ${serial})`);
  // The device's settings changed, or an app's data cleared or the app removed, through its shell.
  const shellWords = ops.slice(1).map((a) => a.text);
  if (
    /^(shell|exec-out)$/.test(verb) &&
    /^(settings (put|delete|reset)|pm (uninstall|clear|disable\S*|hide|grant|revoke|set-\S+))\b/.test(shellWords.join(' '))
  )
    return danger(st, `changes the device's settings or an app's data (adb ${verb} ${shellWords.slice(0, 2).join(' ')})`);
  // The owner's messages, contacts, call log, calendar or accounts read off the device through its content providers.
  if (
    /^(shell|exec-out)$/.test(verb) &&
    /^content (query|read)\b.*content:\/\/(sms|mms|mms-sms|contacts|com\.android\.contacts|call_log|calendar|com\.android\.calendar|browser|user_dictionary)\b/.test(
      shellWords.join(' '),
    )
  )
    return danger(st, `reads the device owner's messages, contacts or call log (adb ${verb} content query)`);
  // A shell on the device reads and runs what it is told there, as a serial console's would: its
  // apps' packages and data, its accounts, its settings (the corpora label it so forty-nine times to four).
  // An emulator (`-e`, `-s emulator-5554`) is a virtual machine of the user's own.
  const emulator = args.some((a, k) => a.text === '-e' || (a.text === '-s' && /^emulator-\d+$/.test(args[k + 1]?.text ?? '')));
  if (/^(shell|exec-out)$/.test(verb)) return emulator ? undefined : danger(st, `runs commands in a shell on the attached device (adb ${verb})`);
  if (verb === 'push' && /^\/(system|vendor|product)(\/|$)/.test(ops[ops.length - 1]?.text ?? ''))
    return danger(st, `writes to the device's system partition (adb push … ${ops[ops.length - 1]!.text})`);
  if (/^(push|install|install-multiple|install-multi-package)$/.test(verb) && !onlyAsksAbout(args))
    return danger(st, `installs on or writes to the attached device (adb ${verb})`);
  // A file pulled off an attached device (not an emulator) is the device owner's: photos, downloads, app data
  // (the corpora label it so seven times to two). The shell's scratch directory holds what a developer pushed there.
  if (verb === 'pull' && !emulator && ops.length > 1 && !/^\/data\/local\/tmp(\/|$)/.test(ops[1]!.text))
    return danger(st, `copies files off the attached device (adb pull ${ops[1]!.text})`);
  if (verb === 'pull') return judgeUnknownProgram(prog, ops.slice(2), st);
  judgeUnknownProgram(prog, ops, st);
};

const rake = everyday(({ args, st }) => {
  if (args.some((a) => /^(-e|-E|-p|--execute|--execute-continue|--execute-print)(=|$)/.test(a.text))) inlineCode(st, 'inline Ruby code (rake -e)');
  // Bundler's gem tasks (`rake release`, `release:<gem>` in a repository of several gems) tag, push and publish the gem.
  const release = operands(args).find((a) => /^release(:[\w-]+)*$/.test(a.text));
  if (release) danger(st, `publishes a release (rake ${release.text})`);
  // Other tasks are named as make's targets are (`docker:push`, `deploy:production`, `gem:publish`).
  const outward = release ? undefined : operands(args).find((a) => !a.text.includes('=') && outwardTarget(a.text));
  if (outward) danger(st, `runs a rake task named for publishing, uploading or deploying (rake ${outward.text})`);
});

/** `rails runner CODE` and the consoles run Ruby or SQL typed or given inline; a workspace script (`runner x.rb`) is code the workspace holds. */
const rails = everyday(({ args, st }) => {
  const [sub, what] = operands(args, /^(-e|--environment)$/).map((a) => a.text);
  if ((sub === 'runner' || sub === 'r') && what !== undefined && !/\.rb$/.test(what)) inlineCode(st, 'inline Ruby code (rails runner)');
  if (/^(console|c|dbconsole|db)$/.test(sub ?? '')) inlineCode(st, `a console (rails ${sub})`);
});

/** Hex's publishing and account tasks reach the registry; `mix run -e` and `mix eval` run inline Elixir. */
const mix = everyday(({ args, st }) => {
  const task = operands(args)[0]?.text ?? '';
  if (/^hex\.(publish|owner|retire|user|organization)$/.test(task)) danger(st, `publishes to a package registry or changes its accounts (mix ${task})`);
  if (task === 'eval' || (task === 'run' && args.some((a) => /^(-e|--eval)$/.test(a.text)))) inlineCode(st, `inline Elixir code (mix ${task})`);
});

/** `coverage run` runs Python as python would (`-m pytest`, a script); its reports read its data file. */
const coverage = everyday(({ args, judge }) => {
  const k = args.findIndex((a) => a.text === 'run');
  if (k < 0) return;
  const rest = args.slice(k + 1);
  const start = rest.findIndex((a) => a.text === '-m' || !a.text.startsWith('-'));
  if (start >= 0) judge([word('python'), ...rest.slice(start)]);
});

/**
 * Swift's registry publishing (`swift package-registry publish`) uploads the package. OpenStack's
 * object-storage client has the same name: its uploads, posts, copies and deletions change the
 * cloud's containers, and `auth` prints the user's token.
 */
const swift = everyday(({ args, st }) => {
  const ops = operands(args).map((a) => a.text);
  if (/^(upload|post|copy|delete)$/.test(ops[0] ?? '')) danger(st, `changes an OpenStack object store's containers or objects (swift ${ops[0]})`);
  if (ops[0] === 'auth') danger(st, "prints the OpenStack object store's token (swift auth)");
  if (ops[0] === 'package-registry' && /^(publish|login)$/.test(ops[1] ?? ''))
    danger(st, `publishes to a package registry or logs in to one (swift package-registry ${ops[1]})`);
});

/** Tools that rewrite files unless told only to check (`rustfmt --check`, `clang-format --dry-run`, `golangci-lint run` without `--fix`). */
const checkerOrFixer = everyday(({ args, st }) => {
  if (
    args.some(
      (a) =>
        /^(-i|-a|-A|--fix|--write|--autocorrect|--autocorrect-all|--in-place)$/.test(a.text) ||
        a.text === 'autocorrect' ||
        a.text === 'fmt' ||
        a.text === 'fix',
    )
  )
    st.repeatable = false;
});

/**
 * Hex's commands in rebar3 and gleam (`rebar3 hex publish`, `gleam hex retire`): they send a package
 * to hex.pm, retire it, or change its owners, keys and organisation there.
 */
const HEX_CHANGE = /^(publish|cut|retire|unretire|revert|owner|user|key|organization|authenticate)$/;
const hexTool = everyday(({ prog, args, st }) => {
  const [sub, verb] = operands(args).map((a) => a.text);
  if (sub === 'hex' && verb !== undefined && HEX_CHANGE.test(verb)) danger(st, `${prog} hex ${verb} reaches past this machine (hex.pm)`);
});

/**
 * `meson install` installs to the prefix its setup was given, /usr/local by default, as `make install`
 * does: a prefix given in the text (`meson setup --prefix=$HOME/.local`) or a staging directory
 * (`--destdir`, `DESTDIR=…`) decides where.
 */
const meson = everyday(({ args, st, env = [] }) => {
  if (operands(args, /^(-C)$/)[0]?.text !== 'install') return;
  if (args.some((a) => /^--(destdir|dry-run|help)(=|$)|^-h$/.test(a.text)) || env.some((t) => /^DESTDIR=/.test(t))) return;
  if (st.installPrefix?.outside ?? true)
    danger(st, `installs into ${st.installPrefix?.text ?? "the build's default prefix, a directory of the system"} (meson install)`);
});

/**
 * ccache's cache and settings are the user's, shared by every project built on the machine: its size
 * limits and settings set, or the cache cleared, change them all; its statistics and settings printed read.
 */
const ccache = everyday(({ prog, args, st }) => {
  const change = args.find((a) =>
    /^(-M|--max-size|-F|--max-files|-o|--set-config|-C|--clear|-X|--recompress|--evict-older-than|--evict-namespace)(=|$)|^-[MFoX]./.test(a.text),
  );
  if (change) danger(st, `changes the user's compiler cache, shared by every project (${prog} ${change.text.replace(/=.*/, '')})`);
});

/** cpanm installs into the project's or the user's library as pip does; `--sudo` (`-S`) installs as root. */
const cpanm = everyday(({ args, st }) => {
  if (args.some((a) => a.text === '--sudo' || /^-[a-zA-Z]*S[a-zA-Z]*$/.test(a.text))) danger(st, 'installs Perl modules as root (cpanm --sudo)');
});

/**
 * perltidy's backup extension (`-bext='/'`, which also tells it to delete the backups) is a suffix,
 * not a path; the rest is judged as any program's arguments are (`-o /etc/x.pl` by its path).
 */
const BACKUP_EXTENSION = /^(-bext|--backup-file-extension)(=|$)/;
const perltidy: Rule = ({ prog, args, st }) =>
  judgeUnknownProgram(
    prog,
    args.filter((a, k) => !BACKUP_EXTENSION.test(a.text) && !(BACKUP_EXTENSION.test(args[k - 1]?.text ?? '') && !args[k - 1]!.text.includes('='))),
    st,
  );

/**
 * The home and the system's directories, as the directory a command stands in: a build run there
 * writes its objects, dependencies and binaries outside the workspace. A container's own directories
 * (`/app`, `/src`, `/workspaces`) and /tmp are where images and scratch builds keep their sources, and
 * a directory under `~` may be the workspace itself (`cd ~/project && make`), whose real path is unknown there.
 */
const HOME_OR_SYSTEM_DIR = new RegExp(`^(${HOME_CWD}$|/(usr|opt|etc|root|var|srv|boot|home|Users|Library)(/|$))`);
/**
 * A build or an install of the project where the command stands (`make`, `go build`, `cargo install
 * --path .`, `python3 setup.py install`, `npm install`, `./configure`), which writes its files there:
 * the words that say so, or undefined. make told another directory (`-C`) builds there instead.
 */
function buildsWhereItStands(prog: string, args: Word[]): string | undefined {
  const ops = operands(args).map((a) => a.text);
  const sub = ops[0];
  if (/^(g?make|ninja|meson|cmake)$/.test(prog) && !args.some((a) => /^(-C|-n|--dry-run|--version|--help|-B|-S|--build|--install|-E)$/.test(a.text)))
    return prog;
  if (/(^|\/)configure$/.test(prog)) return prog;
  if (prog === 'go' && /^(build|install|generate)$/.test(sub ?? '')) return `go ${sub}`;
  if (prog === 'cargo' && (/^(build|b)$/.test(sub ?? '') || (sub === 'install' && args.some((a) => a.text === '--path')))) return `cargo ${sub}`;
  if (/^python[\d.]*$/.test(prog) && sub === 'setup.py' && /^(build|install|develop|bdist\w*|sdist)$/.test(ops[1] ?? '')) return `${prog} setup.py ${ops[1]}`;
  if (/^(npm|yarn|pnpm|bun)$/.test(prog) && (sub === undefined || /^(install|i|ci|add|build)$/.test(sub))) return `${prog}${sub ? ` ${sub}` : ''}`;
  if (/^(composer|bundle)$/.test(prog) && /^(install|update)$/.test(sub ?? '')) return `${prog} ${sub}`;
  return undefined;
}
/** A build where the command stands, when that is the home or a system directory. */
export function buildOutsideWorkspace(prog: string, args: Word[], st: State): void {
  if (st.cwd === null || !HOME_OR_SYSTEM_DIR.test(st.cwd) || classify(st.cwd, st).cls === 'inside') return;
  const build = buildsWhereItStands(prog, args);
  const where = st.cwd === HOME_CWD ? '~' : st.cwd;
  if (build) danger(st, `builds in ${where}, outside the workspace, writing its files there (${build})`);
}

/** The programs above, judged by their arguments where a program no table names would be (what they hand to a shell included). */
export const ARGUMENT_JUDGED: ReadonlySet<string> = new Set([
  'bundle',
  'composer',
  'rake',
  'rails',
  'rubocop',
  'mix',
  'coverage',
  'swift',
  'rustup',
  'meson',
  'xcodebuild',
  'carthage',
  'golangci-lint',
  'rustfmt',
  'clang-format',
  'swiftlint',
  'ant',
  'jekyll',
  'critcmp',
  'check-jsonschema',
  'reuse',
  'php-cs-fixer',
  'dos2unix',
  'unix2dos',
  'mktemp',
  'cabal',
  'ghc',
  'ghcup',
  'just',
  'grind',
  'pre-commit',
  'prek',
  'mdbook',
  'man',
  'zig',
  'dune',
  'opam',
  'phpstan',
  'golint',
  'staticcheck',
  'govulncheck',
  'benchstat',
  'actionlint',
  'towncrier',
  'watchman',
  'gosec',
  'sphinx-build',
  'typos',
  'strip',
  'llvm-strip',
  'thor',
  'clang-extdef-mapping',
  'iwyu',
  'include-what-you-use',
  'zizmor',
  'base64',
  'crunch',
  'virtualenv',
  'bazel',
  'bazelisk',
  'mkdocs',
  'cucumber',
  'cabal-plan',
  'dart',
  'flutter',
  'mill',
  'cppcheck',
  'apidiff',
  'shfmt',
  'xo',
  'ava',
  'slotscheck',
  'cibuildwheel',
  'mkvirtualenv',
  'wasm-pack',
  'wasmtime',
  'ameba',
  'nim',
  'koch',
  'devenv',
  'rebar3',
  'gleam',
  'cpanm',
  'getent',
  'perltidy',
  'luarocks',
  'luacov',
  'prove',
  'lein',
  'nasm',
  'ld',
  'sphinx-apidoc',
  'watchexec',
]);

const formatter: Rule = ({ args, st }) => {
  if (!args.some((a) => CHECK_FLAGS.includes(a.text))) st.repeatable = false;
};

/**
 * Haskell's compiler and build tool under a target's prefix (`wasm32-wasi-cabal`, `x86_64-linux-gnu-ghc`)
 * or with a version (`ghc-9.6.4`): the same tool, built for another target or pinned.
 */
const HASKELL_TOOLCHAIN = /^([a-z0-9_]+-)+(cabal|ghc)$|^(cabal|ghc)-[\d.]+$/;

/** airspeed velocity runs a project's benchmarks; `asv gh-pages` pushes the results' site unless told `--no-push`. */
const asv = everyday(({ args, st }) => {
  if (operands(args)[0]?.text === 'gh-pages' && !args.some((a) => a.text === '--no-push')) danger(st, 'publishes the benchmark site (asv gh-pages)');
});

/**
 * openssl's commands that compute on local files and print or write the result (keys, requests,
 * certificates, digests, encodings, password hashes); its clients, servers and responders
 * (`s_client`, `s_server`, `ocsp`) reach the network, and are judged elsewhere by default (a client
 * fed a secret, a server listening) and left to a person where commands run unsandboxed.
 */
const OPENSSL_LOCAL =
  /^(version|help|list|passwd|req|x509|ca|genrsa|genpkey|rsa|pkey|pkeyutl|pkeyparam|ec|ecparam|dsa|dsaparam|dhparam|gendsa|dgst|sha\d*|md5|enc|base64|rand|verify|crl|crl2pkcs7|pkcs7|pkcs8|pkcs12|asn1parse|cms|smime|ciphers|speed|prime|kdf|mac|storeutl|errstr|x25519|x448|ed25519|ed448|aes-\d+-\w+)$/;
/** The key commands' `-text` prints a private key's numbers, unless they are told the key is a public one. */
const OPENSSL_KEY_COMMAND = /^(rsa|ec|pkey|dsa)$/;
const openssl = everyday(({ args, st }) => {
  const sub = args[0]?.text ?? '';
  if (OPENSSL_KEY_COMMAND.test(sub) && args.some((a) => a.text === '-text') && !args.some((a) => /^-pub(in|out)$/.test(a.text)))
    danger(st, `prints a private key (openssl ${sub} -text)`);
  if (st.askUnknown && !OPENSSL_LOCAL.test(sub))
    danger(st, `runs openssl ${sub}, which reaches or serves the network or is not read here, outside the sandbox: a person must approve it`);
});

/**
 * A build label of bazel's (`//:benchmark`, `//test/...`, `@repo//pkg:target`, `-//tools/...` left
 * out of a pattern): a package of the workspace or of an external repository it names, not a path.
 */
const BAZEL_LABEL = /^-?(@@?[\w.~+-]*)?\/\/[\w./+@=~-]*(:[\w./+@=~-]*)?$/;
/** A target named for publishing, deploying or releasing (`//:publish`, `//deploy:push_image`, `//:release`). */
const BAZEL_OUTWARD_TARGET = /(^|[/:_-])(publish|deploy|release|push|upload)([/:_.-]|$)/;
/**
 * bazel and its launcher: built, tested and run from the workspace's labels, judged by the rest of
 * their arguments as a program no table names; `bazel run` of a target named for publishing or
 * deploying sends what it built.
 */
const bazel: Rule = ({ prog, args, st }) => {
  judgeUnknownProgram(
    prog,
    args.filter((a) => !BAZEL_LABEL.test(a.text)),
    st,
  );
  const ops = operands(args);
  const outward = ops[0]?.text === 'run' ? ops.slice(1).find((o) => BAZEL_LABEL.test(o.text) && BAZEL_OUTWARD_TARGET.test(o.text)) : undefined;
  if (outward) danger(st, `runs a target named for publishing or deploying (${prog} run ${outward.text})`);
  if (!/^(build|test|query|cquery|aquery|info|version|coverage)$/.test(ops[0]?.text ?? '')) st.repeatable = false;
};

/**
 * Mill, Scala's build tool, run by its launcher (`./mill -i __.test`): its tasks build, test and check
 * the workspace's modules; a task named for publishing (`__.publishArtifacts`,
 * `mill.scalalib.SonatypeCentralPublishModule/`) sends the artifacts to a repository.
 */
const mill = everyday(({ prog, args, st }) => {
  const task = operands(args).find((o) => /publish/i.test(o.text));
  if (task) danger(st, `publishes the build's artifacts (${prog} ${task.text})`);
  st.repeatable = false;
});

/**
 * sbt, Scala's build tool: its tasks build, test and check the project's modules; a task named for
 * publishing (`+publishSigned`, `docs/docusaurusPublishGhpages`) or releasing (`ci-release`,
 * `sonatypeBundleRelease`) sends the build out, except a publish to this machine's own repository or
 * image store (`publishLocal`, `publishM2`, `docker:publishLocal`, `dockerPublishLocalSkipTests`).
 */
const sbt = everyday(({ prog, args, st }) => {
  const task = operands(args).find((o) => {
    const name = o.text.replace(/^.*[/:]/, '').replace(/^\+/, '');
    return (
      (/publish/i.test(name) && !/publish(Local|M2)/i.test(name)) ||
      /(^|-)release$|Release$|^ciRelease|^sonatype(Release|Bundle|Open|Close|Promote|Drop)/.test(name)
    );
  });
  if (task) danger(st, `publishes the build's artifacts (${prog} ${task.text})`);
  st.repeatable = false;
});

/**
 * A target or recipe that flashes or erases the attached board: `flash`, `erase`, `flash-all`, one named
 * for a flasher (`install-with-avrdude`, `program-dfu`), or an install of a dongle's firmware or bootloader.
 */
const flashesBoard = (name: string) =>
  /^(flash|erase)([-_](all|app|fw|firmware|bootloader|both))?$/.test(name) ||
  name.split(/[-_:.]/).some((w) => /^(avrdude|dfu|openocd|esptool|picotool|jlink|bossac|probe-rs)$/.test(w)) ||
  /^(install|restore)\w*(dongle|bootloader|fw)\w*$/i.test(name);

/** A task runner's tasks named for publishing, deploying or releasing: running one sends the build out. */
const outwardTasks = (runner: string, tasks: string[], st: State) => {
  const task = tasks.find(OUTWARD_TASK);
  if (task) danger(st, `runs a task named for publishing, deploying or releasing (${runner} ${task})`);
  const flash = tasks.find(flashesBoard);
  if (flash) danger(st, `runs a task that flashes or erases an attached board (${runner} ${flash})`);
};

/**
 * Dart's and Flutter's toolchains: `pub publish` (not `--dry-run`) uploads the package to pub.dev. A
 * package's executable run by its name (`dart run grinder pkg-npm-deploy`, `dart pub run build_runner
 * build`) is a task runner given its tasks.
 */
const dartTool = everyday(({ prog, args, st }) => {
  const ops = operands(args).map((a) => a.text);
  // Flutter's settings are the user's, for every later build (`flutter config --no-analytics`, `--enable-web`).
  const setting = prog === 'flutter' && ops[0] === 'config' ? args.find((a) => /^--(?!list$|help$|machine$)[\w-]+/.test(a.text)) : undefined;
  if (setting) danger(st, `changes Flutter's settings for every later build (flutter config ${setting.text})`);
  if (ops[0] === 'pub' && ops[1] === 'publish' && !dryRun(args) && !hasFlag(args, 'n')) danger(st, `publishes to a package registry (${prog} pub publish)`);
  const k = ops[0] === 'run' ? 1 : ops[0] === 'pub' && ops[1] === 'run' ? 2 : -1;
  const runner = k > 0 ? ops[k] : undefined;
  if (runner !== undefined && /^[\w:-]+$/.test(runner)) outwardTasks(`${prog} run ${runner}`, ops.slice(k + 1), st);
  if (!/^(test|analyze|format)$/.test(ops[0] ?? '')) st.repeatable = false;
});

/** Repeatable only with this first operand (`ruff check`, `playwright test`). */
const onlyWith =
  (sub: string, alsoFlag?: string): Rule =>
  ({ args, st }) => {
    if (operands(args)[0]?.text !== sub && !(alsoFlag && args.some((a) => a.text === alsoFlag))) st.repeatable = false;
  };

/**
 * What Playwright's CLI given these words installs into the system through sudo, or undefined:
 * `install --with-deps` and `install-deps` install the browsers' system libraries through sudo apt-get;
 * the branded browsers (`install msedge`, `chrome-beta`) are the vendors' packages, installed into /opt
 * through sudo as well, where Chromium, Firefox and WebKit go to the user's own cache.
 */
function playwrightSystemInstall(prog: string, ops: string[], withDeps: boolean): string | undefined {
  if (ops[0] === 'install-deps' || (ops[0] === 'install' && withDeps))
    return `installs system packages through sudo (${prog} ${ops[0]}${ops[0] === 'install' ? ' --with-deps' : ''})`;
  const branded = ops[0] === 'install' ? ops.slice(1).find((o) => /^(chrome|msedge)(-beta|-dev|-canary)?$/.test(o)) : undefined;
  return branded && `installs a vendor's browser package into the system through sudo (${prog} install ${branded})`;
}
const playwright: Rule = (c) => {
  onlyWith('test')(c);
  const installs = playwrightSystemInstall(
    c.prog,
    operands(c.args).map((a) => a.text),
    c.args.some((a) => a.text === '--with-deps'),
  );
  if (installs) danger(c.st, installs);
};

export const BUILD_TOOL_RULES: RuleTable = {
  programs: {
    cargo,
    go,
    make,
    gmake: make,
    ninja: make,
    mvn: jvm,
    mvnw: jvm,
    gradle: jvm,
    gradlew: jvm,
    dotnet: ({ args, st }) => {
      const ops = operands(args).map((a) => a.text);
      if (ops[0] === 'nuget' && ops[1] === 'push') danger(st, 'publishes to a package registry (dotnet nuget push)');
      if (ops[0] === 'nuget') nugetSettings('dotnet nuget', args.slice(args.findIndex((a) => a.text === 'nuget') + 1), st);
      // A global tool goes onto every later shell's PATH, as `npm install -g` does.
      if (ops[0] === 'tool' && /^(install|update|uninstall)$/.test(ops[1] ?? '') && args.some((a) => /^(-g|--global)$/.test(a.text)))
        danger(st, `installs a tool for every later shell of the user (dotnet tool ${ops[1]} --global)`);
      // An F# build script's pipeline or target named for publishing (`dotnet fsi build.fsx -p PushClient`, `-t Release`),
      // or a build program's (Cake Frosting's, Nuke's: `dotnet run/release.dll --target=PublishRelease`, `DockerHubReadmePublish`).
      const pipeline = args.findIndex((a) => /^(-p|--pipeline|-t|--target)(=|$)/.test(a.text));
      const given = pipeline < 0 ? undefined : args[pipeline]!.text.includes('=') ? args[pipeline]!.text.replace(/^[^=]*=/, '') : args[pipeline + 1]?.text;
      const name = (ops[0] === 'fsi' || /\.dll$/.test(ops[0] ?? '')) && given !== undefined ? given : undefined;
      const words = name === undefined ? [] : camelWords(name.replace(/\$\{\{.*$/, ''));
      if (name && (outwardFirst(words) || words.at(-1) === 'publish') && !dryRun(args))
        danger(st, `runs a build pipeline named for publishing or releasing (dotnet ${ops[0]} … ${args[pipeline]!.text.replace(/=.*/, '')} ${name})`);
      // The build's output directory (`dotnet publish -c Release -o /app`) is written wherever it lies.
      if (/^(build|publish|pack)$/.test(ops[0] ?? '')) {
        const output = args.findIndex((a) => /^(-o|--output)(=|$)/.test(a.text));
        const dir =
          output < 0 ? undefined : args[output]!.text.includes('=') ? { ...args[output]!, text: args[output]!.text.replace(/^[^=]*=/, '') } : args[output + 1];
        if (dir) checkWriteTarget(dir, st, `builds (dotnet ${ops[0]}) into`);
      }
      if (!['build', 'test', '--version', '--info'].includes(operands(args)[0]?.text ?? args[0]?.text ?? '')) st.repeatable = false;
    },
    bazel,
    bazelisk: bazel,
    // The launcher a repository keeps beside its sources (`./bazelisk.sh build //sw/...`), which fetches and runs bazelisk.
    'bazelisk.sh': bazel,
    mill,
    sbt,
    cmake: ({ args, st, env = [] }) => {
      if (!args.some((a) => a.text === '--build')) st.repeatable = false;
      // The install prefix configured (`-DCMAKE_INSTALL_PREFIX=…`) is carried to the install that follows.
      const configured = args.map((a) => /^-DCMAKE_INSTALL_PREFIX(?::\w+)?=(.+)$/.exec(a.text)?.[1]).find((p) => p !== undefined);
      if (configured !== undefined) st.installPrefix = { text: configured, outside: installsOutside(configured, st) };
      // `cmake --install DIR` installs to `--prefix`, or to the configured prefix, or to /usr/local; so does
      // building the `install` target (`cmake --build . --target install`).
      const installFlag = args.some((a) => a.text === '--install');
      const installTarget = args.some((a, k) => a.text === '--target=install' || (['--target', '-t'].includes(a.text) && args[k + 1]?.text === 'install'));
      if (!installFlag && !(installTarget && args.some((a) => a.text === '--build'))) return;
      const k = args.findIndex((a) => a.text === '--prefix');
      const prefix = k >= 0 ? args[k + 1]?.text : undefined;
      // A staging directory given as the command's leading assignment (`DESTDIR=stage cmake --install build`) holds the install, as make's does.
      const staged = env.find((t) => /^DESTDIR=/.test(t));
      if (staged !== undefined) {
        if (outsidePrefix(staged, st)) danger(st, `installs outside the workspace (${staged} cmake --install)`);
        return;
      }
      const outside = prefix !== undefined ? installsOutside(prefix, st) : (st.installPrefix?.outside ?? true);
      if (outside)
        danger(
          st,
          `installs into ${prefix ?? st.installPrefix?.text ?? "the build's default prefix"}, outside the workspace (cmake ${installFlag ? '--install' : '--target install'})`,
        );
    },
    ruff: ({ args, st }) => {
      if (operands(args)[0]?.text !== 'check' || args.some((a) => a.text === '--fix')) st.repeatable = false;
    },
    black: formatter,
    isort: formatter,
    prettier: formatter,
    eslint: ({ args, st }) => {
      if (args.some((a) => a.text.startsWith('--fix'))) st.repeatable = false;
    },
    vitest: onlyWith('run', '--run'),
    playwright,
    // Patchright is Playwright's fork, with the same commands.
    patchright: playwright,
    goreleaser,
    np: releaseTool,
    'release-it': releaseTool,
    // intuit's auto: `shipit` and its kin version, tag, publish and release; `create-labels`, `comment` and `pr-*` write to the GitHub project.
    auto: ({ args, st }) => {
      st.repeatable = false;
      const verb = operands(args)[0]?.text ?? '';
      if (/^(shipit|latest|next|canary|release|create-labels|comment|pr-body|pr-status|pr-check|label)$/.test(verb) && !dryRun(args) && !onlyAsksAbout(args))
        danger(st, `makes a release or writes to the project's GitHub pages (auto ${verb})`);
    },
    'semantic-release': releaseTool,
    // changelogithub writes the changelog into a GitHub release of the pushed tag.
    changelogithub: releaseTool,
    ghr: releaseTool,
    kamal,
    dist: ({ args, st }) => {
      st.repeatable = false;
      if (distReleases(args)) danger(st, 'uploads or publishes a release (dist host)');
    },
    bundle: everyday(),
    composer: everyday(),
    drush: cmsCli,
    wp: cmsCli,
    makepkg,
    'makepkg-mingw': makepkg,
    // `integrate install` makes every later MSBuild and CMake build of the user's use this vcpkg.
    vcpkg: everyday(({ args, st }) => {
      const ops = operands(args).map((a) => a.text);
      if (ops[0] === 'integrate' && ops[1] === 'install') danger(st, "changes every later build of the user's to use this vcpkg (vcpkg integrate install)");
    }),
    rake,
    rails,
    rubocop: checkerOrFixer,
    mix,
    coverage,
    swift,
    rustup: everyday(),
    meson,
    ccache,
    xcodebuild: everyday(),
    carthage: everyday(),
    'golangci-lint': checkerOrFixer,
    rustfmt: checkerOrFixer,
    'clang-format': checkerOrFixer,
    swiftlint: checkerOrFixer,
    // Bash's test runner: it runs the workspace's .bats files, as a test runner does.
    bats: everyday(),
    // Haskell's build tool, compiler (whose `-e` code is inline code, interpreters.ts) and toolchain
    // installer, and just, which runs the recipes of the workspace's justfile as make runs a Makefile's:
    // judged by what they are given (`cabal upload` and `just publish` as a subcommand that publishes).
    cabal: everyday(),
    // Alire, Ada's package manager: its global settings change every later build (`alr settings --global`,
    // the older `alr config --global`), and resetting or adding an index changes where crates come from
    // (`alr publish` as a subcommand that publishes).
    alr: everyday(({ args, st }) => {
      const sub = operands(args, /^(--set|--get|--unset|-C|--chdir)$/)[0]?.text;
      if (/^(settings|config)$/.test(sub ?? '') && args.some((a) => a.text === '--global') && args.some((a) => /^--(set|unset)$/.test(a.text)))
        danger(st, `changes Alire's settings for every later build (alr ${sub} --global)`);
      if (sub === 'index' && args.some((a) => /^--(reset-community|add|del|rename)(=|$)/.test(a.text))) danger(st, "changes Alire's crate indexes (alr index)");
    }),
    // Zephyr's meta-tool builds and fetches the workspace's modules; flashing or debugging writes to or
    // drives a board attached to the machine.
    west: everyday(({ args, st }) => {
      const sub = operands(args, /^(-z|--zephyr-base)$/)[0]?.text;
      if (/^(flash|debug|debugserver|attach|rtt)$/.test(sub ?? '') && !args.some((a) => /^(-h|--help)$/.test(a.text)))
        danger(st, `writes to or drives a board attached to the machine (west ${sub})`);
    }),
    // Babashka runs the tasks of the workspace's bb.edn: one named for publishing or releasing
    // (`bb release-artifact`, `bb deploy`) sends the build out.
    bb: everyday(({ args, st }) => {
      const task = operands(args)[0]?.text;
      if (task && /^[\w:-]+$/.test(task) && (OUTWARD_TASK(task) || outwardFirst(task.split(/[-:_]/))))
        danger(st, `runs a task named for publishing, deploying or releasing (bb ${task})`);
    }),
    // Stack builds, tests and installs for the user (its `--exec` and `exec` commands are executors.ts');
    // `stack upload` publishes to Hackage.
    stack: ({ args, st }) => {
      st.repeatable = false;
      if (operands(args, /^(--exec|--flag|--stack-yaml|--resolver|--snapshot|--local-bin-path|--ta|--test-arguments|--ghc-options)$/)[0]?.text === 'upload')
        danger(st, 'publishes to a package registry (stack upload)');
    },
    ghc: everyday(),
    ghcup: everyday(),
    // just's variables may come before the recipe (`just board=nucleo flash-all`).
    just: everyday(({ args, st }) =>
      outwardTasks(
        'just',
        operands(args)
          .filter((a) => !/^\w+=/.test(a.text))
          .slice(0, 1)
          .map((a) => a.text),
        st,
      ),
    ),
    // Task's and taskipy's runner (`task deploy-docs`, `uv run task deploy-docs`): tasks until the `--` before the tasks' own arguments.
    task: everyday(({ args, st }) => {
      const end = args.findIndex((a) => a.text === '--');
      outwardTasks(
        'task',
        operands(end < 0 ? args : args.slice(0, end)).map((a) => a.text),
        st,
      );
    }),
    // grinder's own launcher, given its tasks as `dart run grinder` is.
    grind: everyday(({ args, st }) =>
      outwardTasks(
        'grind',
        operands(args).map((a) => a.text),
        st,
      ),
    ),
    // The hook runner, the Rust book builder, the manual reader (its pager options are executors.ts'),
    // Zig's and OCaml's build tools and OCaml's package manager: everyday tools, judged as above.
    // `init-templatedir` writes a hook into a template directory and points the user's global git
    // configuration (init.templateDir) at it, so every later clone runs it.
    // A hook stage (`--hook-stage push`) names which of the project's hooks run, not a push.
    'pre-commit': ({ prog, args, st }) => {
      const hookStage = args.findIndex((a) => /^(--hook-stage|--hook-type|-t)$/.test(a.text));
      judgeUnknownProgram(prog, hookStage < 0 ? args : args.filter((_a, k) => k !== hookStage && k !== hookStage + 1), st);
      if (operands(args)[0]?.text === 'init-templatedir')
        danger(st, "changes the user's global git configuration, every later clone's hooks (pre-commit init-templatedir)");
    },
    // pre-commit's reimplementation, run on the same hooks' file.
    prek: everyday(),
    mdbook: everyday(),
    man: everyday(),
    zig: everyday(),
    dune: everyday(),
    // opam's depext installs the system packages a package needs, through sudo; `init --auto-setup` edits the shell's startup files.
    opam: everyday(({ args, st }) => {
      const verb = operands(args)[0]?.text;
      if (verb === 'depext' && !args.some((a) => /^(-l|--list|-n|--dry-run)$/.test(a.text)))
        danger(st, "installs the machine's system packages a package needs, through sudo (opam depext)");
      if (verb === 'init' && args.some((a) => /^(-a|--auto-setup)$/.test(a.text))) danger(st, "edits the user's shell startup files (opam init --auto-setup)");
    }),
    asv,
    // Static analysers and linters (PHP's phpstan, Go's golint, staticcheck and vulnerability checker,
    // GitHub Actions' actionlint), Go's benchmark comparer, the news-fragment collector and Meta's
    // file watcher: workspace tools, judged by what they are given (`towncrier build` writes the
    // changelog here; `watchman -- trigger` hands over a command, as any program's option would).
    ...Object.fromEntries(['phpstan', 'golint', 'staticcheck', 'govulncheck', 'benchstat', 'actionlint', 'towncrier', 'watchman'].map((p) => [p, everyday()])),
    // Go's security analyser, Sphinx's builder, the spelling checker, binutils' symbol stripper and
    // Ruby's task runner (whose `thor release` publishes, as a subcommand that publishes): workspace
    // tools, judged by what they are given (`strip /usr/bin/x` by its path).
    ...Object.fromEntries(['gosec', 'sphinx-build', 'typos', 'thor'].map((p) => [p, everyday()])),
    strip: everyday(strip),
    'llvm-strip': everyday(strip),
    // Clang's cross-translation-unit index builder, include-what-you-use and the GitHub Actions
    // auditor: static analysers of the workspace's code and workflows, judged as above.
    ...Object.fromEntries(['clang-extdef-mapping', 'iwyu', 'include-what-you-use', 'zizmor'].map((p) => [p, everyday()])),
    // Python's environment makers make the directory they are given (`virtualenv -p /usr/bin/python2 myenv`,
    // `python3 -m venv /usr/share/tool/.venv`): a write there, wherever it is.
    ...Object.fromEntries(
      ['virtualenv', 'venv'].map((p): [string, Rule] => [
        p,
        (c) => {
          everyday()(c);
          for (const dir of operands(c.args, /^(-p|--python|--prompt|--creator|--seeder|--activators)$/))
            checkWriteTarget(dir, c.st, 'makes a virtual environment at');
        },
      ]),
    ),
    // The base64 coder and the wordlist generator print what they compute, or write it where told
    // (`crunch … -o wordlist.txt`, macOS' `base64 -o`): judged by those paths.
    ...Object.fromEntries(['base64', 'crunch'].map((p) => [p, everyday()])),
    openssl,
    // Documentation and test tools of other ecosystems (MkDocs, Dart's and Flutter's toolchains,
    // Cucumber, cabal's plan reader): judged by what they are given (`mkdocs gh-deploy` as a
    // subcommand that publishes), and `pub publish` sends the package to pub.dev.
    ...Object.fromEntries(['mkdocs', 'cucumber', 'cabal-plan'].map((p) => [p, everyday()])),
    dart: dartTool,
    flutter: dartTool,
    // watch repeats the command it is given, which executors.ts reads and judges as a command of its own;
    // its own options name no file, so its words are not judged again as a program's.
    watch: () => {},
    // Java's older build tool, Jekyll's site builder, criterion's and the schema and licence checkers,
    // PHP's fixer, line-ending converters and mktemp: workspace tools, judged by what they are given
    // (`ant deploy` or `jekyll serve --host 0.0.0.0` as any program; `mktemp -p /etc` by its path).
    ant: everyday(),
    jekyll: everyday(),
    critcmp: everyday(),
    'check-jsonschema': everyday(),
    reuse: everyday(),
    'php-cs-fixer': checkerOrFixer,
    dos2unix: everyday(),
    unix2dos: everyday(),
    mktemp: everyday(),
    gh: githubCli,
    hub: hubCli,
    adb,
    // bundletool builds APK sets here; `install-apks` installs one on the attached device, as `adb install` does.
    bundletool: everyday(({ args, st }) => {
      if (operands(args)[0]?.text === 'install-apks') danger(st, 'installs on or writes to the attached device (bundletool install-apks)');
    }),
    // frida-kill ends a process of the device or host it is pointed at; one of this machine's, by its id, is `kill`'s work.
    'frida-kill': everyday(({ args, st }) => {
      if (args.some((a) => FRIDA_ELSEWHERE.test(a.text))) danger(st, 'kills a process on an attached device or another host (frida-kill)');
    }),
    // Archivers and packers, package and kernel-log readers, the exploit database's search, PHP's
    // code sniffer and report converters, TinyGo, CMake's formatter, Xcode's log formatter and uv's
    // tool runner (whose tool is judged as its own command): judged by what they are given (`zip
    // -TT` as a command, `dmesg -C` as the kernel log cleared, `upx /usr/bin/x` by its path).
    ...Object.fromEntries(
      [
        'gzip',
        'gunzip',
        'zip',
        'dpkg-query',
        'dmesg',
        'searchsploit',
        'upx',
        'phpcs',
        'phpcbf',
        'cs2pr',
        'php-coveralls',
        'tinygo',
        'cmake-format',
        'xcpretty',
        'uvx',
        'cppcheck',
        'apidiff',
      ].map((p) => [p, everyday()]),
    ),
    // A shell-script formatter, and a JavaScript linter and test runner run as a package's scripts run
    // them: they read and rewrite the workspace's files, judged by what they are given.
    ...Object.fromEntries(['shfmt', 'xo', 'ava'].map((p) => [p, everyday()])),
    // Python's slot checker, wheel builder and virtualenvwrapper's environment maker, Rust's WebAssembly
    // packager and a WebAssembly runtime, Crystal's linter, Nim's compiler and build tool, and devenv,
    // which builds the project's development environment from its devenv.nix: they build, check and run
    // the workspace's code, judged by what they are given (`wasm-pack publish` as a subcommand that
    // publishes, `wasmtime run /tmp/x.wasm` by its path).
    ...Object.fromEntries(
      ['slotscheck', 'cibuildwheel', 'mkvirtualenv', 'wasm-pack', 'wasmtime', 'ameba', 'nim', 'koch', 'devenv'].map((p) => [p, everyday()]),
    ),
    // virtualenvwrapper keeps its environments in the home (`~/.virtualenvs`), shared by every project of the user.
    rmvirtualenv: ({ args, st }) => {
      if (!onlyAsksAbout(args)) danger(st, "deletes a Python environment from the user's ~/.virtualenvs, outside the workspace (rmvirtualenv)");
    },
    // Erlang's and Gleam's build tools (their Hex commands read above), Lua's package manager (which
    // installs into the project's tree as pip does into its environment; `luarocks upload` publishes)
    // and coverage tool, Perl's module installer, test harness and formatter, Clojure's build tool
    // (`lein deploy` publishes), the assembler and the linker, Sphinx's API page generator, the file
    // watcher (whose command executors.ts reads), and the name-database reader (its shadow
    // databases are operators.ts').
    rebar3: hexTool,
    gleam: hexTool,
    cpanm,
    perltidy,
    ...Object.fromEntries(['luarocks', 'luacov', 'prove', 'lein', 'nasm', 'ld', 'sphinx-apidoc', 'watchexec', 'getent'].map((p) => [p, everyday()])),
  },
  patterns: [[HASKELL_TOOLCHAIN, everyday()]],
};
