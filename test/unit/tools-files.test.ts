// File tools on real temporary git repositories, including hostile inputs.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync, openSync, writeSync, closeSync, ftruncateSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { resolveInWorkspace } from '../../src/tools/confine.js';
import { runTool, ToolError } from '../../src/tools/index.js';
import { parseDiff } from '../../src/tools/replace-in-file.js';
import { extractDefinitions } from '../../src/tools/list-code-definition-names.js';
import { tempDirSync } from '../helpers/temp.js';

const dirs: string[] = [];
function repo(files: Record<string, string | Buffer> = {}, commit = true): string {
  const dir = tempDirSync('agentrun-tools-');
  dirs.push(dir);
  execFileSync('git', ['init', '-q', '-b', 'main', dir]);
  execFileSync('git', ['-C', dir, 'config', 'user.email', 't@example.com']);
  execFileSync('git', ['-C', dir, 'config', 'user.name', 'T']);
  for (const [p, c] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, p)), { recursive: true });
    writeFileSync(path.join(dir, p), c);
  }
  if (commit && Object.keys(files).length) {
    execFileSync('git', ['-C', dir, 'add', '-A']);
    execFileSync('git', ['-C', dir, 'commit', '-q', '-m', 'init']);
  }
  return dir;
}
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

let ws: string;
const run = (name: string, args: Record<string, unknown>) => runTool(name, args, { workspace: ws });

describe('confinement', () => {
  beforeEach(() => {
    ws = repo({ 'src/a.ts': 'a\n', 'inner/x.txt': 'x' });
  });

  it('refuses ../ escapes, absolute paths and home paths', async () => {
    await expect(resolveInWorkspace(ws, '../outside.txt')).rejects.toThrow(ToolError);
    await expect(resolveInWorkspace(ws, 'src/../../x')).rejects.toThrow(/outside the workspace/);
    await expect(resolveInWorkspace(ws, '/etc/passwd')).rejects.toThrow(/Absolute paths are not allowed/);
    await expect(resolveInWorkspace(ws, path.join(ws, 'src/a.ts'))).rejects.toThrow(/Use "src\/a.ts" instead/);
    await expect(resolveInWorkspace(ws, '~/.ssh/id_rsa')).rejects.toThrow(/Home-relative/);
    expect(await resolveInWorkspace(ws, 'src/../src/a.ts')).toBe(path.join(readlinkReal(ws), 'src/a.ts'));
  });

  it('refuses a symlink to /etc for reads and writes, anywhere on the path', async () => {
    symlinkSync('/etc', path.join(ws, 'etc_link'));
    for (const p of ['etc_link', 'etc_link/passwd', 'etc_link/new.txt']) {
      await expect(resolveInWorkspace(ws, p)).rejects.toThrow(/symbolic link .* outside the workspace/);
    }
    const r = await run('read_file', { path: 'etc_link/passwd' });
    expect(r.ok).toBe(false);
    expect(r.output).toMatch(/outside the workspace/);
    const w = await run('write_to_file', { path: 'etc_link/evil', content: 'x' });
    expect(w.ok).toBe(false);
    const l = await run('list_files', { path: 'etc_link' });
    expect(l.ok).toBe(false);
  });

  it('refuses a dangling symlink that points outside (a write would create the file there)', async () => {
    const outside = tempDirSync('agentrun-outside-');
    dirs.push(outside);
    symlinkSync(path.join(outside, 'created.txt'), path.join(ws, 'dangling'));
    const w = await run('write_to_file', { path: 'dangling', content: 'pwned' });
    expect(w.ok).toBe(false);
    expect(readdirSync(outside)).toEqual([]);
  });

  it('allows symlinks that stay inside the workspace', async () => {
    symlinkSync('src', path.join(ws, 'srclink'));
    const r = await run('read_file', { path: 'srclink/a.ts' });
    expect(r).toMatchObject({ ok: true, output: 'a\n' });
  });
});

function readlinkReal(p: string): string {
  return execFileSync('realpath', [p]).toString().trim();
}

