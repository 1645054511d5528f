// Inline Julia and R code made only of calls to the language's package manager and build tools
// (`julia --project=. -e 'using Pkg; Pkg.instantiate()'`, `Rscript -e 'tools::pkg2HTML("x", out="public/index.html")'`):
// the everyday way both languages' CI runs a step. Read as a closed list, like the other inline
// idioms (inline-code.ts): every call must name a function listed here, every argument must be a
// literal, a named literal, or such a call; a bare name (which may hold a function such as `system`),
// an operator, an interpolating string, or a path outside the workspace and the temporary
// directories makes the code unreadable again.

import { isCredentialName } from './secrets.js';

type Token = { kind: 'name' | 'string' | 'number' | 'punct'; text: string };

/** Names, string literals without escapes or interpolation, numbers, and the punctuation of a call. */
function tokens(code: string, lang: 'julia' | 'R'): Token[] | undefined {
  const out: Token[] = [];
  const name = lang === 'julia' ? /^[A-Za-z_][\w!]*(?:\.[A-Za-z_][\w!]*)*/ : /^[A-Za-z.][\w.]*(?:::[A-Za-z.][\w.]*)?/;
  const string = lang === 'julia' ? /^"[^"\\$]*"/ : /^(?:"[^"\\]*"|'[^'\\]*')/;
  const patterns: [Token['kind'], RegExp][] = [
    ['string', string],
    ['number', /^\d+(?:\.\d+)?/],
    ['name', name],
    ['punct', /^[()[\],;=\n]/],
  ];
  let rest = code.replace(/^[ \t]+/, '');
  while (rest.length) {
    const found = patterns.map(([kind, re]) => [kind, re.exec(rest)?.[0]] as const).find(([, text]) => text);
    if (!found) return undefined;
    const [kind, text] = found as [Token['kind'], string];
    out.push({ kind, text: text === '\n' ? ';' : text });
    rest = rest.slice(text.length).replace(/^[ \t]+/, '');
  }
  return out;
}

interface Language {
  lang: 'julia' | 'R';
  /** Whether a call to this function only builds, tests, installs for the user or reads. */
  calls: (fn: string) => boolean;
  /** A string argument the function may be given. */
  string: (value: string, fn: string, argName: string | undefined) => boolean;
  constants: RegExp;
}

/** A path in the workspace or the temporary directories, or a word that is no path. */
const staysHere = (value: string) => !/^(\/|~)/.test(value) || /^\/(private\/)?(tmp|var\/tmp)(\/|$)/.test(value);

const JULIA_PKG = /^(Pkg\.)?(instantiate|resolve|precompile|build|test|status|update|add|develop|activate|PackageSpec)$/;
const JULIA: Language = {
  lang: 'julia',
  // Pkg's verbs install and build into the user's depot as pip does into an environment; a
  // registry added (`Pkg.Registry.add`) is a trust change and stays unread.
  calls: (fn) => JULIA_PKG.test(fn) || fn === 'include',
  string: (value, fn) => staysHere(value) && (fn !== 'include' || (!value.includes('..') && /\.jl$/.test(value))),
  constants: /^(true|false|nothing)$/,
};

/** R's development packages whose functions build, check, test, document or render the workspace's package. */
const R_DEV =
  /^(devtools|testthat|rcmdcheck|pkgdown|roxygen2|lintr|styler|remotes|pak|litedown|rmarkdown|knitr|tools|bookdown|spelling|tinytest|BiocManager|renv)::/;
/** Their functions that send something out or change the user's settings: a release, a coverage upload, a site pushed, a profile edited. */
const R_OUTWARD = /::(release|submit_cran|codecov|coveralls|deploy_\w*|use_github\w*|edit_\w*|upload\w*)$/;
/** R's own calls that read or name things, a script of the workspace sourced, the session's objects saved to a file, and knitr's renderers once loaded. */
const R_BASE =
  /^(install\.packages|library|require|requireNamespace|file\.path|normalizePath|contrib\.url|c|list|paste0?|Sys\.getenv|getwd|sessionInfo|print|invisible|source|save|ls|knit|knit2pdf|knit2html|purl)$/;
/** The public package repositories R installs from by default. */
const R_PUBLIC_REPO = /^https:\/\/(cloud\.r-project\.org|cran\.r-project\.org|cran\.rstudio\.com|bioconductor\.org|[\w-]+\.r-universe\.dev)\/?$/;
const R: Language = {
  lang: 'R',
  calls: (fn) => (R_DEV.test(fn) && !R_OUTWARD.test(fn)) || R_BASE.test(fn),
  string: (value, fn, argName) => {
    if (fn === 'Sys.getenv') return !isCredentialName(value);
    if (value.includes('://')) return argName === 'repos' && R_PUBLIC_REPO.test(value);
    return staysHere(value);
  },
  constants: /^(TRUE|FALSE|NULL|NA|T|F)$/,
};

/** Reads one expression at `k`: a literal, a constant, an array of them, or a listed call. The index after it, or -1. */
function expression(t: Token[], k: number, lg: Language, fn: string, argName: string | undefined): number {
  const tok = t[k];
  if (!tok) return -1;
  if (tok.kind === 'number') return k + 1;
  if (tok.kind === 'string') return lg.string(tok.text.slice(1, -1), fn, argName) ? k + 1 : -1;
  if (tok.kind === 'punct' && tok.text === '[' && lg.lang === 'julia') return list(t, k + 1, ']', lg, fn);
  if (tok.kind !== 'name') return -1;
  if (t[k + 1]?.text !== '(') return lg.constants.test(tok.text) ? k + 1 : -1;
  // library(data.table) names a package, not a value.
  if (/^(library|require)$/.test(tok.text) && t[k + 2]?.kind === 'name' && t[k + 3]?.text === ')') return k + 4;
  if (!lg.calls(tok.text)) return -1;
  return list(t, k + 2, ')', lg, tok.text);
}

/** Arguments up to `close`, separated by `,` (or `;` before Julia's keywords), each `name=value` or a value. */
function list(t: Token[], k: number, close: string, lg: Language, fn: string): number {
  let i = k;
  while (t[i] && t[i]!.text !== close) {
    const named = t[i]!.kind === 'name' && t[i + 1]?.text === '=' ? t[i]!.text : undefined;
    if (named) i += 2;
    i = expression(t, i, lg, fn, named);
    if (i < 0) return -1;
    if (t[i]?.text === ',' || (t[i]?.text === ';' && lg.lang === 'julia' && close === ')')) i++;
    else if (t[i]?.text !== close) return -1;
  }
  return t[i]?.text === close ? i + 1 : -1;
}

/** Whether every statement is `using`/`import` of modules (Julia) or a listed call. */
function onlyPackageCalls(code: string, lg: Language): boolean {
  const t = tokens(code, lg.lang);
  if (!t?.length) return false;
  let k = 0;
  let statements = 0;
  while (k < t.length) {
    if (t[k]!.text === ';') {
      k++;
      continue;
    }
    if (lg.lang === 'julia' && /^(using|import)$/.test(t[k]!.text)) {
      k++;
      while (t[k]?.kind === 'name') {
        k++;
        if (t[k]?.text !== ',') break;
        k++;
      }
    } else {
      k = expression(t, k, lg, '', undefined);
      if (k < 0) return false;
    }
    if (k < t.length && t[k]!.text !== ';') return false;
    statements++;
  }
  return statements > 0;
}

export const readableJulia = (code: string) => onlyPackageCalls(code, JULIA);
export const readableR = (code: string) => onlyPackageCalls(code, R);
