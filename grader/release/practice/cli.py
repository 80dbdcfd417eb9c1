"""`gpt-kata` in the learners' copy: list, grade, watch, hint; a line for the rest."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

PRACTICE = ("This is a practice grade: the fixed cases and a few drawn examples, judged "
            "against stored answers. Your instructor's grade runs the full checks, with "
            "examples this copy does not hold.")
NEEDS_REFERENCE = ("`gpt-kata {command}` needs the reference code, which this learners' copy "
                   "does not hold: your instructor's copy of the kata has it.")


def kata_folder() -> Path:
    here = Path.cwd()
    for folder in (here, *here.parents):
        if (folder / "problems" / "registry.toml").is_file():
            return folder
    raise SystemExit("not inside the kata: run gpt-kata from the folder with problems/")


def problems() -> list[dict[str, Any]]:
    table = tomllib.loads((kata_folder() / "problems" / "registry.toml").read_text("utf-8"))
    found = table["problem"]
    for number, problem in enumerate(found, 1):
        problem["folder"] = f"{number:02d}-{problem['slug']}"
    return found


def select(names: list[str]) -> list[dict[str, Any]]:
    every = problems()
    if not names:
        return every
    chosen = []
    for name in names:
        match = [p for p in every if name in (p["slug"], p["folder"], p["folder"][:2],
                                              str(int(p["folder"][:2])))]
        if not match:
            raise SystemExit(f"no problem {name!r}; `gpt-kata list` shows them")
        chosen.extend(match)
    return chosen


def grade(names: list[str]) -> int:
    from gpt_kata_practice.grade import grade_problem

    failed = 0
    for problem in select(names):
        path = kata_folder() / "problems" / problem["folder"] / "solution.py"
        result = grade_problem(problem["slug"], path)
        if result.not_practised:
            print(f"  ? {problem['folder']}: not practised here: {result.not_practised}")
        elif result.unavailable:
            failed += 1
            print(f"  ✗ {problem['folder']}: {result.unavailable}")
        elif result.failures:
            failed += 1
            print(f"  ✗ {problem['folder']}: {result.counted}")
            for failure in result.failures:
                print(f"    {failure}")
        else:
            print(f"  ✓ {problem['folder']}: {result.counted}")
    print(PRACTICE)
    return 1 if failed else 0


def watch(names: list[str]) -> int:
    """Grade again whenever a chosen solution.py is saved; Ctrl-C stops."""
    chosen = select(names)
    paths = [kata_folder() / "problems" / p["folder"] / "solution.py" for p in chosen]
    seen: list[float] = []
    try:
        while True:
            now = [p.stat().st_mtime if p.exists() else 0.0 for p in paths]
            if now != seen:
                seen = now
                # A fresh process each time, so the saved file is read anew.
                import subprocess

                subprocess.run([sys.executable, "-m", "gpt_kata_practice", "grade",
                                *[p["slug"] for p in chosen]], check=False)
                print("(watching; Ctrl-C stops)")
            time.sleep(1.0)
    except KeyboardInterrupt:
        return 0


def hint(names: list[str]) -> int:
    problem = select(names)[0] if names else problems()[0]
    state_file = kata_folder() / ".gpt-kata" / "hints.json"
    shown = json.loads(state_file.read_text("utf-8")) if state_file.is_file() else {}
    hints = problem.get("hints", [])
    if not hints:
        print(f"{problem['folder']} has no hints")
        return 0
    n = min(shown.get(problem["slug"], 0) + 1, len(hints))
    shown[problem["slug"]] = n
    state_file.parent.mkdir(exist_ok=True)
    state_file.write_text(json.dumps(shown, indent=1), "utf-8")
    print(f"{problem['folder']}, hint {n} of {len(hints)}:\n  {hints[n - 1]}")
    return 0


def list_problems() -> int:
    for problem in problems():
        print(f"  {problem['folder']}  {problem['title']}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="gpt-kata", description="The kata's practice grader.")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="the problems")
    for name, text in (("grade", "grade your solutions on the practice cases"),
                       ("watch", "grade again each time you save"),
                       ("hint", "the next hint for a problem")):
        sub.add_parser(name, help=text).add_argument("problems", nargs="*")
    for name in ("talk", "trace", "train", "gradebook"):
        sub.add_parser(name, help="not in the learners' copy").add_argument(
            "rest", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    if args.command == "list":
        return list_problems()
    if args.command == "grade":
        return grade(args.problems)
    if args.command == "watch":
        return watch(args.problems)
    if args.command == "hint":
        return hint(args.problems)
    print(NEEDS_REFERENCE.format(command=args.command))
    return 2
