// The streaming XML tool-call parser (src/parser/xml-stream.ts, what the terminal renders prose
// with) as a classic script for the web page, so the page shows an assistant message's prose
// without its tool blocks exactly as the terminal does: one parser, no copy in the page. The
// page's CSP allows inline scripts only, so it goes into the page itself.
import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TOOL_NAMES } from '../tools/index.js';

/** Where page.html takes the script (a marker inside its first <script>). */
export const PROSE_SCRIPT_MARKER = '/* agentrun:xml-parser */';

/**
 * `const AgentrunXml = { XmlToolCallParser, TOOL_NAMES }` as script text. The compiled package
 * serves the module's JavaScript as it is; from the TypeScript sources (tests, `agentrun-dev`)
 * it is transpiled first with esbuild, which tsx brings along.
 */
export async function proseScript(): Promise<string> {
  const ext = extname(fileURLToPath(import.meta.url));
  const url = new URL(`../parser/xml-stream${ext}`, import.meta.url);
  let code = await readFile(url, 'utf8');
  if (ext === '.ts') {
    const { transform } = await import('esbuild');
    code = (await transform(code, { loader: 'ts', format: 'esm', target: 'es2020' })).code;
  }
  // The module imports nothing; its `export`s become the script's own declarations.
  if (/^\s*import\s/m.test(code)) throw new Error('src/parser/xml-stream.ts must import nothing to run in the page');
  code = code
    .replace(/^export\s*\{[^}]*\};?\s*$/gm, '')
    .replace(/^export\s+(?=(?:declare\s+)?(?:async\s+)?(?:function|class|const|let|var)\b)/gm, '')
    .replace(/^\/\/# sourceMappingURL=.*$/gm, '');
  if (/<\/script/i.test(code)) throw new Error('the parser script must not contain </script>');
  return `const AgentrunXml = (() => {\n${code}\nreturn { XmlToolCallParser, TOOL_NAMES: ${JSON.stringify(TOOL_NAMES)} };\n})();`;
}
