// Package managers and registries: npm, pnpm, yarn, bun, their npx runners, pip, and the
// publishing commands of twine, gem, cargo and docker. Publishing is dangerous (it cannot be taken
// back); installing changes the workspace (not repeatable); reading and the usual scripts
// (test, lint, build) are repeatable.
import type { Word } from '../shell-lex.js';
import { checkWriteTarget, danger, onlyAsksAbout, operands, optionValue, type Rule, type RuleTable, type State, word } from '../state.js';
import { PUBLISHING_SCRIPT } from './places.js';
import { installsOutside, judgeUnknownProgram, setuptoolsPlaceOutside, THIS_MACHINE_REGISTRY } from './unknown.js';

const NPM_READ = ['test', 't', 'ls', 'list', 'outdated', 'view', 'info', 'why', 'explain', 'help', 'config', 'root', 'bin', 'prefix', 'audit'];
const NPM_SCRIPT = /^(test|lint|build|typecheck|type-check|check|tsc|compile|format:check|lint:.*|test:.*|build:.*|check:.*)$/;

/** A publish that only shows what it would send (`npm publish --dry-run`, `cargo publish -n`). */
export const dryRun = (args: Word[]) => args.some((a) => /^--dry-run(=true)?$/.test(a.text));

/** Logging in to a registry stores its credential for every later command (`npm login`, `docker login`); logging out deletes it (`docker logout`). */
const LOGIN = /^(login|logout|adduser|add-user)$/;
const loginWhat = (verb: string) => (verb === 'logout' ? 'deletes the stored credential of' : 'logs in, storing the credential of');

/** The registry's verbs: each changes what the registry serves. */
const REGISTRY_VERB = /^(publish|unpublish|deprecate|dist-tag|owner)$/;
/** First operands after which a registry verb is a name (a script, a page, a package), not the verb. */
const NAMES_AFTER = /^(run|run-script|exec|x|dlx|help|docs|view|info|show|explain|why|ls|list|config|create|init|add|install|i|remove|uninstall)$/;

/** The package managers' own verbs; any other first word of pnpm, yarn or bun names a script or a binary of the project's dependencies. */
const PACKAGE_MANAGER_VERB =
  /^(install|i|add|remove|rm|uninstall|un|update|up|upgrade|outdated|list|ls|why|link|unlink|run|run-script|exec|x|dlx|create|init|publish|pack|audit|config|store|env|setup|patch|patch-commit|import|rebuild|prune|fetch|deploy|test|t|start|bin|root|licenses|info|view|workspace|workspaces|global|cache|dedupe|set|plugin|constraints|explain|npm|node|version|help|login|logout|owner|tag|dist-tag|search|upgrade-interactive|generate-lock-entry|check|autoclean|policies|unplug|stage|sdk|pm|build|dev|lint|format|typecheck|preview|serve|watch|clean)$/;

