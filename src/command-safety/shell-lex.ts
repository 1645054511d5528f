// A small bash lexer/parser, enough to classify commands (dangerous.ts). It understands quotes,
// escapes, comments, heredocs, redirections, pipelines, lists, subshells and nested command or
// process substitutions, which it returns as separate command strings for recursive analysis.

export interface Word {
  /** The value with quotes removed; expansions stay verbatim (`$HOME`, `$(…)`). */
  text: string;
  /** Contains an unquoted or double-quoted expansion ($VAR, $(…), `…`, <(…)). */
  expands: boolean;
  /** Command strings nested inside this word: $(…), `…`, <(…), >(…). */
  nested: string[];
  /** A process substitution <(…) or >(…). */
  procSub: boolean;
  /** The body of the here-document this word is the delimiter of (`<<EOF`), as written. */
  heredoc?: string;
  /** Begins with a quoted or escaped `~` (`"~/x"`, `\\~`): the shell leaves it a name, not the home. */
  literalTilde?: boolean;
  /** Begins with a single-quoted or escaped `$NAME` (`'$HOME'`, `\\$HOME`): the shell leaves it a name, not a variable's value. */
  literalDollar?: boolean;
  /** Has an unquoted `{` not opening a `${…}`: the shell may expand it into several words (`{rm,-rf,~}`, `a{,.bak}`). */
  braces?: boolean;
}

export interface Redirect {
  op: string; // > >> >| &> &>> < << <<< <& >& <>
  fd?: number;
  target: Word;
}

export interface SimpleCommand {
  words: Word[];
  redirects: Redirect[];
}

export interface Pipeline {
  commands: SimpleCommand[];
  /** The operator that ends this pipeline: && || ; & or '' at the end. */
  op: string;
}

export class ShellParseError extends Error {}

type Tok = { kind: 'word'; word: Word } | { kind: 'op'; op: string } | { kind: 'redir'; op: string; fd?: number };

/** zsh's forms that write over its `noclobber` setting (`>!`, `>>!`) are bash's `>|` and `>>`. */
const ZSH_CLOBBER: Readonly<Record<string, string>> = { '>!': '>|', '>>!': '>>' };
const OPS = ['&&', '||', ';;', '|&', '&>>', '&>', '>>!', '>>', '>!', '>|', '>&', '<<<', '<<-', '<<', '<&', '<>', ';', '&', '|', '(', ')', '>', '<', '\n'];

/** Index just past the `)` that closes an opening at `start` (which points after the opening paren). */
function matchParen(s: string, start: number): number {
  let depth = 1;
  let i = start;
  while (i < s.length) {
    const c = s[i]!;
    if (c === '\\') {
      i += 2;
      continue;
    }
    if (c === "'") {
      const j = s.indexOf("'", i + 1);
      if (j < 0) throw new ShellParseError('unterminated quote');
      i = j + 1;
      continue;
    }
    if (c === '"') {
      i = matchDouble(s, i + 1);
      continue;
    }
    if (c === '`') {
      const j = matchBacktick(s, i + 1);
      i = j;
      continue;
    }
    if (c === '(') depth++;
    else if (c === ')') {
      depth--;
      if (depth === 0) return i + 1;
    }
    i++;
  }
  throw new ShellParseError('unterminated parenthesis');
}

function matchDouble(s: string, start: number): number {
  let i = start;
  while (i < s.length) {
    const c = s[i]!;
    if (c === '\\') i += 2;
    else if (c === '"') return i + 1;
    else if (c === '$' && s[i + 1] === '(') i = matchParen(s, i + 2);
    else if (c === '`') i = matchBacktick(s, i + 1);
    else i++;
  }
  throw new ShellParseError('unterminated double quote');
}

function matchBacktick(s: string, start: number): number {
  let i = start;
  while (i < s.length) {
    if (s[i] === '\\') i += 2;
    else if (s[i] === '`') return i + 1;
    else i++;
  }
  throw new ShellParseError('unterminated backtick');
}

