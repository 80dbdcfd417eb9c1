"""`gpt-kata release OUT`: write the learners' copy of the kata (grader/release/build.py)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from grader.learner.errors import EXIT_PASS, UsageError
from grader.locale import tr


def release(args: argparse.Namespace) -> int:
    from grader.release.build import ReleaseError, write_release

    out = Path(args.out)

    def progress(step: str) -> None:
        # On stderr, a line a step: minutes of work are not silent, and stdout keeps
        # only the result (-q keeps both quiet).
        if not args.quiet:
            try:
                print(f"release: {step}", file=sys.stderr, flush=True)
            except OSError:
                pass  # a closed terminal or pipe: the copy is still written

    try:
        written = write_release(out, progress=progress,
                                answer_hints=not args.no_answer_hints)
    except ReleaseError as error:
        raise UsageError(str(error)) from None
    if not args.quiet:
        print(tr("wrote the learners' copy to {out}: {count} files, no reference code; "
                 "hand it out as it is (see its README.md)", out=out, count=len(written)))
    return EXIT_PASS


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("release", help=tr("write the learners' copy: statements, starters and a "
                                          "practice grader, without the answers"))
    p.add_argument("out", metavar="OUT", help=tr("a new or empty folder to write it into"))
    p.add_argument("-q", "--quiet", action="store_true", help=tr("print nothing on stdout"))
    p.add_argument("--no-answer-hints", action="store_true",
                   help=tr("for a graded class: leave out each problem's last hint (its answer "
                           "in a line) and every named mistake's fix, in every language; the "
                           "mistakes are still named"))
    p.set_defaults(run=release)
