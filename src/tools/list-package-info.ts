// list_package_info: what a directory is (README head, nearest manifest, recent git changes).
import path from 'node:path';
import { z } from 'zod';
import { readdirAt } from '../workspace/beneath.js';
import { withLocated, workspaceRoot } from './confine.js';
import { DEFAULT_SANDBOX, runInSandbox } from '../sandbox/index.js';
import { listDirectory } from './files.js';
import { pathParam } from './params.js';
import { ToolError, type ToolContext, type ToolDefinition, type ToolResult } from './types.js';

const README_LINES = 60;
const README_BYTES = 4_000;
const MANIFEST_BYTES = 4_000;
const LOG_BYTES = 4_000;
const ENTRIES = 40;
/** Read at most this much of a README or manifest (they are clipped far below it). */
const READ_BYTES = 64 * 1024;

/**
 * A file of the package, read as read_file would: through a symlink only when it stays inside
 * the workspace, never a FIFO or device, at most READ_BYTES. Undefined (with a note) when refused.
 */
async function readPackageFile(ctx: ToolContext, rel: string, notes: string[]): Promise<string | undefined> {
  try {
    return (await withLocated(ctx.workspace, rel, { mustExist: true }, (l) => l.read({ headBytes: READ_BYTES }))).toString('utf8');
  } catch (e) {
    if (!(e instanceof ToolError)) throw e;
    notes.push(e.message);
    return undefined;
  }
}

const MANIFESTS = [
  'package.json',
  'pyproject.toml',
  'setup.py',
  'setup.cfg',
  'requirements.txt',
  'go.mod',
  'Cargo.toml',
  'pom.xml',
  'build.gradle',
  'build.gradle.kts',
  'composer.json',
  'Gemfile',
  'mix.exs',
  'CMakeLists.txt',
  'deno.json',
  'pubspec.yaml',
];

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}\n[… ${text.length - max} more characters]`;
}

/** package.json says most in a few fields; the rest (lockfile-ish noise) is left out. */
function summarizePackageJson(text: string): string {
  try {
    const pkg = JSON.parse(text) as Record<string, unknown>;
    const pick: Record<string, unknown> = {};
    for (const k of [
      'name',
      'version',
      'description',
      'type',
      'main',
      'module',
      'bin',
      'exports',
      'workspaces',
      'engines',
      'scripts',
      'dependencies',
      'devDependencies',
      'peerDependencies',
    ]) {
      if (pkg[k] !== undefined) pick[k] = pkg[k];
    }
    return clip(JSON.stringify(pick, null, 2), MANIFEST_BYTES);
  } catch {
    return clip(text, MANIFEST_BYTES);
  }
}

/** The names in directory `rel` of the workspace, read beneath its root; [] when it is not one. */
async function namesIn(ctx: ToolContext, rel: string): Promise<string[]> {
  return withLocated(ctx.workspace, rel, { mustExist: true }, async (l) => {
    const d = await l.openDir();
    try {
      return (await readdirAt(d)).map((e) => e.name);
    } finally {
      await d.close();
    }
  }).catch((e: unknown) => (e instanceof ToolError ? [] : Promise.reject(e)));
}

/** `name` inside the workspace-relative directory `dir` ('.' for the root). */
const join = (dir: string, name: string) => (dir === '.' ? name : `${dir}/${name}`);

async function listPackageInfoTool(args: z.output<typeof schema>, ctx: ToolContext): Promise<ToolResult> {
  const root = await workspaceRoot(ctx.workspace);
  const { shown, entries } = await withLocated(ctx.workspace, args.path, { mustExist: true }, async (loc) => {
    if ((await loc.kind()) !== 'dir') throw new ToolError(`${loc.rel} is a file; give the package's directory.`);
    return { shown: loc.rel, entries: await listDirectory(loc) };
  });
  const parts: string[] = [`# Package info for ${shown}`];

  const names = await namesIn(ctx, shown);
  const refused: string[] = [];
  const readme = names.filter((n) => /^readme(\.(md|markdown|rst|txt|adoc))?$/i.test(n)).sort()[0];
  const readmeText = readme === undefined ? undefined : await readPackageFile(ctx, join(shown, readme), refused);
  if (readme && readmeText !== undefined) {
    const text = readmeText;
    const lines = text.split('\n');
    let head = lines.slice(0, README_LINES).join('\n');
    head = clip(head, README_BYTES);
    const more = lines.length > README_LINES ? `\n[… ${lines.length - README_LINES} more lines; read_file ${join(shown, readme)} for the rest]` : '';
    parts.push(`## ${readme} (beginning)\n${head}${more}`);
  } else parts.push('## README\n(none in this directory)');

  // The manifest of this directory, else of the nearest enclosing package inside the workspace.
  let dir = shown;
  const found: string[] = [];
  for (;;) {
    const here = dir === shown ? names : await namesIn(ctx, dir);
    for (const m of MANIFESTS) if (here.includes(m)) found.push(join(dir, m));
    if (found.length || dir === '.') break;
    dir = path.posix.dirname(dir);
  }
  if (found.length) {
    for (const rel of found.slice(0, 3)) {
      const text = await readPackageFile(ctx, rel, refused);
      if (text === undefined) continue;
      const where = path.posix.dirname(rel) === shown ? '' : ' (nearest enclosing package)';
      parts.push(`## ${rel}${where}\n${path.posix.basename(rel) === 'package.json' ? summarizePackageJson(text) : clip(text, MANIFEST_BYTES)}`);
    }
  } else parts.push('## Manifest\n(no package manifest found here or above, up to the workspace root)');

  const listing = entries.slice(0, ENTRIES).map((e) => `${e.name}${e.isDir ? '/' : ''}`);
  parts.push(
    `## Entries (${entries.length})\n${listing.join('\n') || '(empty)'}${entries.length > ENTRIES ? `\n[… ${entries.length - ENTRIES} more; use list_files]` : ''}`,
  );

  parts.push(`## Recent changes (git log -n 5 --stat)\n${await recentChanges(ctx, root, shown)}`);

  if (refused.length) parts.push(`## Not read\n${refused.join('\n')}`);
  return { ok: true, output: parts.join('\n\n'), meta: { path: shown, readme: readme ?? null, manifests: found } };
}

