// list_code_definition_names: top-level definitions (and class members) parsed with tree-sitter.
// The runtime and grammars come as WebAssembly from @vscode/tree-sitter-wasm: no native addon,
// no install script, loads offline from node_modules.
import { createRequire } from 'node:module';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import type { Language as TSLanguage, Node as TSNode, Parser as TSParser } from '@vscode/tree-sitter-wasm';
import { openRegularAt, readHead, withLocated, type Located } from './confine.js';
import { listDirectory } from './files.js';
import { pathParam } from './params.js';
import { ToolError, type ToolContext, type ToolDefinition, type ToolResult } from './types.js';
import { looksBinary } from './util.js';

const require = createRequire(import.meta.url);

const DEFS_LIMITS = { maxFiles: 50, maxFileBytes: 1024 * 1024, maxDefsPerFile: 200, maxLineChars: 160 };

type Kind = 'container' | 'leaf';
interface LangSpec {
  wasm: string;
  /** Definition node types: containers are searched for members, leaves are not entered. */
  defs: Record<string, Kind>;
  /** Non-definition nodes searched through (module bodies, class bodies, export wrappers). */
  through: Set<string>;
  /** Extra predicate: is this node a definition (e.g. `const f = () => …`)? */
  isDef?: (n: TSNode) => Kind | null;
}

const JS_FN_VALUES = new Set(['arrow_function', 'function_expression', 'function', 'generator_function', 'class']);
const jsDeclarator = (n: TSNode): Kind | null => {
  if (n.type !== 'variable_declarator' && n.type !== 'public_field_definition' && n.type !== 'field_definition') return null;
  const v = n.childForFieldName('value');
  return v && JS_FN_VALUES.has(v.type) ? 'leaf' : null;
};
const JS_DEFS: Record<string, Kind> = {
  class_declaration: 'container',
  function_declaration: 'leaf',
  generator_function_declaration: 'leaf',
  method_definition: 'leaf',
};
const JS_THROUGH = new Set(['program', 'export_statement', 'class_body', 'lexical_declaration', 'variable_declaration']);
const TS_DEFS: Record<string, Kind> = {
  ...JS_DEFS,
  abstract_class_declaration: 'container',
  interface_declaration: 'leaf',
  type_alias_declaration: 'leaf',
  enum_declaration: 'leaf',
  function_signature: 'leaf',
  abstract_method_signature: 'leaf',
  internal_module: 'container',
  module: 'container',
};
const TS_THROUGH = new Set([...JS_THROUGH, 'ambient_declaration', 'statement_block', 'expression_statement']);

const LANGUAGES: Record<string, LangSpec & { exts: string[] }> = {
  typescript: { wasm: 'tree-sitter-typescript.wasm', exts: ['.ts', '.mts', '.cts'], defs: TS_DEFS, through: TS_THROUGH, isDef: jsDeclarator },
  tsx: { wasm: 'tree-sitter-tsx.wasm', exts: ['.tsx'], defs: TS_DEFS, through: TS_THROUGH, isDef: jsDeclarator },
  javascript: { wasm: 'tree-sitter-javascript.wasm', exts: ['.js', '.mjs', '.cjs', '.jsx'], defs: JS_DEFS, through: JS_THROUGH, isDef: jsDeclarator },
  python: {
    wasm: 'tree-sitter-python.wasm',
    exts: ['.py', '.pyi'],
    defs: { class_definition: 'container', function_definition: 'leaf' },
    through: new Set(['module', 'decorated_definition', 'block']),
  },
  go: {
    wasm: 'tree-sitter-go.wasm',
    exts: ['.go'],
    defs: { function_declaration: 'leaf', method_declaration: 'leaf', type_spec: 'leaf', type_alias: 'leaf' },
    through: new Set(['source_file', 'type_declaration']),
  },
  rust: {
    wasm: 'tree-sitter-rust.wasm',
    exts: ['.rs'],
    defs: {
      function_item: 'leaf',
      function_signature_item: 'leaf',
      struct_item: 'leaf',
      enum_item: 'leaf',
      union_item: 'leaf',
      type_item: 'leaf',
      macro_definition: 'leaf',
      trait_item: 'container',
      impl_item: 'container',
      mod_item: 'container',
    },
    through: new Set(['source_file', 'declaration_list']),
  },
  java: {
    wasm: 'tree-sitter-java.wasm',
    exts: ['.java'],
    defs: {
      class_declaration: 'container',
      interface_declaration: 'container',
      enum_declaration: 'container',
      record_declaration: 'container',
      annotation_type_declaration: 'leaf',
      method_declaration: 'leaf',
      constructor_declaration: 'leaf',
      compact_constructor_declaration: 'leaf',
    },
    through: new Set(['program', 'class_body', 'interface_body', 'enum_body', 'enum_body_declarations']),
  },
};

function languageFor(file: string): string | undefined {
  const ext = path.extname(file).toLowerCase();
  return Object.keys(LANGUAGES).find((k) => LANGUAGES[k]!.exts.includes(ext));
}

type TreeSitterModule = typeof import('@vscode/tree-sitter-wasm');
let runtime: Promise<TreeSitterModule> | null = null;
const languages = new Map<string, Promise<TSLanguage>>();

function loadRuntime(): Promise<TreeSitterModule> {
  runtime ??= (async () => {
    const ts = require('@vscode/tree-sitter-wasm') as TreeSitterModule;
    await ts.Parser.init();
    return ts;
  })();
  return runtime;
}