const npm: Rule = ({ prog, args, st, judge }) => {
  const ops = operands(args);
  // pnpm, yarn and bun run a binary of the project's dependencies by its name when no script has it
  // (`pnpm playwright install-deps`, `yarn --cwd ui prisma migrate deploy`): what it runs is judged as that command.
  const start = /^(--cwd|--dir|-C)$/.test(args[0]?.text ?? '') ? 2 : /^(--cwd|--dir)=/.test(args[0]?.text ?? '') ? 1 : 0;
  const bin = args[start];
  if (/^(pnpm|pn|yarn|bun)$/.test(prog) && bin !== undefined && !PACKAGE_MANAGER_VERB.test(bin.text) && /^[a-z][\w.-]*$/.test(bin.text))
    judge(args.slice(start));
  // A registry verb under a group of the command's (`yarn npm publish`, `npm stage publish`) is that verb.
  const grouped = !NAMES_AFTER.test(ops[0]?.text ?? '') && REGISTRY_VERB.test(ops[1]?.text ?? '');
  const sub = (grouped ? ops[1] : ops[0])?.text;
  if (!onlyAsksAbout(args) && ((sub === 'publish' && !dryRun(args)) || (sub !== 'publish' && REGISTRY_VERB.test(sub ?? ''))))
    return danger(st, `publishes to a package registry (${prog} ${grouped ? `${ops[0]!.text} ` : ''}${sub})`);
  if (LOGIN.test(sub ?? '')) return danger(st, `${loginWhat(sub!)} a package registry (${prog} ${sub})`);
  // The account's profile, password and two-factor settings are changed on the registry.
  if (prog === 'npm' && sub === 'profile' && /^(set|enable-2fa|disable-2fa)$/.test(ops[1]?.text ?? ''))
    return danger(st, `changes the user's account on the package registry (npm profile ${ops[1]!.text})`);
  const script = sub === 'run' || sub === 'run-script' ? operands(args)[1]?.text : sub;
  // pnpm's own `deploy` copies a workspace package into a local directory; a script of that name runs through `pnpm run`.
  if (script !== undefined && PUBLISHING_SCRIPT.test(script) && !dryRun(args) && !(prog === 'pnpm' && sub === 'deploy'))
    return danger(st, `runs a package script that publishes or deploys (${prog} ${script})`);
  // A script that is lerna itself, given lerna's publishing verbs (`npm run lerna publish from-package`).
  const scriptVerb = operands(args)[sub === 'run' || sub === 'run-script' ? 2 : 1]?.text;
  if (script === 'lerna' && /^(publish|version)$/.test(scriptVerb ?? '') && !dryRun(args))
    return danger(st, `runs lerna ${scriptVerb} through a package script, which tags, pushes and publishes (${prog} lerna ${scriptVerb})`);
  // npm's and pnpm's `config set` write the user's rc file in the home unless told the project's;
  // `npm link` alone links this package into the global prefix, onto every later shell's PATH.
  const projectConfig = args.some((a, k) => /^(--location|-L)(=project)?$/.test(a.text) && (a.text.endsWith('project') || args[k + 1]?.text === 'project'));
  if (/^(npm|pnpm)$/.test(prog) && sub === 'config' && /^(set|delete)$/.test(ops[1]?.text ?? '') && !projectConfig)
    return danger(st, `changes the user's ${prog} settings in the home (${prog} config ${ops[1]!.text})`);
  // pnpm's `link --global` (and `-g unlink`) does the same in pnpm's global directory.
  if (
    (prog === 'npm' && sub === 'link' && ops.length === 1) ||
    (prog === 'pnpm' && /^(link|unlink)$/.test(sub ?? '') && args.some((a) => /^(-g|--global)$/.test(a.text)))
  )
    return danger(st, `links the package into ${prog}'s global prefix, on every later shell's PATH (${prog} ${sub})`);
  // An install into the global prefix (`npm install -g pm2`) puts its programs on every later shell's
  // PATH, in a directory shared by every project (the system's /usr/lib/node_modules where node came
  // with the machine), as `npm link` does.
  // pnpm's and bun's `-g` and yarn's `global add` are the same install into their global directories.
  const globalInstall =
    (/^(npm|pnpm|bun)$/.test(prog) &&
      /^(install|i|add|update|up|uninstall|remove|rm|un)$/.test(sub ?? '') &&
      args.some((a) => /^(-g|--global)$/.test(a.text))) ||
    (prog === 'yarn' && sub === 'global' && /^(add|upgrade|remove)$/.test(ops[1]?.text ?? ''));
  if (globalInstall)
    return danger(st, `installs into ${prog}'s global prefix, on every later shell's PATH (${prog} ${sub} ${prog === 'yarn' ? ops[1]!.text : '-g'})`);
  // npm's cache lies in the home and serves every project of the user (`--force` is how npm lets it go).
  if (prog === 'npm' && sub === 'cache' && /^(clean|clear|rm)$/.test(ops[1]?.text ?? ''))
    return danger(st, `deletes the user's package cache, outside the workspace (${prog} cache ${ops[1]!.text})`);
  const readOnly = NPM_READ.includes(sub ?? '') && !args.some((a) => a.text === 'fix' || a.text === 'set');
  if (args.some((a) => a.text === '-v' || a.text === '--version')) return;
  if (!(readOnly || (script !== undefined && NPM_SCRIPT.test(script)))) st.repeatable = false;
};

