#!/usr/bin/env python3
"""The used list the helpers check before each fetch: every pair of neighbouring path segments
(`owner/name`) in any corpus file of the bench, lower case. Over-inclusive on purpose: a pair that
is not a repository only blocks a name nobody would fetch. The project's own top-level directories
(`bench/...`, `src/...`) are left out whatever their case, so a helper grepping the list sees no
path of this project.

    python3 scripts/blind-sets/used-list.py > /work/wt/used-repos.txt
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
OWN = {p.name.lower() for p in ROOT.iterdir() if p.is_dir()} | {"bench", "src", "test", "docs"}
SEGMENT = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


def pairs(text: str):
    # Every run of segments joined by "/", each neighbouring pair taken (overlapping).
    for run in re.finditer(r"[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)+", text):
        parts = run.group(0).split("/")
        for a, b in zip(parts, parts[1:]):
            if SEGMENT.fullmatch(a) and SEGMENT.fullmatch(b) and a.lower() not in OWN:
                yield f"{a.lower()}/{b.lower().removesuffix('.git')}"


def main() -> None:
    seen: set[str] = set()
    for f in sorted((ROOT / "bench").glob("checker-corpus*")):
        seen.update(pairs(f.read_text(encoding="utf-8", errors="replace")))
    extra = pathlib.Path("/work/wt/used-repos.txt")
    if len(sys.argv) > 1 and sys.argv[1] == "--keep" and extra.exists():
        seen.update(l.strip().lower() for l in extra.read_text().splitlines() if "/" in l)
    sys.stdout.write("".join(f"{p}\n" for p in sorted(seen)))


if __name__ == "__main__":
    main()