/**
 * The last commits touching `rel`, read by git in the command sandbox like any command of the
 * agent's: the workspace's .git is the agent's, its configuration may run programs.
 */
async function recentChanges(ctx: ToolContext, root: string, rel: string): Promise<string> {
  const quoted = `'${rel.replace(/'/g, `'\\''`)}'`;
  const settings = { ...(ctx.sandbox ?? DEFAULT_SANDBOX), network: 'off' as const };
  let out = '';
  const r = await runInSandbox(
    {
      command: `git -C ${quoted} log -n 5 --stat --date=short --format='%h %ad %an: %s' -- . 2>&1`,
      workspace: root,
      settings: settings.policy === 'off' ? settings : { ...settings, policy: 'read-only' },
      timeoutSec: 20,
      baseEnv: {},
    },
    {
      onOutput: (c, fd) => {
        if (fd === 1 && out.length < LOG_BYTES * 4) out += c.toString('utf8');
      },
    },
  );
  const code = r.error ? -1 : r.exitCode;
  const text = out.trim();
  if (code === 0) return clip(text || '(no commits touch this directory)', LOG_BYTES);
  if (/not a git repository/.test(text)) return '(not a git repository)';
  if (/does not have any commits|bad default revision/.test(text)) return '(no commits yet)';
  return `(git log failed: ${clip(text, 500)})`;
}

const schema = z.object({
  path: pathParam('The package (source directory) to describe, relative to the workspace root.'),
});

export const listPackageInfo: ToolDefinition<typeof schema> = {
  name: 'list_package_info',
  description:
    'Describe a package or source directory: the beginning of its README, its manifest (package.json, pyproject.toml, go.mod, Cargo.toml, … of the directory or the nearest enclosing package), its entries, and the last 5 git commits that touched it with the files they changed.',
  schema,
  kind: 'read',
  example: '<list_package_info>\n<path>packages/api</path>\n</list_package_info>',
  run: listPackageInfoTool,
};