/** npx and its kin run the package named, with every word after it: judged as that command. */
const npx: Rule = ({ args, judge }) => {
  // npx's own options come before the package's name; the words after it are the package's own.
  let k = 0;
  while (k < args.length && args[k]!.text.startsWith('-') && args[k]!.text !== '--') k += /^(-p|--package)$/.test(args[k]!.text) ? 2 : 1;
  if (args[k]?.text === '--') k++;
  if (k >= args.length) return;
  // The package's version (`web-ext@9`, `@scope/cli@latest`) is no part of the program's name.
  const [name, ...rest] = args.slice(k);
  judge([{ ...name!, text: name!.text.replace(/^(@?[^@\s]+)@[\w.^~<>=*-]+$/, '$1') }, ...rest]);
};

/**
 * pipx runs a package's application in a throwaway environment (`pipx run build`, `pipx run twine check
 * dist/*`), as npx does: judged as that command. Its other verbs install or list applications, judged
 * by their arguments as a program no table names is.
 */
const pipx: Rule = ({ prog, args, st, judge }) => {
  const k = args.findIndex((a) => !a.text.startsWith('-'));
  // ensurepath adds pipx's directory to the PATH in the shell's startup files, which run at every login.
  if (args[k]?.text === 'ensurepath') return danger(st, "edits the shell's startup files to change the PATH (pipx ensurepath)");
  if (args[k]?.text !== 'run') {
    judgeUnknownProgram(prog, args, st);
    return;
  }
  let j = k + 1;
  while (j < args.length && args[j]!.text.startsWith('-') && args[j]!.text !== '--')
    j += /^(--spec|--python|--pip-args|-i|--index-url)$/.test(args[j]!.text) ? 2 : 1;
  if (args[j]?.text === '--') j++;
  if (j < args.length) judge(args.slice(j));
};

const PIP_READ = ['list', 'show', 'freeze', 'check', 'help', 'inspect'];

/** pip's general options that take a value, written before its command (`pip --python /usr/bin/python3 cache purge`). */
const PIP_VALUED = /^(--python|--log|--cache-dir|--proxy|--retries|--timeout|--exists-action|--trusted-host|--cert|--client-cert)$/;

const pip: Rule = ({ args, st }) => {
  const words = operands(args, PIP_VALUED);
  const sub = words[0]?.text;
  if (sub === undefined ? args.some((a) => a.text === '--version' || a.text === '-V') : PIP_READ.includes(sub)) return;
  st.repeatable = false;
  // The flag exists to install into the Python the system's package manager owns.
  if (args.some((a) => a.text === '--break-system-packages')) danger(st, "installs into the system's own Python (pip --break-system-packages)");
  // `--user` installs into the user's site directory and its programs onto every later shell's PATH,
  // as npm's `-g` does; the workspace installed editable (`--user -e .`) is the project's own.
  if (sub === 'install' && args.some((a) => a.text === '--user') && !args.some((a) => /^(-e|--editable)$/.test(a.text)))
    danger(st, "installs into the user's Python, on every later shell's PATH (pip install --user)");
  // The cache lies in the home and serves every project of the user.
  const cache = sub === 'cache' ? words[1]?.text : undefined;
  if (cache === 'purge' || cache === 'remove') danger(st, `deletes the user's package cache, outside the workspace (pip cache ${cache})`);
  // An install told where to put the packages writes there, as a build's `--prefix` does (`pip install --prefix /build .`),
  // and so do a build of wheels and a download told where to leave them (`pip wheel --wheel-dir=/wheel .`, `pip download -d /srv`).
  const destination =
    sub === 'install'
      ? /^(--prefix|--target|--root|-t)(=|$)/
      : sub === 'wheel'
        ? /^(-w|--wheel-dir)(=|$)/
        : sub === 'download'
          ? /^(-d|--dest)(=|$)/
          : undefined;
  if (destination)
    for (const [k, a] of args.entries()) {
      const place = destination.test(a.text) ? optionValue(args, k) : undefined;
      if (place !== undefined && installsOutside(place, st))
        danger(st, `${sub === 'install' ? 'installs into' : 'puts packages in'} ${place}, outside the workspace (pip ${sub} ${a.text.replace(/=.*/, '')})`);
    }
  // Options handed on to setup.py's install (`--install-option="--prefix=/srv/graphite"`) place the package as its own do.
  const handedOn = args.flatMap((a, k) =>
    /^--(install|global)-option(=|$)/.test(a.text) ? (optionValue(args, k) ?? '').split(/\s+/).filter(Boolean).map(word) : [],
  );
  const place = sub === 'install' ? setuptoolsPlaceOutside(handedOn, st) : undefined;
  if (place) danger(st, `installs into a place outside the workspace (pip install --install-option ${place})`);
};