function tokenize(src: string): Tok[] {
  const toks: Tok[] = [];
  const heredocs: { delim: string; strip: boolean; expands: boolean; word: Word }[] = [];
  let i = 0;
  const n = src.length;
  let inTest = false;
  while (i < n) {
    const c = src[i]!;
    if (c === ' ' || c === '\t' || c === '\r') {
      i++;
      continue;
    }
    if (c === '\\' && src[i + 1] === '\n') {
      i += 2;
      continue;
    }
    if (c === '#') {
      while (i < n && src[i] !== '\n') i++;
      continue;
    }
    if (c === '\n' && heredocs.length) {
      // Heredoc bodies are data, not commands here; the body is kept on its delimiter word for the program it feeds.
      i++;
      while (heredocs.length) {
        const h = heredocs.shift()!;
        const body: string[] = [];
        for (;;) {
          if (i >= n) break;
          const e = src.indexOf('\n', i);
          const line = src.slice(i, e < 0 ? n : e);
          i = e < 0 ? n : e + 1;
          const stripped = h.strip ? line.replace(/^\t+/, '') : line;
          if (stripped === h.delim) break;
          body.push(stripped);
        }
        h.word.heredoc = body.join('\n');
        // An unquoted delimiter (`<<EOF`, not `<<'EOF'`): the shell expands the body as it reads it.
        if (h.expands) {
          // The shell runs the body's $(…) and `…` as it reads it, whatever program the body feeds.
          // One it cannot match (a lone backtick) makes the shell fail before the command runs.
          try {
            collectNested(h.word.heredoc, h.word.nested);
          } catch (e) {
            if (!(e instanceof ShellParseError)) throw e;
          }
        }
      }
      toks.push({ kind: 'op', op: '\n' });
      continue;
    }
    // Process substitution <( … ) / >( … ) is a word, not a redirection.
    if ((c === '<' || c === '>') && src[i + 1] === '(') {
      const end = matchParen(src, i + 2);
      const inner = src.slice(i + 2, end - 1);
      toks.push({ kind: 'word', word: { text: src.slice(i, end), expands: true, nested: [inner], procSub: true } });
      i = end;
      continue;
    }
    // An arithmetic command `(( … ))` where a command starts runs no program; its substitutions still run.
    // `((cd x && make); echo)`, a subshell in a subshell, does not close with `))` and stays one.
    if (c === '(' && src[i + 1] === '(' && !inTest && (toks.length === 0 || toks[toks.length - 1]!.kind === 'op')) {
      const inner = matchParen(src, i + 2);
      if (src[inner] === ')') {
        const nested: string[] = [];
        collectNested(src.slice(i + 2, inner - 1), nested);
        toks.push({ kind: 'word', word: { text: src.slice(i, inner + 1), expands: true, nested, procSub: false } });
        i = inner + 1;
        continue;
      }
    }
    const op = OPS.find((o) => src.startsWith(o, i));
    // Inside `[[ … ]]` these are the test's own operators (and, or, grouping, string order, a regular
    // expression's alternation after `=~`), not the shell's.
    if (op && inTest && ['&&', '||', '|', '(', ')', '<', '>'].includes(op)) {
      i += op.length;
      toks.push({ kind: 'word', word: { text: op, expands: false, nested: [], procSub: false } });
      continue;
    }
    if (op) {
      i += op.length;
      if (op in ZSH_CLOBBER) {
        toks.push({ kind: 'redir', op: ZSH_CLOBBER[op]! });
        continue;
      }
      if (['>', '>>', '>|', '&>', '&>>', '<', '<<', '<<-', '<<<', '<&', '>&', '<>'].includes(op)) {
        toks.push({ kind: 'redir', op });
        if (op === '<<' || op === '<<-') {
          // Read the delimiter word now so the body can be skipped at the next newline.
          while (src[i] === ' ' || src[i] === '\t') i++;
          const { word, end } = readWord(src, i);
          const expands = !/['"\\]/.test(src.slice(i, end));
          i = end;
          heredocs.push({ delim: word.text, strip: op === '<<-', expands, word });
          toks.push({ kind: 'word', word });
        }
      } else toks.push({ kind: 'op', op });
      continue;
    }
    const { word, end } = readWord(src, i);
    i = end;
    // `2>` / `2>>`: a number directly before a redirection is its fd.
    const next = src[i];
    if (/^\d+$/.test(word.text) && !word.expands && (next === '>' || next === '<') && src[i + 1] !== '(') {
      const rop = OPS.find((o) => src.startsWith(o, i))!;
      i += rop.length;
      toks.push({ kind: 'redir', op: rop, fd: Number(word.text) });
      continue;
    }
    if (word.text === ']]' && inTest) inTest = false;
    else if (word.text === '[[' && !inTest && (toks.length === 0 || toks[toks.length - 1]!.kind === 'op')) inTest = true;
    toks.push({ kind: 'word', word });
  }
  return toks;
}

function readWord(src: string, start: number): { word: Word; end: number } {
  let i = start;
  let text = '';
  let expands = false;
  let literalTilde = false;
  let literalDollar = false;
  let braces = false;
  const nested: string[] = [];
  const n = src.length;
  while (i < n) {
    const c = src[i]!;
    // An array assignment (`X=(a $(b))`): its elements are words, the substitutions in them still commands.
    if (c === '(' && /^[A-Za-z_][A-Za-z0-9_]*\+?=$/.test(text) && !expands && i > start) {
      const end = matchParen(src, i + 1);
      const inner = src.slice(i + 1, end - 1);
      collectNested(inner, nested);
      if (/\$|`/.test(inner)) expands = true;
      text += src.slice(i, end);
      i = end;
      continue;
    }
    if (' \t\r\n;&|()<>'.includes(c)) break;
    // A Makefile recipe's first prerequisite (`install $< $(DESTDIR)$(BINDIR)`): a word there, where a
    // shell would read a lone `$` and a redirection from the next word.
    if (c === '$' && src[i + 1] === '<' && (i + 2 >= n || ' \t\r\n;&|)'.includes(src[i + 2]!))) {
      text += '$<';
      expands = true;
      i += 2;
      continue;
    }
    if (c === '\\') {
      if (!text && src[i + 1] === '~') literalTilde = true;
      if (!text && src[i + 1] === '$' && /[A-Za-z_]/.test(src[i + 2] ?? '')) literalDollar = true;
      text += src[i + 1] ?? '';
      i += 2;
      continue;
    }
    if (c === "'") {
      const j = src.indexOf("'", i + 1);
      if (j < 0) throw new ShellParseError('unterminated single quote');
      if (!text && src[i + 1] === '~') literalTilde = true;
      // A make variable (`'$(DESTDIR)'`, `'${PREFIX}'`) is expanded by make before the shell sees the quotes.
      if (!text && src[i + 1] === '$' && /[A-Za-z_]/.test(src[i + 2] ?? '')) literalDollar = true;
      text += src.slice(i + 1, j);
      i = j + 1;
      continue;
    }
    if (c === '$' && src[i + 1] === "'") {
      let j = i + 2;
      while (j < n && src[j] !== "'") j += src[j] === '\\' ? 2 : 1;
      if (j >= n) throw new ShellParseError("unterminated $'…' quote");
      text += src.slice(i + 2, j);
      i = j + 1;
      continue;
    }
    if (c === '"') {
      const end = matchDouble(src, i + 1);
      const inner = src.slice(i + 1, end - 1);
      collectNested(inner, nested);
      if (/\$|`/.test(inner)) expands = true;
      if (!text && inner.startsWith('~')) literalTilde = true;
      text += inner.replace(/\\(["\\$`])/g, '$1');
      i = end;
      continue;
    }
    // A CI workflow's expression (`${{ matrix.target }}`, `${{ secrets.TOKEN }}`): the runner puts its value
    // in before the shell reads the line, one word with the text around it.
    if (c === '$' && src[i + 1] === '{' && src[i + 2] === '{') {
      const end = src.indexOf('}}', i + 3);
      if (end > 0 && !src.slice(i + 3, end).includes('\n')) {
        // The workspace's own expression is the workspace's variable, as the runner's shell also has it.
        text += /^\$\{\{\s*github\.workspace\s*\}\}$/.test(src.slice(i, end + 2)) ? '$GITHUB_WORKSPACE' : src.slice(i, end + 2);
        expands = true;
        i = end + 2;
        continue;
      }
    }
    if (c === '$' && src[i + 1] === '(') {
      if (src[i + 2] === '(') {
        // Arithmetic $(( … )): its substitutions still run (`$(( $(cmd) ))`).
        const end = matchParen(src, i + 2);
        collectNested(src.slice(i + 3, end - 1), nested);
        text += src.slice(i, end);
        i = end;
      } else {
        const end = matchParen(src, i + 2);
        nested.push(src.slice(i + 2, end - 1));
        text += src.slice(i, end);
        i = end;
      }
      expands = true;
      continue;
    }
    if (c === '`') {
      const end = matchBacktick(src, i + 1);
      nested.push(src.slice(i + 1, end - 1).replace(/\\`/g, '`'));
      text += src.slice(i, end);
      expands = true;
      i = end;
      continue;
    }
    if (c === '$') expands = true;
    if (c === '{' && src[i - 1] !== '$') braces = true;
    text += c;
    i++;
  }
  return {
    word: {
      text,
      expands,
      nested,
      procSub: false,
      ...(literalTilde ? { literalTilde } : {}),
      ...(literalDollar ? { literalDollar } : {}),
      ...(braces ? { braces } : {}),
    },
    end: i,
  };
}

/** Find $(…) and `…` inside double-quoted text. */
function collectNested(s: string, out: string[]): void {
  let i = 0;
  while (i < s.length) {
    if (s[i] === '\\') i += 2;
    else if (s[i] === '$' && s[i + 1] === '(' && s[i + 2] !== '(') {
      const end = matchParen(s, i + 2);
      out.push(s.slice(i + 2, end - 1));
      i = end;
    } else if (s[i] === '`') {
      const end = matchBacktick(s, i + 1);
      out.push(s.slice(i + 1, end - 1));
      i = end;
    } else i++;
  }
}

/** Parse into pipelines joined by list operators. Subshell parens and newlines separate commands. */
export function parseShell(src: string): Pipeline[] {
  const toks = tokenize(src);
  const pipelines: Pipeline[] = [];
  let cmds: SimpleCommand[] = [];
  let cur: SimpleCommand = { words: [], redirects: [] };
  const endCommand = () => {
    if (cur.words.length || cur.redirects.length) cmds.push(cur);
    cur = { words: [], redirects: [] };
  };
  const endPipeline = (op: string) => {
    endCommand();
    if (cmds.length) pipelines.push({ commands: cmds, op });
    else if (op === '&' && pipelines.length) pipelines[pipelines.length - 1]!.op = '&';
    cmds = [];
  };
  for (let k = 0; k < toks.length; k++) {
    const t = toks[k]!;
    if (t.kind === 'word') cur.words.push(t.word);
    else if (t.kind === 'redir') {
      const target = toks[k + 1];
      if (!target || target.kind !== 'word') throw new ShellParseError(`redirection ${t.op} without a target`);
      cur.redirects.push({ op: t.op, fd: t.fd, target: target.word });
      k++;
    } else if (t.op === '|' || t.op === '|&') endCommand();
    else if (t.op === '(' || t.op === ')') endPipeline(';');
    else endPipeline(t.op === '\n' || t.op === ';;' ? ';' : t.op);
  }
  endPipeline('');
  return pipelines;
}
