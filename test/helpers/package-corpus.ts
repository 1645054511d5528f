// Real packages from the public registries, fetched once per machine into a folder outside the
// tests' temporary directories, then served on loopback: npm tarballs through the loopback npm
// registry (./npm-registry.ts), Python wheels and sdists as a `--find-links` page. The sandbox
// never reaches the internet: setup installs from these servers through the egress proxy.
import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import type { NpmRegistry } from './npm-registry.js';
import { tempDirSync } from './temp.js';

/** Where fetched packages are kept between runs (outside /tmp, which test runs clean). */
const CORPUS = process.env.AGENTRUN_PACKAGE_CORPUS ?? '/var/tmp/agentrun-package-corpus';

/** `npm pack SPEC`'s tarball (e.g. semver@7.6.3), fetched from the npm registry the first time. */
export function npmTarball(spec: string): string {
  const dir = join(CORPUS, 'npm');
  mkdirSync(dir, { recursive: true });
  const file = `${spec.replace(/^@/, '').replace('/', '-').replace(/@/, '-')}.tgz`;
  if (!existsSync(join(dir, file))) execFileSync('npm', ['pack', spec, '--silent', '--pack-destination', dir], { stdio: 'pipe' });
  return join(dir, file);
}

/**
 * A folder of Python distributions: `wheels` (with their dependencies) and `sdists` (source only,
 * built at install time), fetched with pip the first time.
 */
export function pythonDists(name: string, wheels: string[], sdists: string[] = []): string {
  const dir = join(CORPUS, 'python', name);
  if (existsSync(join(dir, '.complete'))) return dir;
  mkdirSync(dir, { recursive: true });
  const pip = (args: string[]) => execFileSync('python3', ['-m', 'pip', 'download', '--quiet', '--dest', dir, ...args], { stdio: 'pipe' });
  if (wheels.length) pip(['--only-binary', ':all:', ...wheels]);
  if (sdists.length) pip(['--no-deps', '--no-binary', ':all:', ...sdists]);
  execFileSync('touch', [join(dir, '.complete')]);
  return dir;
}

export interface FindLinks {
  /** The page pip reads with `--no-index --find-links URL`. */
  url: string;
  port: number;
  /** Files downloaded so far (an install that ran, not a cache restore). */
  downloads(): number;
  close(): Promise<void>;
}