/**
 * NuGet's sources and caches are the user's (`~/.nuget/NuGet/NuGet.Config`, `~/.nuget/packages`) unless a
 * configuration file is named: a source added, changed or removed points every later restore elsewhere,
 * and clearing the caches deletes what every project restores from. Called for `nuget` and `dotnet nuget`.
 */
export function nugetSettings(prog: string, args: Word[], st: State): void {
  const [verb, sub] = operands(args).map((a) => a.text);
  const ownFile = args.some((a) => /^-{1,2}configfile$/i.test(a.text));
  const sourceChange =
    verb === 'sources' ? /^(add|remove|update|enable|disable)$/i.test(sub ?? '') : /^(add|remove|update|enable|disable)$/.test(verb ?? '') && sub === 'source';
  if (sourceChange && !ownFile) danger(st, `changes the user's package sources, which every later restore uses (${prog} ${verb} ${sub})`);
  if (verb === 'locals' && args.some((a) => /^-{1,2}clear$/i.test(a.text)))
    danger(st, `deletes the user's package caches, outside the workspace (${prog} locals ${sub ?? ''} --clear)`);
}

/** `twine upload`, `gem push`, `docker push`, `poetry publish`: otherwise these change things (not repeatable). */
const publishes =
  (words: string[], reason: (prog: string) => string): Rule =>
  ({ prog, args, st }) => {
    st.repeatable = false;
    const sub = operands(args)[0];
    // Asked only for the verb's help (`podman push --help`), it sends nothing.
    if (!sub || !(words.includes(sub.text) || LOGIN.test(sub.text)) || dryRun(args) || onlyAsksAbout(args)) return;
    danger(st, LOGIN.test(sub.text) ? `${loginWhat(sub.text)} a registry (${prog} ${sub.text})` : reason(prog));
  };
const toRegistry = (p: string) => `publishes to a package registry (${p})`;
/** An uploader whose every run publishes what it is given, unless asked about itself or told only to rehearse. */
const uploadsUnless =
  (rehearses: (args: Word[]) => boolean): Rule =>
  ({ prog, args, st }) => {
    if (!onlyAsksAbout(args) && !rehearses(args)) danger(st, toRegistry(prog));
  };
const simulatesUpload = (args: Word[]) => args.some((a) => /^(-s|--simulate|--no-act)$/.test(a.text));
/** uv publishes as the others do; `uv tool update-shell` adds its tool directory to the PATH in the shell's startup files, as `pipx ensurepath` does. */
const uvPublishes = publishes(['publish'], toRegistry);
const uv: Rule = (ctx) => {
  const [cmd, sub] = operands(ctx.args).map((a) => a.text);
  if (cmd === 'tool' && sub === 'update-shell') return danger(ctx.st, "edits the shell's startup files to change the PATH (uv tool update-shell)");
  // `--system` installs into the Python found on the PATH, the machine's, not the project's environment.
  if (cmd === 'pip' && /^(install|uninstall|sync)$/.test(sub ?? '') && ctx.args.some((a) => a.text === '--system'))
    danger(ctx.st, `installs into the machine's Python, outside the project's environment (uv pip ${sub} --system)`);
  // `uv venv DIR` makes the environment there: a write wherever that is.
  if (cmd === 'venv')
    for (const dir of operands(ctx.args, /^(-p|--python|--prompt|--index-url|--seed-version)$/).slice(1))
      checkWriteTarget(dir, ctx.st, 'makes a virtual environment at');
  uvPublishes(ctx);
};

