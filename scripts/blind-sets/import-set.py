#!/usr/bin/env python3
"""Imports a helper's blind set into the bench: every row is checked against its source line with
`git show` on the helper's mirror, and rows are dropped that an earlier corpus file (or this set)
already holds, that hold a literal backslash-n (which the bench's format reads as a line break), or
that do not match their source line. The header's counts line gains an import line saying so.

    python3 scripts/blind-sets/import-set.py 1011 [--dry] [--drop-repo owner/name ...]
"""
import argparse
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts/blind-sets"))
from prompt import words  # noqa: E402

MIRRORS = pathlib.Path("/work/.mirror")
SOURCE = re.compile(r"^(?P<repo>[^:\s]+/[^:\s]+):(?P<path>.+)@(?P<commit>[0-9a-f]{7,40}) L(?P<line>\d+)")
# What the preamble lets a helper strip in front of a command: prompts, indentation, YAML's run keys,
# a Makefile recipe's tab and @/-, a Dockerfile's RUN.
MAX_PREFIX = 80


def git_dir(repo: str) -> pathlib.Path | None:
    owner, name = repo.split("/", 1)
    for base in (MIRRORS / f"{owner}+{name}", *MIRRORS.glob("*+*")):
        if base.name.lower() != f"{owner}+{name}".lower():
            continue
        for d in (base / "repo", base / "repo/.git", base):
            if (d / "HEAD").exists() and (d / "objects").exists():
                return d
    return None


_files: dict[tuple[str, str, str], list[str] | None] = {}


def source_lines(repo: str, commit: str, path: str) -> list[str] | None:
    key = (repo, commit, path)
    if key not in _files:
        d = git_dir(repo)
        if d is None:
            _files[key] = None
        else:
            r = subprocess.run(["git", "-C", str(d), "show", f"{commit}:{path}"], capture_output=True)
            _files[key] = r.stdout.decode("utf-8", "replace").split("\n") if r.returncode == 0 else None
    return _files[key]


def matches(command: str, line: str) -> bool:
    line = line.removesuffix("\r")
    if line == command:
        return True
    # The command is the line's end after a stripped prefix (a prompt, indentation, `run: `, `RUN `, a tab and @).
    return line.endswith(command) and len(line) - len(command) <= MAX_PREFIX and command.strip() != ""


def existing_commands(skip: pathlib.Path) -> set[str]:
    seen: set[str] = set()
    for f in (ROOT / "bench").glob("checker-corpus*"):
        if f == skip:
            continue
        for l in f.read_text(encoding="utf-8", errors="replace").split("\n"):
            if l.startswith("#") or not l.strip():
                continue
            cols = l.split("\t")
            seen.add(cols[1] if len(cols) > 1 and cols[0] in ("safe", "dangerous") else cols[0])
    return seen


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("n", type=int)
    ap.add_argument("--dry", action="store_true")
    ap.add_argument("--drop-repo", action="append", default=[])
    a = ap.parse_args()
    src = pathlib.Path(f"/work/wt/sets/{a.n}.tsv")
    out = ROOT / f"bench/checker-corpus-{words(a.n)}.tsv"
    header, rows = [], []
    for l in src.read_text(encoding="utf-8").split("\n"):
        if l.startswith("#"):
            header.append(l)
        elif l.strip():
            rows.append(l)
    seen = existing_commands(out)
    kept, dup, newline, unmatched, dropped_repo, bad = [], 0, 0, [], 0, []
    for r in rows:
        cols = r.split("\t")
        if len(cols) != 3 or cols[0] not in ("safe", "dangerous"):
            bad.append(r)
            continue
        label, command, source = cols
        m = SOURCE.match(source)
        if m is None:
            bad.append(r)
            continue
        if m["repo"].lower() in {d.lower() for d in a.drop_repo}:
            dropped_repo += 1
            continue
        lines = source_lines(m["repo"], m["commit"], m["path"])
        n = int(m["line"])
        if lines is None or n > len(lines) or not matches(command, lines[n - 1]):
            unmatched.append(r)
            continue
        if "\\n" in command:
            newline += 1
            continue
        if command in seen:
            dup += 1
            continue
        seen.add(command)
        kept.append(r)
    safe = sum(1 for r in kept if r.startswith("safe\t"))
    line = (
        f"# Imported: {len(kept)} rows ({safe} safe, {len(kept) - safe} dangerous); dropped {dup} an earlier corpus"
        f" (or this set) already held, {newline} with a literal backslash-n, {len(unmatched)} not matching their source line"
        + (f", {dropped_repo} from {', '.join(a.drop_repo)} (another set drew on it at the same time)" if a.drop_repo else "")
        + "."
    )
    print(line)
    for r in bad:
        print("MALFORMED:", r[:200])
    for r in unmatched[:20]:
        print("UNMATCHED:", r[:300])
    if not a.dry and not bad:
        out.write_text("\n".join(header + [line] + kept) + "\n", encoding="utf-8")
        print("wrote", out.relative_to(ROOT))


if __name__ == "__main__":
    main()
