#!/usr/bin/env python3
"""A helper's prompt for one blind set, and the preamble it points to, both written from
docs/blind-sets.md (the preamble is that page's section "The preamble, as the helpers read it").

    python3 scripts/blind-sets/prompt.py 1011 "integrated library systems ..."   → /work/wt/prompt-1011.txt
"""
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
WT = pathlib.Path("/work/wt")

TEMPLATE = """You build one blind set of shell command lines: set number {n} ({words}), theme: {theme}.

First read /work/wt/PREAMBLE.md in full: it binds you, and a set built against it is void. Then:

- Your file is /work/wt/sets/{n}.tsv; its first header line names it "A {words} set".
- Check every candidate repository with `grep -ix 'owner/name' /work/wt/used-repos.txt` and wait for
  the answer BEFORE you fetch it, list its files or read anything of it. A listed one is not fetched,
  listed or read. A fork or renamed copy of a listed repository counts as listed.
- Never draw on a repository that is itself a command-safety checker, an agent's permission or
  sandbox code, or a list of dangerous commands; leave AI agents' instruction files (AGENTS.md,
  CLAUDE.md, .claude/, .cursor/) unopened.
- A source line is copied with its trailing spaces; a carriage return before the line's end counts as
  the line's end. Fences without a language tag count as shell only where their lines are commands.
- Use four to six repositories and finish in about half an hour. If rows run short, write a shorter
  set and say so in the header rather than run on. If the search tools answer that their budget is
  spent, choose repositories you know by name, each checked against the used list first.
- Other helpers work beside you on other themes; do not read /work/wt/sets/ beyond your own file.
- At the end append every repository you fetched to /work/wt/used-repos.txt and report as the
  preamble says, naming plainly anything you did beyond its letter.
"""


def words(n: int, counted: bool = False) -> str:
    ones = "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen".split()
    ones_ord = "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth".split()
    tens = "twenty thirty forty fifty sixty seventy eighty ninety".split()
    tens_ord = "twentieth thirtieth fortieth fiftieth sixtieth seventieth eightieth ninetieth".split()

    def below_hundred(k: int) -> str:
        if k < 20:
            return ones_ord[k - 1]
        return tens_ord[k // 10 - 2] if k % 10 == 0 else f"{tens[k // 10 - 2]}-{ones_ord[k % 10 - 1]}"

    if n >= 1000:
        # Past the thousand-and-ninety-ninth the hundreds are counted out (`thousand-one-hundred-and-first`).
        return "thousandth" if n == 1000 else f"thousand-and-{words(n - 1000)}" if n < 1100 else f"thousand-{words(n - 1000, True)}"
    if n < 100:
        return below_hundred(n)
    hundreds = "hundred" if n < 200 and not counted else f"{ones[n // 100 - 1]}-hundred"
    return f"{hundreds}th" if n % 100 == 0 else f"{hundreds}-and-{below_hundred(n % 100)}"


def preamble() -> str:
    page = (ROOT / "docs/blind-sets.md").read_text(encoding="utf-8")
    start = page.index("## The preamble, as the helpers read it")
    return page[page.index("\n", start) + 1 :].lstrip("\n")


def main() -> None:
    if len(sys.argv) != 3 or not sys.argv[1].isdigit():
        sys.stderr.write("usage: prompt.py N THEME\n")
        sys.exit(2)
    n, theme = int(sys.argv[1]), sys.argv[2]
    (WT / "sets").mkdir(parents=True, exist_ok=True)
    (WT / "PREAMBLE.md").write_text(preamble(), encoding="utf-8")
    w = words(n)
    (WT / f"prompt-{n}.txt").write_text(TEMPLATE.format(n=n, words=f"one-{w}" if n >= 1000 else w, theme=theme), encoding="utf-8")


if __name__ == "__main__":
    main()