/** Browser extensions signed or submitted to the stores' listings (`web-ext sign`, `wxt submit`). */
const toStores = (p: string) => `publishes a browser extension to the stores (${p})`;
const webExt = publishes(['sign'], toStores);
/** wxt's `submit init` only writes the stores' settings here; asked for help or a dry run, it submits nothing. */
const wxt: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  const [verb, sub] = operands(args).map((a) => a.text);
  if (verb === 'submit' && sub !== 'init' && !dryRun(args) && !args.some((a) => /^(-h|--help)$/.test(a.text))) danger(st, toStores(`${prog} submit`));
};

/** Container images pushed or copied to a registry; `buildx imagetools create --tag T SRC` writes the manifest T there, as a push does. */
const pushesImage = publishes(['push', 'copy'], (p) => `pushes an image to a registry (${p})`);
const images: Rule = (ctx) => {
  const ops = operands(ctx.args).map((a) => a.text);
  if (ops[0] === 'push' && ops.length === 2 && THIS_MACHINE_REGISTRY.test(ops[1]!)) return;
  if (ops[0] === 'buildx' && ops[1] === 'imagetools' && ops[2] === 'create' && !dryRun(ctx.args))
    danger(ctx.st, `pushes an image to a registry (${ctx.prog} buildx imagetools create)`);
  pushesImage(ctx);
  // The image group's own push (`docker image push --all-tags NAME`), and a multi-platform manifest's (`podman manifest push --all`).
  if ((ops[0] === 'image' || ops[0] === 'manifest') && ops[1] === 'push') danger(ctx.st, `pushes an image to a registry (${ctx.prog} ${ops[0]} push)`);
  // A build told to push what it builds (`docker buildx build --push -t user/app .`, `--output type=registry`), a bake's targets too.
  const builds = ops[0] === 'build' || (ops[0] === 'buildx' && /^(build|bake)$/.test(ops[1] ?? '')) || (ops[0] === 'image' && ops[1] === 'build');
  // Tagged only for a registry on this machine (`-t localhost:5000/bin --push`, a CI job's own), the push goes nowhere past it.
  const tags = ctx.args.flatMap((a, k) => (/^(-t|--tag)(=|$)/.test(a.text) ? [optionValue(ctx.args, k) ?? ''] : []));
  const onlyHere = tags.length > 0 && tags.every((t) => THIS_MACHINE_REGISTRY.test(t)) && !ctx.args.some((a) => /(^|[,=])name=/.test(a.text));
  // A build on the host's network runs its steps with this machine's network, as `run --network host` does.
  if (builds && ctx.args.some((a, k) => /^--net(work)?=host$/.test(a.text) || (/^--net(work)?$/.test(a.text) && ctx.args[k + 1]?.text === 'host')))
    danger(ctx.st, `builds an image whose steps run on this machine's own network (${ctx.prog} build --network host)`);
  if (builds && !onlyHere && ctx.args.some((a) => a.text === '--push' || /(^|[,=])(type=registry|push=true)(,|$)/.test(a.text)))
    danger(ctx.st, `pushes the image it builds to a registry (${ctx.prog} ${ops[0] === 'build' ? 'build' : `${ops[0]} ${ops[1]}`} --push)`);
};

/**
 * pdm runs the project's scripts by name (`pdm run release`, from pyproject's `[tool.pdm.scripts]`) as
 * `npm run` does: one named for publishing or releasing sends the package out, as npm's would.
 */
const pdm: Rule = (ctx) => {
  const ops = operands(ctx.args);
  if (ops[0]?.text === 'run' && PUBLISHING_SCRIPT.test(ops[1]?.text ?? '') && !dryRun(ctx.args))
    return danger(ctx.st, `runs a project script that publishes or releases (${ctx.prog} run ${ops[1]!.text})`);
  publishes(['publish'], toRegistry)(ctx);
};

/**
 * devpi's client switches the environment's pip to another index (`devpi use URL`), removes, pushes and
 * uploads releases there; listing, installing from it, testing and showing the index in use read.
 */
const devpi: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  const [verb, target] = operands(args).map((a) => a.text);
  if (verb === 'use' && target !== undefined) danger(st, `points pip at another package index (${prog} use ${target})`);
  if (/^(remove|push|upload)$/.test(verb ?? '')) danger(st, `changes or publishes to a package index (${prog} ${verb})`);
  judgeUnknownProgram(prog, args, st);
};