async function loadLanguage(name: string): Promise<TSLanguage> {
  let p = languages.get(name);
  if (!p) {
    p = (async () => {
      const ts = await loadRuntime();
      const dir = path.join(path.dirname(require.resolve('@vscode/tree-sitter-wasm/package.json')), 'wasm');
      return ts.Language.load(path.join(dir, LANGUAGES[name]!.wasm));
    })();
    languages.set(name, p);
  }
  return p;
}

export interface Definition {
  line: number; // 1-based
  depth: number;
  text: string;
}

/** Definitions in `source`, parsed as `lang`. */
export async function extractDefinitions(source: string, lang: string): Promise<Definition[]> {
  const spec = LANGUAGES[lang];
  if (!spec) throw new Error(`no grammar for ${lang}`);
  const ts = await loadRuntime();
  const parser: TSParser = new ts.Parser();
  try {
    parser.setLanguage(await loadLanguage(lang));
    const tree = parser.parse(source);
    if (!tree) return [];
    const lines = source.split('\n');
    const out: Definition[] = [];
    const seen = new Set<number>();
    const visit = (node: TSNode, depth: number) => {
      for (const child of node.namedChildren) {
        if (!child || out.length >= DEFS_LIMITS.maxDefsPerFile) continue;
        const kind = spec.defs[child.type] ?? spec.isDef?.(child) ?? null;
        if (kind) {
          const row = child.startPosition.row;
          if (!seen.has(row)) {
            seen.add(row);
            const text = (lines[row] ?? '').trim();
            out.push({ line: row + 1, depth, text: text.length > DEFS_LIMITS.maxLineChars ? text.slice(0, DEFS_LIMITS.maxLineChars) + ' …' : text });
          }
          if (kind === 'container') {
            const body = child.childForFieldName('body');
            if (body) visit(body, depth + 1);
            else visit(child, depth + 1);
          }
        } else if (spec.through.has(child.type)) visit(child, depth);
      }
    };
    visit(tree.rootNode, 0);
    tree.delete();
    return out;
  } finally {
    parser.delete();
  }
}

const schema = z.object({
  path: pathParam('A source file, or a directory whose source files (directly inside it) are listed, relative to the workspace root.'),
});

async function listCodeDefinitionNamesTool(args: z.output<typeof schema>, ctx: ToolContext): Promise<ToolResult> {
  return withLocated(ctx.workspace, args.path, { mustExist: true }, async (loc) => {
    if ((await loc.kind()) !== 'dir') {
      if (!languageFor(loc.rel)) throw new ToolError(`${loc.rel}: not a supported source file (TypeScript, JavaScript, Python, Go, Rust, Java).`);
      return definitionsOf(loc, loc.dir, [loc.name!], () => loc.rel, 0);
    }
    const shown = loc.rel;
    const entries = (await listDirectory(loc)).filter((e) => !e.isDir && !e.isSymlink && languageFor(e.name));
    if (!entries.length) {
      const exts = Object.values(LANGUAGES)
        .flatMap((l) => l.exts)
        .join(' ');
      return {
        ok: true,
        output: `No source files (${exts}) directly in ${shown}. Use list_files to find the directories that hold code.`,
        meta: { path: shown, files: 0 },
      };
    }
    const dir = await loc.openDir();
    try {
      const names = entries.slice(0, DEFS_LIMITS.maxFiles).map((e) => e.name);
      const relOf = (name: string) => (shown === '.' ? name : `${shown}/${name}`);
      return await definitionsOf(loc, dir, names, relOf, Math.max(0, entries.length - DEFS_LIMITS.maxFiles));
    } finally {
      await dir.close();
    }
  });
}

/** The definitions of the files `names` of the open directory `dir` (the located path or the one holding it). */
async function definitionsOf(loc: Located, dir: FileHandle, names: string[], relOf: (name: string) => string, more: number): Promise<ToolResult> {
  const shown = loc.rel;
  const sections: string[] = [];
  let total = 0;
  for (const name of names) {
    const rel = relOf(name);
    const opened = await openRegularAt(dir, name, rel).catch((e: unknown) => (e instanceof ToolError ? undefined : Promise.reject(e)));
    if (!opened) continue;
    let buf: Buffer;
    try {
      if (opened.size > DEFS_LIMITS.maxFileBytes) {
        sections.push(`${rel}\n  (skipped: larger than ${DEFS_LIMITS.maxFileBytes / 1024 / 1024} MB)`);
        continue;
      }
      buf = await readHead(opened.fh, opened.size);
    } finally {
      await opened.fh.close();
    }
    if (looksBinary(buf.subarray(0, 8192))) continue;
    const defs = await extractDefinitions(buf.toString('utf8'), languageFor(name)!);
    total += defs.length;
    const width = String(defs.at(-1)?.line ?? 1).length;
    const body = defs.length ? defs.map((d) => `  ${String(d.line).padStart(width)}: ${'  '.repeat(d.depth)}${d.text}`).join('\n') : '  (no definitions)';
    sections.push(`${rel}\n${body}`);
  }
  let output = sections.join('\n\n');
  if (more) output += `\n\n[${more} more source files in ${shown} not shown; call the tool on single files to see them.]`;
  return { ok: true, output, meta: { path: shown, files: names.length, definitions: total } };
}

export const listCodeDefinitionNames: ToolDefinition<typeof schema> = {
  name: 'list_code_definition_names',
  description:
    'List the definitions (classes, functions, methods, interfaces, types…) in a source file, or in the source files directly inside a directory, with line numbers. ' +
    'Parsed with tree-sitter for TypeScript, JavaScript, Python, Go, Rust and Java. Use it to get an overview of code before reading it.',
  schema,
  kind: 'read',
  example: '<list_code_definition_names>\n<path>src/server</path>\n</list_code_definition_names>',
  run: listCodeDefinitionNamesTool,
};