/** Serve the distributions of `dir` on 127.0.0.1: an HTML page of links, and the files. */
export async function startFindLinks(dir: string): Promise<FindLinks> {
  const files = readdirSync(dir).filter((f) => /\.(whl|tar\.gz|zip)$/.test(f));
  let downloads = 0;
  const server: Server = createServer((req, res) => {
    const name = decodeURIComponent((req.url ?? '/').split('?')[0]!).replace(/^\//, '');
    if (!name) {
      res.writeHead(200, { 'content-type': 'text/html' });
      return void res.end(`<html><body>${files.map((f) => `<a href="/${f}">${f}</a><br>`).join('\n')}</body></html>`);
    }
    if (!files.includes(name)) return void res.writeHead(404).end();
    downloads++;
    const data = readFileSync(join(dir, name));
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': data.length });
    res.end(data);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return { url: `http://127.0.0.1:${port}/`, port, downloads: () => downloads, close: () => new Promise<void>((r) => server.close(() => r())) };
}

export interface Project {
  files: Record<string, string>;
  setup: string;
  maintenance?: string;
  verify: string;
  /** The agent's change (a path and its new content), which verify must see through the installed environment. */
  edit: [string, string];
  /** Files made from `files` before the commit (a lockfile), as a repository commits them. */
  lock?: () => Promise<Record<string, string>>;
  /** Downloads from the registry the project installs from so far. */
  downloads(): number;
}

/** The environment verify reports besides its checks: every variable, sorted. */
const PRINT_ENV = 'env | LC_ALL=C sort';

/** package-lock.json of an npm project of `files`, resolved against the loopback registry. */
async function npmLock(npm: NpmRegistry, files: Record<string, string>): Promise<Record<string, string>> {
  const dir = tempDirSync('agentrun-corpus-lock-');
  for (const [p, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, p)), { recursive: true });
    writeFileSync(join(dir, p), content);
  }
  await promisify(execFile)('npm', ['install', '--package-lock-only', '--no-audit', '--no-fund', '--registry', npm.url, '--cache', join(dir, '.npm-cache')], {
    cwd: dir,
  });
  return { 'package-lock.json': readFileSync(join(dir, 'package-lock.json'), 'utf8') };
}

/** The Python distributions the corpus installs: the build backends, uv, and an sdist built at install. */
export const CORPUS_PYTHON = { name: 'editable-builds-v3', wheels: ['setuptools', 'wheel', 'hatchling', 'editables', 'uv'], sdists: ['six==1.16.0'] };

/**
 * The corpus: editable installs with setuptools (an sdist dependency built at install, a message
 * catalogue compiled at maintenance) and hatchling (a module generated at maintenance), a uv venv
 * (uv itself installed at setup, an editable install into the venv it made), and an npm-workspaces
 * monorepo (a real package with a .bin link, code generated at maintenance).
 */
export function corpusProjects(pypi: FindLinks, npm: NpmRegistry): { setuptools: Project; hatchling: Project; uv: Project; npmWorkspaces: Project } {
  const setuptools: Project = {
    files: {
      'pyproject.toml':
        '[build-system]\nrequires = ["setuptools>=64", "wheel"]\nbuild-backend = "setuptools.build_meta"\n\n[project]\nname = "corpus-st"\nversion = "0.1.0"\ndependencies = ["six"]\n\n[tool.setuptools.packages.find]\nwhere = ["src"]\n',
      'src/corpus_st/__init__.py':
        'import pathlib\nfrom .value import VALUE\n\ndef greeting():\n    return (pathlib.Path(__file__).parent / "messages.mo").read_text().strip()\n',
      'src/corpus_st/value.py': 'VALUE = 1\n',
      'locale/messages.po': 'msgid "hello"\nmsgstr "bonjour"\n',
      'tools/compile_messages.py':
        'import re, pathlib\npo = pathlib.Path("locale/messages.po").read_text()\npathlib.Path("src/corpus_st/messages.mo").write_text(re.findall(r\'msgstr "(.*)"\', po)[0] + "\\n")\n',
      '.gitignore': '.venv/\n*.egg-info/\nsrc/corpus_st/messages.mo\n',
    },
    setup: `python3 -m venv .venv && .venv/bin/pip install --quiet --no-index --find-links ${pypi.url} -e .`,
    maintenance: '.venv/bin/python tools/compile_messages.py',
    verify: `.venv/bin/python -c "import corpus_st, six; print(corpus_st.__file__, corpus_st.VALUE, corpus_st.greeting(), six.__version__); assert corpus_st.VALUE == 2" && .venv/bin/python -m pip list --format freeze && ${PRINT_ENV}`,
    edit: ['src/corpus_st/value.py', 'VALUE = 2'],
    downloads: () => pypi.downloads(),
  };

  const hatchling: Project = {
    files: {
      'pyproject.toml':
        '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n\n[project]\nname = "corpus-hl"\nversion = "0.1.0"\ndependencies = ["six"]\n\n[tool.hatch.build.targets.wheel]\npackages = ["src/corpus_hl"]\n',
      'src/corpus_hl/__init__.py': 'from .value import VALUE\nfrom ._generated import BUILT_FROM\n',
      'src/corpus_hl/value.py': 'VALUE = 1\n',
      'tools/codegen.py':
        'import pathlib\npathlib.Path("src/corpus_hl/_generated.py").write_text("BUILT_FROM = %r\\n" % sorted(p.name for p in pathlib.Path("src/corpus_hl").glob("*.py") if not p.name.startswith("_")))\n',
      '.gitignore': '.venv/\nsrc/corpus_hl/_generated.py\n',
    },
    setup: `python3 -m venv .venv && .venv/bin/pip install --quiet --no-index --find-links ${pypi.url} -e .`,
    maintenance: '.venv/bin/python tools/codegen.py',
    verify: `.venv/bin/python -c "import corpus_hl; print(corpus_hl.__file__, corpus_hl.VALUE, corpus_hl.BUILT_FROM); assert corpus_hl.VALUE == 2" && cat .venv/lib/python3*/site-packages/*corpus_hl*.pth && echo && ${PRINT_ENV}`,
    edit: ['src/corpus_hl/value.py', 'VALUE = 2'],
    downloads: () => pypi.downloads(),
  };

  // uv's own layout: the venv `uv venv` makes (its pyvenv.cfg, activate scripts naming the venv's
  // path), and `uv pip install -e .` through hatchling (build isolation from the same find-links).
  const uvFindLinks = `--no-index --find-links ${pypi.url}`;
  const uv: Project = {
    files: {
      'pyproject.toml':
        '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n\n[project]\nname = "corpus-uv"\nversion = "0.1.0"\ndependencies = ["six"]\n\n[tool.hatch.build.targets.wheel]\npackages = ["src/corpus_uv"]\n',
      'src/corpus_uv/__init__.py': 'from .value import VALUE\n',
      'src/corpus_uv/value.py': 'VALUE = 1\n',
      '.gitignore': '.tools/\n.venv/\n',
    },
    setup: [
      `python3 -m venv .tools && .tools/bin/pip install --quiet ${uvFindLinks} uv`,
      'UV_PYTHON_DOWNLOADS=never .tools/bin/uv venv --quiet --python python3 .venv',
      `.tools/bin/uv pip install --quiet --no-cache --python .venv/bin/python ${uvFindLinks} -e .`,
    ].join(' && '),
    verify: `.venv/bin/python -c "import corpus_uv, six; print(corpus_uv.__file__, corpus_uv.VALUE, six.__version__); assert corpus_uv.VALUE == 2" && cat .venv/lib/python3*/site-packages/*corpus_uv*.pth && echo && grep -h "^VIRTUAL_ENV=" .venv/bin/activate && grep -h "^uv = " .venv/pyvenv.cfg && ${PRINT_ENV}`,
    edit: ['src/corpus_uv/value.py', 'VALUE = 2'],
    downloads: () => pypi.downloads(),
  };

  const files: Record<string, string> = {
    'package.json': JSON.stringify(
      { name: 'corpus-mono', private: true, workspaces: ['packages/*'], scripts: { test: 'npm test --workspaces --if-present' } },
      null,
      2,
    ),
    'packages/lib/package.json': JSON.stringify({ name: '@corpus/lib', version: '1.0.0', main: 'index.js', dependencies: { ms: '2.1.3' } }),
    'packages/lib/index.js': "const ms = require('ms');\nmodule.exports = { day: () => ms('1d'), value: require('./value') };\n",
    'packages/lib/value.js': 'module.exports = 1;\n',
    'packages/app/package.json': JSON.stringify({
      name: '@corpus/app',
      version: '1.0.0',
      dependencies: { '@corpus/lib': '1.0.0', semver: '7.6.3' },
      scripts: { test: 'node test.js && semver 1.2.3 -r ">1.0.0"' },
    }),
    'packages/app/test.js':
      "const lib = require('@corpus/lib');\nconst gen = require('./generated');\nconsole.log('app', lib.day(), lib.value, gen.at);\nif (lib.value !== 2) process.exit(1);\n",
    'scripts/gen.js':
      "require('fs').writeFileSync('packages/app/generated.js', 'module.exports = { at: ' + JSON.stringify(require('./../packages/lib/package.json').version) + ' };\\n');\n",
    '.gitignore': 'node_modules/\npackages/app/generated.js\n',
  };
  const npmWorkspaces: Project = {
    files,
    lock: () => npmLock(npm, files),
    setup: `npm ci --no-audit --no-fund --registry ${npm.url}`,
    maintenance: 'node scripts/gen.js',
    verify: `npm test --silent && find node_modules/.bin node_modules/@corpus -maxdepth 1 -type l -printf '%p -> %l\\n' | LC_ALL=C sort && ${PRINT_ENV}`,
    edit: ['packages/lib/value.js', 'module.exports = 2;'],
    downloads: () => npm.tarballRequests(),
  };
  return { setuptools, hatchling, uv, npmWorkspaces };
}

/** Every entry of a workspace but .git and Python's bytecode caches: a file's content hash and mode, a link's target. */
export function treeOf(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (rel: string) => {
    for (const name of readdirSync(join(dir, rel))) {
      const p = rel ? `${rel}/${name}` : name;
      if (p === '.git' || name === '__pycache__') continue;
      const st = lstatSync(join(dir, p));
      if (st.isSymbolicLink()) out[p] = `link ${readlinkSync(join(dir, p))}`;
      else if (st.isDirectory()) walk(p);
      else
        out[p] = `${(st.mode & 0o111) !== 0 ? 'x' : '-'} ${createHash('sha256')
          .update(readFileSync(join(dir, p)))
          .digest('hex')}`;
    }
  };
  walk('');
  return out;
}