/** keyring stores, deletes or turns off the user's stored credentials (`keyring set URL __token__`); `get` prints one (secrets.ts). */
const keyring: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  const verb = operands(args)[0]?.text;
  if (/^(set|del)$/.test(verb ?? '') || args.some((a) => a.text === '--disable'))
    danger(st, `stores, deletes or turns off credentials in the user's keyring (${prog} ${verb ?? '--disable'})`);
};

/**
 * Password stores changed: entries added, edited, generated, moved or removed, the people a store is
 * encrypted to changed, or the store synced with its remote; reading them is judged in secrets.ts.
 */
const PASS_CHANGES = /^(insert|add|edit|generate|rm|remove|delete|mv|rename|cp|copy|git|init|import)$/;
const PASSWORD_STORE_CHANGES: Readonly<Record<string, RegExp>> = {
  pass: PASS_CHANGES,
  // passage is pass with age in place of GnuPG, its store in ~/.passage.
  passage: PASS_CHANGES,
  gopass:
    /^(insert|new|create|edit|generate|rm|delete|remove|mv|move|cp|copy|recipients (add|remove|rm|update|ack)|sync|git|setup|init|mounts (add|remove|rm)|config|rcs)$/,
  passbolt: /^(create|update|delete|share|move)$/,
  bw: /^(create|edit|delete|restore|move|config|logout|lock|import)$/,
  lpass: /^(add|edit|generate|rm|mv|duplicate|import|share|logout|passwd)$/,
};
const passwordStore: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  const [verb, sub] = operands(args).map((a) => a.text);
  // A group's verb follows it (`gopass recipients add`); the group alone lists.
  const said = [verb, `${verb} ${sub}`].find((v) => v && PASSWORD_STORE_CHANGES[prog]!.test(v));
  if (said && !onlyAsksAbout(args)) danger(st, `changes the user's password store (${prog} ${said})`);
};

/** Codecov's uploaders send the coverage report, with the paths and lines of the source, to codecov.io. */
const codecov: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  const verb = operands(args)[0]?.text;
  const uploads =
    prog === 'codecov' ? !onlyAsksAbout(args) : /^(upload-process|do-upload|upload-coverage|create-commit|create-report|send-notifications)$/.test(verb ?? '');
  if (uploads) danger(st, `uploads a coverage report to another host (${prog}${prog === 'codecovcli' ? ` ${verb}` : ''})`);
};

/**
 * Coveralls' uploaders (Python's coveralls, node-coveralls, goveralls) send the coverage report, with
 * the source's paths and lines, to coveralls.io; `debug` and `--output` only print or write it here.
 */
const coveralls: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  const local = operands(args)[0]?.text === 'debug' || args.some((a) => /^(--output|--dry-run|-n)(=|$)/.test(a.text));
  if (!onlyAsksAbout(args) && !local) danger(st, `uploads a coverage report to another host (${prog})`);
};

/**
 * Lerna's `version` commits the new versions, tags them and pushes both to the remote (and may create
 * the forge's releases) unless told to keep them here; its `publish` sends the packages out.
 */
const lerna: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  judgeUnknownProgram(prog, args, st);
  const verb = operands(args)[0]?.text;
  if (verb === 'version' && !args.some((a) => /^--(no-push|no-git-tag-version|help)$/.test(a.text)))
    danger(st, `pushes a release's commit and tags to the remote (${prog} version)`);
};

/**
 * mise manages the user's tools: `use -g` and `settings set` change every shell's tools and settings,
 * `bootstrap` sets the machine up (except its `plan`), and a tool from a code host's releases
 * (`gitlab:owner/repo`, `forgejo:…`, `github:…`, `ubi:…`) is a binary its author built, downloaded and
 * put on the PATH; a registry tool pinned for the project (`mise use terragrunt@0.95.0`) is the project's.
 */
