"""The learner's small commands over the registry and their grades' status: `list`,
`hint` and `reset`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from grader import paths
from grader.learner import status
from grader.learner.errors import EXIT_FAIL, EXIT_PASS, UsageError
from grader.learner.options import select_problems
from grader.learner.output import console
from grader.locale import tr, translated
from grader.registry import problems

# -- list ------------------------------------------------------------------------------

def list_problems(args: argparse.Namespace) -> int:
    from rich.cells import cell_len

    out = console()
    marks = {"pass": ("green", "✓", tr("pass")), "fail": ("red", "✗", tr("fail")),
             "error": ("red", "✗", tr("fail")), "todo": ("dim", "·", tr("todo")),
             "not graded": ("yellow", "?", tr("not graded")),
             "missing": ("red", "!", tr("missing"))}
    # The status column as wide as its widest word in this language, in the
    # console's cells: a Chinese character takes two.
    width = max(cell_len(f"{mark} {word}") for _, mark, word in marks.values())
    track = None
    w = max([16, *(len(p.slug) for p in problems())])  # the slugs' column
    for p in problems():
        if p.track != track:
            track = p.track
            out.print(f"[bold]{translated(track)}[/]")
        colour, mark, word = marks.get(status.learner_status(p), ("red", "!", "?"))
        shown = f"{mark} {word}"
        pad = " " * (width - cell_len(shown))
        out.print(f"  {p.number:>2}  {p.slug:<{w}} [{colour}]{shown}[/]{pad} "
                  f"{translated(p.title)}")
    out.print("[dim]" + tr("statuses come from your last `gpt-kata grade`; read a problem "
                           "in {statement}", statement=statement_pattern()) + "[/]")
    return EXIT_PASS


def statement_pattern() -> str:
    """Where a problem's statement is, in the language in use."""
    from grader.locale import language

    return ("problems/NN-slug/README.md" if language() == "en"
            else f"problems/NN-slug/README.{language()}.md")


# -- hint ------------------------------------------------------------------------------

def hint(args: argparse.Namespace) -> int:
    if args.problem:
        problem = select_problems([args.problem])[0]
    else:
        problem = status.first_unpassed()
        if problem is None:
            print(tr("every problem passes its last grade; name one for its hints: "
                     "gpt-kata hint PROBLEM"))
            return EXIT_PASS
    from grader.reports.report import HINT_COMMAND

    shown = status.next_hint(problem)
    hints_shown = status.load_status().get(problem.slug, {}).get("hints_shown", 0)
    print("\n".join(status.hint_lines(problem, shown, hints_shown, HINT_COMMAND)))
    return EXIT_PASS


# -- reset -----------------------------------------------------------------------------

def backup_path(file: Path) -> Path:
    """A new name next to `file` that says when it was put aside."""
    import time

    stamp = time.strftime("%Y-%m-%dT%H-%M-%S")
    candidate = file.with_name(f"{file.name}.{stamp}.bak")
    n = 2
    while candidate.exists():  # two resets within a second keep both files
        candidate = file.with_name(f"{file.name}.{stamp}-{n}.bak")
        n += 1
    return candidate


def reset(args: argparse.Namespace) -> int:
    problem = select_problems([args.problem])[0]
    starter = paths.STARTERS / problem.folder / "solution.py"
    if not starter.is_file():
        raise UsageError(tr("no starter for {folder} in {where}", folder=problem.folder,
                            where=starter.parent))
    target = problem.starter
    pristine = starter.read_bytes()
    if target.is_file() and target.read_bytes() == pristine:
        print(tr("{target} is already the starter; nothing to do", target=target))
        return EXIT_PASS
    backup = backup_path(target) if target.exists() else None
    if not args.yes:
        if not sys.stdin.isatty():
            raise UsageError(tr("reset replaces {target}; there is no terminal to ask on, "
                                "so pass --yes to confirm", target=target))
        question = (tr("Put the starter back in {target} (yours is kept as {backup})? [y/N] ",
                       target=target, backup=backup.name) if backup
                    else tr("Put the starter back in {target}? [y/N] ", target=target))
        answer = input(question)
        if answer.strip().lower() not in ("y", "yes"):
            print(tr("nothing changed"))
            return EXIT_FAIL
    if backup is not None:
        # a learner's work is never deleted: it moves aside before the starter goes in
        target.rename(backup)
        print(tr("kept your file as {backup}", backup=backup))
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(pristine)
    print(tr("{target} is the starter again", target=target))
    return EXIT_PASS