describe('read_file', () => {
  beforeEach(() => {
    ws = repo({ 'a.txt': 'one\ntwo\nthree\nfour\n' });
  });

  it('reads a whole file and line ranges', async () => {
    expect(await run('read_file', { path: 'a.txt' })).toMatchObject({ ok: true, output: 'one\ntwo\nthree\nfour\n' });
    const r = await run('read_file', { path: 'a.txt', start_line: '2', end_line: '3' });
    expect(r.ok).toBe(true);
    expect(r.output).toBe('[a.txt, lines 2-3]\ntwo\nthree\n');
    const tail = await run('read_file', { path: 'a.txt', start_line: 4 });
    expect(tail.output).toContain('four');
    expect((await run('read_file', { path: 'a.txt', start_line: 9 })).output).toMatch(/fewer than 9 lines/);
    expect((await run('read_file', { path: 'a.txt', start_line: 3, end_line: 2 })).output).toMatch(/before start_line/);
  });

  it('reports missing files and directories clearly', async () => {
    expect((await run('read_file', { path: 'nope.txt' })).output).toMatch(/no such file/);
    mkdirSync(path.join(ws, 'd'));
    expect((await run('read_file', { path: 'd' })).output).toMatch(/is a directory; use list_files/);
  });

  it('refuses binary files', async () => {
    writeFileSync(path.join(ws, 'img.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48]));
    const r = await run('read_file', { path: 'img.png' });
    expect(r.ok).toBe(false);
    expect(r.output).toMatch(/binary file/);
  });

  it('handles invalid UTF-8 with replacement characters and a note', async () => {
    writeFileSync(path.join(ws, 'latin1.txt'), Buffer.from('caf\xe9 cr\xe8me\n', 'latin1'));
    const r = await run('read_file', { path: 'latin1.txt' });
    expect(r.ok).toBe(true);
    expect(r.output).toContain('caf\ufffd');
    expect(r.output).toMatch(/not valid UTF-8/);
  });

  it('returns head and tail of a 200 MB file quickly, without reading the middle', async () => {
    const p = path.join(ws, 'big.log');
    // Text at both ends, a sparse hole in the middle: 200 MB on paper, a few KB on disk.
    const fd = openSync(p, 'w');
    const head = Array.from({ length: 5000 }, (_, i) => `head line ${i + 1}`).join('\n') + '\n';
    writeSync(fd, head);
    const size = 200 * 1024 * 1024;
    ftruncateSync(fd, size - 100_000);
    const tail = Array.from({ length: 8000 }, (_, i) => `tail line ${i + 1}`).join('\n') + '\n';
    writeSync(fd, tail.slice(-100_000), size - 100_000);
    closeSync(fd);
    expect(statSync(p).size).toBe(size);
    const t0 = Date.now();
    const r = await run('read_file', { path: 'big.log' });
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(r.ok).toBe(true);
    expect(r.output.startsWith('head line 1\n')).toBe(true);
    expect(r.output).toMatch(/\[\.\.\. [\d.]+ MB omitted \(after line \d+; the file is too large to count its lines\)/);
    expect(r.output).toMatch(/start_line and end_line/);
    expect(r.output.trimEnd().endsWith('tail line 8000')).toBe(true);
    expect(r.output.length).toBeLessThan(100_000);
    expect(r.meta?.truncated).toBe(true);
  });

  it('numbers the omitted lines of a moderately large file', async () => {
    const text = Array.from({ length: 40_000 }, (_, i) => `line ${i + 1}`).join('\n') + '\n';
    writeFileSync(path.join(ws, 'mid.txt'), text);
    const r = await run('read_file', { path: 'mid.txt' });
    const m = /omitted \(lines (\d+)-(\d+) of 40000\)/.exec(r.output);
    expect(m).not.toBeNull();
    const lastHead = Number(m![1]) - 1;
    expect(r.output).toContain(`line ${lastHead}\n`);
    expect(r.output).toContain(`\nline ${Number(m![2]) + 1}\n`);
    expect(r.output.trimEnd().endsWith('line 40000')).toBe(true);
    const range = await run('read_file', { path: 'mid.txt', start_line: 20_000, end_line: 20_002 });
    expect(range.output).toBe('[mid.txt, lines 20000-20002]\nline 20000\nline 20001\nline 20002\n');
  });
});

describe('write_to_file', () => {
  beforeEach(() => {
    ws = repo({ 'keep.txt': 'keep' });
  });

  it('creates directories, overwrites atomically and leaves no temp files', async () => {
    const r = await run('write_to_file', { path: 'deep/er/new.ts', content: 'export const x = 1;\n' });
    expect(r).toMatchObject({ ok: true });
    expect(r.output).toMatch(/Created deep\/er\/new.ts \(1 lines/);
    expect(readFileSync(path.join(ws, 'deep/er/new.ts'), 'utf8')).toBe('export const x = 1;\n');
    const r2 = await run('write_to_file', { path: 'deep/er/new.ts', content: 'y' });
    expect(r2.output).toMatch(/Overwrote/);
    expect(readdirSync(path.join(ws, 'deep/er'))).toEqual(['new.ts']);
  });

  it('keeps the file mode and refuses .git and directories', async () => {
    writeFileSync(path.join(ws, 'run.sh'), '#!/bin/sh\n', { mode: 0o755 });
    await run('write_to_file', { path: 'run.sh', content: '#!/bin/sh\necho hi\n' });
    expect(statSync(path.join(ws, 'run.sh')).mode & 0o777).toBe(0o755);
    expect((await run('write_to_file', { path: '.git/hooks/pre-commit', content: 'x' })).output).toMatch(/inside \.git/);
    mkdirSync(path.join(ws, 'adir'));
    expect((await run('write_to_file', { path: 'adir', content: 'x' })).output).toMatch(/is a directory/);
    expect((await run('write_to_file', { path: 'keep.txt/sub', content: 'x' })).ok).toBe(false);
  });

  it('reports a missing content parameter to the model', async () => {
    const r = await run('write_to_file', { path: 'a.txt' });
    expect(r.ok).toBe(false);
    expect(r.output).toMatch(/Missing value for required parameter "content"/);
  });
});

describe('replace_in_file', () => {
  const src = 'function a() {\n  return 1;\n}\n\nfunction b() {\n  return 2;\n}\n';
  beforeEach(() => {
    ws = repo({ 'm.ts': src });
  });
  const block = (s: string, r: string) => `<<<<<<< SEARCH\n${s}\n=======\n${r}\n>>>>>>> REPLACE`;

  it('applies several blocks in order, exactly', async () => {
    const diff = [block('  return 1;', '  return 10;'), block('  return 2;', '  return 20;')].join('\n');
    const r = await run('replace_in_file', { path: 'm.ts', diff });
    expect(r.ok).toBe(true);
    expect(r.output).toBe('Applied 2 SEARCH/REPLACE blocks to m.ts.');
    expect(readFileSync(path.join(ws, 'm.ts'), 'utf8')).toBe(src.replace('return 1', 'return 10').replace('return 2', 'return 20'));
  });

  it('deletes with an empty REPLACE and fills an empty file with an empty SEARCH', async () => {
    const r = await run('replace_in_file', { path: 'm.ts', diff: '<<<<<<< SEARCH\n\nfunction b() {\n  return 2;\n}\n=======\n>>>>>>> REPLACE' });
    expect(r.ok).toBe(true);
    expect(readFileSync(path.join(ws, 'm.ts'), 'utf8')).toBe('function a() {\n  return 1;\n}\n');
    writeFileSync(path.join(ws, 'empty.ts'), '');
    await run('replace_in_file', { path: 'empty.ts', diff: '<<<<<<< SEARCH\n=======\nhello\n>>>>>>> REPLACE' });
    expect(readFileSync(path.join(ws, 'empty.ts'), 'utf8')).toBe('hello\n');
  });

  it('falls back to a whitespace-tolerant match and re-indents the replacement', async () => {
    const r = await run('replace_in_file', { path: 'm.ts', diff: block('function b() {\nreturn 2;\n}', 'function b() {\nreturn 3;\n}') });
    expect(r.ok).toBe(true);
    expect(r.output).toMatch(/ignoring whitespace/);
    expect(readFileSync(path.join(ws, 'm.ts'), 'utf8')).toBe(src.replace('  return 2;', 'return 3;'));
    const r2 = await run('replace_in_file', { path: 'm.ts', diff: block('    return 1;', '    return 11;') });
    expect(r2.ok).toBe(true);
    expect(readFileSync(path.join(ws, 'm.ts'), 'utf8')).toContain('\n  return 11;\n');
  });

  it('keeps CRLF line endings', async () => {
    writeFileSync(path.join(ws, 'w.txt'), 'a\r\nb\r\nc\r\n');
    const r = await run('replace_in_file', { path: 'w.txt', diff: block('b', 'B') });
    expect(r.ok).toBe(true);
    expect(readFileSync(path.join(ws, 'w.txt'), 'utf8')).toBe('a\r\nB\r\nc\r\n');
  });

  it('on a miss shows the nearest lines with numbers and changes nothing (all or nothing)', async () => {
    const diff = [block('  return 1;', '  return 100;'), block('function b() {\n  return 42;\n}', 'x')].join('\n');
    const r = await run('replace_in_file', { path: 'm.ts', diff });
    expect(r.ok).toBe(false);
    expect(r.output).toMatch(/SEARCH block 2 of 2 does not match m.ts/);
    expect(r.output).toMatch(/closest text in the file is at lines 5-7/);
    expect(r.output).toContain('6 |   return 2;');
    expect(r.output).toMatch(/No change was made/);
    expect(readFileSync(path.join(ws, 'm.ts'), 'utf8')).toBe(src);
  });

  it('explains malformed diffs', async () => {
    expect(() => parseDiff('no blocks here')).toThrow(/holds no SEARCH\/REPLACE block/);
    expect(() => parseDiff('<<<<<<< SEARCH\na\n>>>>>>> REPLACE')).toThrow(/no "=======" line/);
    expect(() => parseDiff('<<<<<<< SEARCH\na\n=======\nb')).toThrow(/not closed/);
    expect(parseDiff('```\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n```')).toEqual([{ search: 'a\n', replace: 'b\n' }]);
    expect((await run('replace_in_file', { path: 'missing.ts', diff: block('a', 'b') })).output).toMatch(/does not exist; use write_to_file/);
  });
});

describe('list_files and search_files', () => {
  beforeEach(() => {
    ws = repo({
      '.gitignore': 'build/\n*.log\n',
      'src/app.ts': 'export function main() {\n  console.log("hello");\n}\n',
      'src/util/helpers.ts': 'export const helper = () => "hello";\n',
      'README.md': '# Demo\nhello world\n',
      'build/out.js': 'hello from build\n',
      'debug.log': 'hello log\n',
    });
    writeFileSync(path.join(ws, 'untracked.ts'), 'const hello = 1;\n');
  });

  it('lists a directory and recursively, leaving out ignored files and .git', async () => {
    const top = await run('list_files', { path: '.' });
    expect(top.output.split('\n')).toEqual(['.gitignore', 'README.md', 'src/', 'untracked.ts']);
    const rec = await run('list_files', { path: '.', recursive: 'yes' });
    expect(rec.output.split('\n')).toEqual(['.gitignore', 'README.md', 'src/app.ts', 'src/util/helpers.ts', 'untracked.ts']);
    const sub = await run('list_files', { path: 'src', recursive: true });
    expect(sub.output.split('\n')).toEqual(['src/app.ts', 'src/util/helpers.ts']);
    expect((await run('list_files', { path: 'README.md' })).output).toMatch(/is a file/);
  });

  it('respects .gitignore in a directory that is not a git repository', async () => {
    const plain = tempDirSync('agentrun-plain-');
    dirs.push(plain);
    writeFileSync(path.join(plain, '.gitignore'), 'dist/\n');
    mkdirSync(path.join(plain, 'dist'));
    mkdirSync(path.join(plain, 'lib'));
    writeFileSync(path.join(plain, 'dist/x.js'), 'x');
    writeFileSync(path.join(plain, 'lib/y.js'), 'hello');
    writeFileSync(path.join(plain, 'lib/.gitignore'), 'gen.js\n');
    writeFileSync(path.join(plain, 'lib/gen.js'), 'hello');
    const r = await runTool('list_files', { path: '.', recursive: true }, { workspace: plain });
    expect(r.output.split('\n')).toEqual(['.gitignore', 'lib/.gitignore', 'lib/y.js']);
    const s = await runTool('search_files', { path: '.', regex: 'hello' }, { workspace: plain });
    expect(s.output).toContain('lib/y.js');
    expect(s.output).not.toContain('gen.js');
  });

  it('searches with context, respects .gitignore and file_pattern', async () => {
    const r = await run('search_files', { path: '.', regex: 'hello' });
    expect(r.ok).toBe(true);
    expect(r.output).toMatch(/^Found 4 matches in 4 files\./);
    expect(r.output).toContain('src/app.ts\n1- export function main() {\n2:   console.log("hello");\n3- }');
    expect(r.output).not.toContain('build/out.js');
    expect(r.output).not.toContain('debug.log');
    const ts = await run('search_files', { path: '.', regex: 'hello', file_pattern: '*.ts' });
    expect(ts.output).toMatch(/^Found 3 matches in 3 files/);
    const deep = await run('search_files', { path: 'src', regex: '(?i)HELPER', file_pattern: 'src/**/*.ts' });
    expect(deep.output).toMatch(/^Found 1 match in 1 file/);
    const none = await run('search_files', { path: '.', regex: 'zzz' });
    expect(none.output).toMatch(/^No matches/);
    const bad = await run('search_files', { path: '.', regex: 'foo(' });
    expect(bad.ok).toBe(false);
    expect(bad.output).toMatch(/regex is not valid/);
  });

  it('splits a large search over workers and keeps results in file order with the cap', async () => {
    for (let i = 0; i < 2600; i++) {
      const d = path.join(ws, 'many', `d${String(Math.floor(i / 100)).padStart(2, '0')}`);
      if (i % 100 === 0) mkdirSync(d, { recursive: true });
      writeFileSync(path.join(d, `f${String(i).padStart(4, '0')}.txt`), i % 10 === 0 ? `needle ${i}\n` : 'hay\n');
    }
    const r = await run('search_files', { path: 'many', regex: 'needle \\d+' });
    expect(r.meta?.matches).toBe(260);
    expect(r.meta?.workers).toBeGreaterThanOrEqual(1);
    const files = r.output.split('\n').filter((l) => l.startsWith('many/'));
    expect(files).toEqual([...files].sort());
    expect(files).toHaveLength(260);
    const all = await run('search_files', { path: 'many', regex: '.' });
    expect(all.meta?.capped).toBe(true);
    expect(all.meta?.matches).toBe(300);
    expect(all.output).toMatch(/Showing the first 300 matches/);
    expect(all.output.split('\n').find((l) => l.startsWith('many/'))).toBe('many/d00/f0000.txt');
  });

  it('lists a git repository nested in a plain workspace', async () => {
    const plain = tempDirSync('agentrun-nested-');
    dirs.push(plain);
    execFileSync('git', ['init', '-q', path.join(plain, 'sub')]);
    writeFileSync(path.join(plain, 'sub/.gitignore'), 'tmp/\n');
    mkdirSync(path.join(plain, 'sub/tmp'));
    writeFileSync(path.join(plain, 'sub/tmp/x'), 'x');
    writeFileSync(path.join(plain, 'sub/keep.txt'), 'k');
    const r = await runTool('list_files', { path: 'sub', recursive: true }, { workspace: plain });
    expect(r.output.split('\n')).toEqual(['sub/.gitignore', 'sub/keep.txt']);
  });

  it('does not follow symlinks out of the workspace while searching', async () => {
    symlinkSync('/etc/hostname', path.join(ws, 'host'));
    symlinkSync('/etc', path.join(ws, 'etcdir'));
    const r = await run('search_files', { path: '.', regex: '.' });
    expect(r.output).not.toMatch(/^host$/m);
    expect(r.output).not.toMatch(/^etcdir/m);
  });

  it('stops a catastrophic regex within a few seconds with a clear message', async () => {
    writeFileSync(path.join(ws, 'evil.txt'), 'a'.repeat(50_000) + 'b\n');
    const t0 = Date.now();
    const r = await run('search_files', { path: '.', regex: '(a+)+$', file_pattern: 'evil.txt' });
    const took = Date.now() - t0;
    expect(took).toBeLessThan(8000);
    expect(r.ok).toBe(false);
    expect(r.output).toMatch(/catastrophically/);
    expect(r.output).toMatch(/nested quantifiers/);
  });

  it('searches again after a stopped search, and repeated searches agree', async () => {
    writeFileSync(path.join(ws, 'evil.txt'), 'a'.repeat(50_000) + 'b\n');
    writeFileSync(path.join(ws, 'plain.txt'), 'one needle here\n');
    const stuck = await run('search_files', { path: '.', regex: '(a+)+$', file_pattern: 'evil.txt' });
    expect(stuck.output).toMatch(/catastrophically/);
    const outputs = [];
    for (let i = 0; i < 3; i++) {
      const r = await run('search_files', { path: '.', regex: 'one needle' });
      expect(r.ok).toBe(true);
      outputs.push(r.output);
    }
    expect(outputs[0]).toMatch(/^plain\.txt$/m);
    expect(new Set(outputs).size).toBe(1);
  });
});

describe('list_code_definition_names', () => {
  it('parses TypeScript, JavaScript, Python, Go, Rust and Java with tree-sitter', async () => {
    ws = repo({
      'src/a.ts':
        'export class Foo {\n  bar(x: number) { return x; }\n}\nexport interface Opts { a: number }\nexport type Id = string;\nexport const arrow = (a: number) => a;\nfunction plain() { function inner() {} }\n',
      'src/b.js': 'class K { m() {} }\nconst f = function () {};\nmodule.exports = { f };\n',
      'src/c.py': 'class Animal:\n    def speak(self):\n        pass\n\n@decorator\ndef top():\n    def nested():\n        pass\n',
      'src/d.go': 'package main\n\ntype Server struct{}\n\nfunc (s *Server) Start() error { return nil }\n\nfunc main() {}\n',
      'src/e.rs': 'pub struct P;\nimpl P {\n    pub fn new() -> Self { P }\n}\ntrait T { fn t(&self); }\nfn main() {}\n',
      'src/F.java': 'public class F {\n  public F() {}\n  void run() {}\n  interface Inner { void x(); }\n}\n',
      'src/notes.txt': 'not code',
    });
    const r = await run('list_code_definition_names', { path: 'src' });
    expect(r.ok).toBe(true);
    const o = r.output;
    expect(o).toContain(
      'src/a.ts\n  1: export class Foo {\n  2:   bar(x: number) { return x; }\n  4: export interface Opts { a: number }\n  5: export type Id = string;\n  6: export const arrow = (a: number) => a;\n  7: function plain() { function inner() {} }',
    );
    expect(o).toMatch(/src\/b\.js\n {2}1: class K \{ m\(\) \{\} \}\n {2}2: const f = function/);
    expect(o).toContain('src/c.py\n  1: class Animal:\n  2:   def speak(self):\n  6: def top():');
    expect(o).not.toContain('nested');
    expect(o).toContain('src/d.go\n  3: type Server struct{}\n  5: func (s *Server) Start() error { return nil }\n  7: func main() {}');
    expect(o).toContain('src/e.rs\n  1: pub struct P;\n  2: impl P {\n  3:   pub fn new() -> Self { P }\n  5: trait T { fn t(&self); }\n  6: fn main() {}');
    expect(o).toContain('src/F.java\n  1: public class F {\n  2:   public F() {}\n  3:   void run() {}\n  4:   interface Inner { void x(); }');
    expect(o).not.toContain('notes.txt');
    const one = await run('list_code_definition_names', { path: 'src/c.py' });
    expect(one.output.startsWith('src/c.py\n')).toBe(true);
    expect((await run('list_code_definition_names', { path: 'src/notes.txt' })).output).toMatch(/not a supported source file/);
  });

  it('copes with syntax errors', async () => {
    const defs = await extractDefinitions('function ok() {}\nclass Broken {\n  method( {\n', 'typescript');
    expect(defs[0]).toMatchObject({ line: 1, text: 'function ok() {}' });
  });
});

describe('list_package_info', () => {
  it('shows the README head, the manifest and recent git changes', async () => {
    ws = repo({
      'packages/api/README.md': '# API\n\nServes things.\n',
      'packages/api/package.json': JSON.stringify({
        name: '@x/api',
        version: '1.2.3',
        scripts: { test: 'vitest' },
        dependencies: { zod: '^4' },
        files: ['dist'],
      }),
      'packages/api/src/index.ts': 'export {}\n',
    });
    writeFileSync(path.join(ws, 'packages/api/src/index.ts'), 'export const v = 2;\n');
    execFileSync('git', ['-C', ws, 'commit', '-qam', 'bump api']);
    const r = await run('list_package_info', { path: 'packages/api' });
    expect(r.ok).toBe(true);
    expect(r.output).toContain('## README.md (beginning)\n# API');
    expect(r.output).toContain('"name": "@x/api"');
    expect(r.output).not.toContain('"files"');
    expect(r.output).toMatch(/## Recent changes[\s\S]*bump api[\s\S]*src\/index.ts/);
    const nested = await run('list_package_info', { path: 'packages/api/src' });
    expect(nested.output).toMatch(/packages\/api\/package.json \(nearest enclosing package\)/);
  });
});

describe('special files and symlinks out', () => {
  let outside: string;
  beforeEach(() => {
    outside = tempDirSync('agentrun-outside-');
    writeFileSync(path.join(outside, 'secret'), 'canary-outside-secret');
  });
  afterAll(() => rmSync(outside, { recursive: true, force: true }));

  it('list_package_info reads no README or manifest through a symlink out of the workspace', async () => {
    mkdirSync(path.join(ws, 'pkg'));
    symlinkSync(path.join(outside, 'secret'), path.join(ws, 'pkg', 'README.md'));
    symlinkSync(path.join(outside, 'secret'), path.join(ws, 'pkg', 'package.json'));
    const r = await run('list_package_info', { path: 'pkg' });
    expect(r.ok).toBe(true);
    expect(r.output).not.toContain('canary-outside-secret');
    expect(r.output).toMatch(/## Not read\n.*symbolic link.*outside the workspace/);
  });

  it('FIFOs, sockets and devices are refused without blocking, by every reading tool', async () => {
    execFileSync('mkfifo', [path.join(ws, 'fifo'), path.join(ws, 'README.md')]);
    execFileSync('python3', ['-c', `import socket; s=socket.socket(socket.AF_UNIX); s.bind(${JSON.stringify(path.join(ws, 'sock'))})`]);
    const t0 = Date.now();
    for (const p of ['fifo', 'sock']) {
      const r = await run('read_file', { path: p });
      expect(r.ok).toBe(false);
      expect(r.output).toMatch(/not a regular file/);
      const e = await run('replace_in_file', { path: p, diff: '<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE' });
      expect(e.ok).toBe(false);
      expect(e.output).toMatch(/not a regular file|socket or a FIFO/);
    }
    const w = await run('write_to_file', { path: 'fifo', content: 'x' });
    expect(w.ok).toBe(false);
    expect(w.output).toMatch(/not a regular file/);
    const info = await run('list_package_info', { path: '.' });
    expect(info.output).toMatch(/README\.md is not a regular file/);
    expect(Date.now() - t0).toBeLessThan(5000);
  });

  it('refuses files over the edit limit in replace_in_file', async () => {
    const big = path.join(ws, 'big.txt');
    const fd = openSync(big, 'w');
    ftruncateSync(fd, 60 * 1024 * 1024);
    closeSync(fd);
    const r = await run('replace_in_file', { path: 'big.txt', diff: '<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE' });
    expect(r.ok).toBe(false);
    expect(r.output).toMatch(/too large/);
  });
});