const MISE_FORGE_TOOL = /^"?(gitlab|forgejo|github|gitea|ubi|http|https):/;
const mise: Rule = ({ prog, args, st, judge }) => {
  st.repeatable = false;
  const ops = operands(args, /^(-C|--cd|-E|--env|-j|--jobs|-p|--path)$/).map((a) => a.text);
  const [verb = '', sub = ''] = ops;
  // `mise exec node@20 -- node x.js` runs its command with those tools: judged as that command.
  const dashes = args.findIndex((a) => a.text === '--');
  if (/^(exec|x)$/.test(verb) && dashes >= 0) return judge(args.slice(dashes + 1));
  judgeUnknownProgram(prog, args, st);
  const global = args.some((a) => /^(-g|--global)$/.test(a.text));
  if ((verb === 'use' || verb === 'u') && global) return danger(st, `changes the user's tools for every shell (${prog} use -g)`);
  if (verb === 'settings' && /^(set|add)$/.test(sub) && !args.some((a) => /^(-l|--local)$/.test(a.text)))
    return danger(st, `changes the user's mise settings (${prog} settings ${sub})`);
  if (verb === 'bootstrap' && !ops.includes('plan')) return danger(st, `sets the machine up (${prog} bootstrap)`);
  const forge = /^(use|u|install|i)$/.test(verb) ? ops.slice(1).find((o) => MISE_FORGE_TOOL.test(o)) : undefined;
  if (forge) danger(st, `installs a binary from a code host's releases (${prog} ${verb} ${forge})`);
};

/**
 * The language version managers (rbenv, pyenv, nodenv, goenv, jenv, tfenv, nvm, SDKMAN's `sdk`, fvm and their kin) keep the
 * user's interpreters in the home: removing, adding or making one the default (`global`, tfenv's `use`),
 * creating pyenv's virtualenvs there, plugins and `init`'s edit of the shell's startup files change
 * every later shell's tools. An install keeps the new version beside the others in the manager's own
 * store, as a tool store keeps its VMs, and no shell runs it until a version is chosen; tfenv's and
 * tgenv's installs may switch to it, so they stay changes. Choosing one for this directory or this shell
 * (`local`, `shell`, `pin`), listing and printing (`install -l`, `init -`, pyenv's bare `init`, which only
 * prints how to set it up) stay with the project.
 */
const VERSION_MANAGER_CHANGES =
  /^(install|uninstall|global|add|remove|rehash|enable-plugin|disable-plugin|virtualenv|virtualenv-delete|update|macos-javahome)$/;
const versionManager: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  const ops = operands(args).map((a) => a.text);
  const verb = ops[0] ?? '';
  const lists = args.some((a) => /^(-l|-L|--list|--list-all|-h|--help)$/.test(a.text));
  const changes =
    // nvm keeps each node it installs beside the others in its own store (~/.nvm/versions, as fnm and volta do);
    // the default every later shell starts with is changed by `alias default`, below.
    (VERSION_MANAGER_CHANGES.test(verb) &&
      !lists &&
      !(prog === 'nvm' && /^(install|uninstall)$/.test(verb)) &&
      !(verb === 'install' && !/^(tfenv|tgenv)$/.test(prog)) &&
      !/^(sdk|fvm)$/.test(prog)) ||
    // tfenv's and tgenv's `use` switch the user's default; `init` without `-` edits the startup files.
    (verb === 'use' && /^(tfenv|tgenv)$/.test(prog)) ||
    // nvm's default alias is the node every later shell starts with; SDKMAN's `default` and fvm's `global` are the same choice.
    (verb === 'alias' && ops[1] === 'default' && prog === 'nvm') ||
    (verb === 'default' && prog === 'sdk') ||
    (verb === 'global' && prog === 'fvm') ||
    (verb === 'init' && !args.some((a) => a.text === '-') && !(prog === 'pyenv' && args.length === 1));
  if (changes) danger(st, `changes the user's ${prog} versions or setup, in the home for every later shell (${prog} ${verb})`);
};

/** tbump bumps the version, commits, tags and pushes both, unless told not to push (`--no-push`, `--only-patch`, `--dry-run`). */
const tbump: Rule = ({ args, st }) => {
  st.repeatable = false;
  const [version] = operands(args).map((a) => a.text);
  if (version && version !== 'init' && !onlyAsksAbout(args) && !args.some((a) => /^(--no-push|--only-patch|--dry-run)$/.test(a.text)))
    danger(st, `pushes a version's commit and tag, which publishes a release (tbump ${version})`);
};

