"""The bundle's self-test: what an instructor runs before publishing, to learn what
the grade of every learner's submission will be made under.

`bash self_test` in an unpacked bundle (on Gradescope's image, under "Debug via
SSH", or locally in `gradescope/autograder-base`), and the last lines of
`setup.sh` when Gradescope builds the image, run `python -m
grader.classroom.gradescope_autograder --self-test`. It says which sandbox layers the container
gives and which it lacks, whether classroom grading will be refused there (every
submission would then score 0), and grades the grader's own reference of the first
problem as a submission, end to end, through the very path `run_autograder` takes.
Exit 0 only if that grade earned its full points in the sandbox (or unisolated,
where the bundle allows it). A bundle built in another language says it in that one
(its self_test sets the language as run_autograder does); the layers' names stay ids.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from grader.locale import tr
from grader.reports.scoring import format_points


def self_test(grade: Callable[[Path, Path], dict], allowed: bool, settings: str = "") -> int:
    """Say what grades are made under here, grading a reference with `grade` (the one
    run_autograder uses); `allowed`: the bundle allows grading without the sandbox;
    `settings`: a line of the bundle's own (its late penalty, its seed)."""
    from grader.registry import problems
    from grader.sandbox.worker.machine import probe

    isolation = probe()
    # The layers' names are ids, the same in every language, as a report records them.
    print(tr("platform: {platform}", platform=isolation.platform))
    print(tr("sandbox layers this container gives: {layers}",
             layers=", ".join(isolation.summary()) or tr("none")))
    print(tr("layers it lacks: {layers}", layers=", ".join(isolation.missing()) or tr("none")))
    refused = not isolation.landlock_abi and not allowed
    if refused:
        print(tr("classroom grading will be REFUSED here: there is no Landlock (Linux 5.13 or "
                 "newer), so every submission would score 0 with that reason. Grade where the "
                 "kernel has it, or rebuild the bundle with --allow-unisolated to grade "
                 "without the sandbox."))
    elif not isolation.landlock_abi:
        print(tr("grading WITHOUT the sandbox: the bundle was built with --allow-unisolated"))
    if settings:
        print(settings)

    first = problems()[0]
    with tempfile.TemporaryDirectory(prefix="gpt-kata-self-test-") as tmp:
        submission = Path(tmp) / "submission" / "problems" / first.folder
        submission.mkdir(parents=True)
        shutil.copy(first.reference, submission / "solution.py")
        work = Path(tmp) / "work"
        work.mkdir()
        report = grade(submission.parent.parent, work)
    entry = next((p for p in report.get("problems") or [] if p.get("problem") == first.slug),
                 None)
    earned = entry is not None and entry.get("score") == entry.get("max_score")
    layers = (report.get("provenance") or {}).get("isolation") or []
    isolated = ", ".join(map(str, layers)) if isinstance(layers, list) else ""
    score = format_points(entry["score"]) if entry else 0
    max_score = format_points(entry["max_score"]) if entry else first.points
    if isolated:
        print(tr("graded the reference of {problem} as a submission: {score}/{max_score} "
                 "points, under {layers}", problem=first.folder, score=score,
                 max_score=max_score, layers=isolated))
    else:
        print(tr("graded the reference of {problem} as a submission: {score}/{max_score} "
                 "points", problem=first.folder, score=score, max_score=max_score))
    if report.get("message"):
        print(tr("grader: {message}", message=report["message"]))
    ok = earned and not refused
    print(tr("self-test passed: submissions will be graded as shown") if ok
          else tr("self-test FAILED: fix the above before learners submit"))
    return 0 if ok else 1