export const PACKAGE_RULES: RuleTable = {
  programs: {
    mise,
    tbump,
    ...Object.fromEntries(
      ['rbenv', 'pyenv', 'nodenv', 'goenv', 'jenv', 'plenv', 'phpenv', 'tfenv', 'tgenv', 'swiftenv', 'luaenv', 'scalaenv', 'nvm', 'sdk', 'fvm'].map((p) => [
        p,
        versionManager,
      ]),
    ),
    devpi,
    keyring,
    codecov,
    codecovcli: codecov,
    coveralls,
    goveralls: coveralls,
    ...Object.fromEntries(Object.keys(PASSWORD_STORE_CHANGES).map((p) => [p, passwordStore])),
    npm,
    'web-ext': webExt,
    // The stores' upload clients send the packed extension for review and release (`chrome-webstore-upload-cli`, `amo-upload`).
    ...Object.fromEntries(
      ['chrome-webstore-upload', 'chrome-webstore-upload-cli', 'chrome-extension-upload', 'amo-upload'].map((p): [string, Rule] => [
        p,
        ({ prog, args, st }) => {
          if (!onlyAsksAbout(args)) danger(st, toStores(prog));
        },
      ]),
    ),
    wxt,
    pnpm: npm,
    // pnpm's short name, installed with it.
    pn: npm,
    yarn: npm,
    bun: npm,
    npx,
    pnpx: npx,
    bunx: npx,
    lerna,
    pip,
    pip3: pip,
    pipx,
    pdm,
    nuget: (ctx) => {
      publishes(['push', 'delete'], toRegistry)(ctx);
      nugetSettings(ctx.prog, ctx.args, ctx.st);
      judgeUnknownProgram(ctx.prog, ctx.args, ctx.st);
    },
    twine: publishes(['upload', 'push', 'register'], toRegistry),
    // CPAN's uploader sends a distribution to PAUSE, which publishes it (`cpan-upload Dist-1.0.tar.gz`).
    'cpan-upload': uploadsUnless(dryRun),
    // Debian's uploaders send a signed source package to an archive or a Launchpad PPA, which builds and
    // publishes it (`dput ppa:team/stable x_source.changes`); `-s` only simulates. debsign signs the upload
    // with the user's secret key.
    dput: uploadsUnless(simulatesUpload),
    dupload: uploadsUnless(simulatesUpload),
    debsign: ({ args, st }) => {
      if (!onlyAsksAbout(args)) danger(st, "signs a package's upload with the user's secret key (debsign)");
    },
    gem: publishes(['upload', 'push'], toRegistry),
    ...Object.fromEntries(['poetry', 'hatch', 'flit', 'deno', 'jsr', 'vsce', 'ovsx'].map((p) => [p, publishes(['publish'], toRegistry)])),
    uv,
    ...Object.fromEntries(['docker', 'podman', 'nerdctl', 'buildah', 'skopeo', 'docker-compose', 'podman-compose'].map((p) => [p, images])),
    // Local development environments start, stop and destroy the project's own containers; what they run
    // inside one is judged as a command there (programs/executors.ts). DDEV's own commands that reach past
    // them: the hosting provider's database and files pulled or pushed, the project shared on the internet,
    // the user's SSH keys handed to the containers, its global configuration (every project's) changed.
    'wp-env': () => {},
    // Devbox's packages are the project's (devbox.json); its `global` ones are the user's, on every later shell's PATH.
    devbox: ({ args, st }) => {
      const [cmd = '', sub = ''] = operands(args).map((a) => a.text);
      if (cmd === 'global' && /^(add|rm|remove|install|update|pull|push)$/.test(sub))
        danger(st, `changes the user's global Devbox packages, on every later shell's PATH (devbox global ${sub})`);
    },
    ddev: ({ args, st }) => {
      const [cmd = '', sub = ''] = operands(args).map((a) => a.text);
      if (/^(auth|pull|push|share)$/.test(cmd) || (cmd === 'config' && sub === 'global'))
        danger(st, `reaches past the project's containers: a hosting provider, the internet, the user's SSH keys or every project's settings (ddev ${cmd})`);
    },
  },
};
