"""`gpt-kata watch`: re-grade the current problem every time what its file holds
changes, or an earlier solution it takes with `solution_of(...)`.

torch, pytest and the fork server stay loaded between grades, so a save is
graded in a fraction of a cold `gpt-kata grade`. On a terminal, keys work as in
rustlings: h hint, l list, r re-run, n next, q quit (read with termios on POSIX,
msvcrt on Windows). Without a terminal it prints plain lines, one per grade.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from grader import paths
from grader.learner import status
from grader.learner.errors import EXIT_PASS
from grader.learner.options import select_problems
from grader.learner.output import console
from grader.locale import tr
from grader.registry import Problem, problems
from grader.reuse import earlier_files

if TYPE_CHECKING:
    from grader.sandbox.host.pool import WorkerPool

POLL = 0.1  # seconds between looks at the file's modification time


def signature(path: Path) -> tuple[int, int] | None:
    """What changes when the file is saved."""
    try:
        info = path.stat()
    except OSError:
        return None
    return info.st_mtime_ns, info.st_size


def digest(path: Path) -> str | None:
    """What the file holds: a save that changes nothing (a touch, a save unedited) keeps it."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


# What a key press does; Ctrl-D (POSIX), Ctrl-Z and Ctrl-C (Windows) end the watch too.
ACTIONS = {"q": "quit", "\x04": "quit", "\x1a": "quit", "\x03": "quit", "r": "rerun",
           "h": "hint", "l": "list", "n": "next"}

KeyReader = Callable[[], str | None]


@contextlib.contextmanager
def single_keys(enabled: bool) -> Iterator[None]:
    """Read keys one at a time without echo, when stdin is a POSIX terminal.

    A Windows console needs nothing: msvcrt reads each key as it is pressed."""
    if not enabled or sys.platform == "win32":
        yield
        return
    import termios
    import tty

    fd = sys.stdin.fileno()
    saved = termios.tcgetattr(fd)
    tty.setcbreak(fd)
    try:
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)


def posix_key() -> str | None:
    import select

    ready, _, _ = select.select([sys.stdin], [], [], 0)
    return sys.stdin.read(1) if ready else None


def windows_key() -> str | None:
    import msvcrt  # only on Windows

    if not msvcrt.kbhit():  # type: ignore[attr-defined]
        return None
    key = msvcrt.getwch()  # type: ignore[attr-defined]
    if key in ("\x00", "\xe0"):  # an arrow or function key: a second code follows
        msvcrt.getwch()  # type: ignore[attr-defined]
        return None
    return key


def key_reader(enabled: bool) -> KeyReader:
    """The key pressed since the last call, or None; never waits."""
    if not enabled:
        return lambda: None
    return windows_key if sys.platform == "win32" else posix_key


def action_of(key: str | None) -> str | None:
    """What a key asks for ("quit", "rerun", "hint", "list", "next"), if anything."""
    return ACTIONS.get(key.lower()) if key else None


NOTHING_SEEN = object()  # before the first look at the file


class Watcher:
    def __init__(self, problem: Problem, pool: WorkerPool | None, interactive: bool,
                 stay: bool = False, keys: KeyReader | None = None) -> None:
        self.problem = problem
        self.stay = stay
        self.pool = pool
        self.interactive = interactive
        self.keys = keys if keys is not None else key_reader(interactive)
        self.out = console()
        self._own: tuple[int, int] | None = None
        self._earlier: list[Path] = []

    def watched(self) -> tuple | None:
        """What changes when the problem's file, or an earlier solution it uses, is saved."""
        own = signature(self.problem.starter)
        if own is None:
            return None
        if own != self._own:  # read the file again only when it was saved
            self._own, self._earlier = own, earlier_files(self.problem.starter)
        return (own, *(signature(file) for file in self._earlier))

    def contents(self) -> tuple:
        """What the files `watched` looks at hold: a grade is needed only when it changed."""
        return (digest(self.problem.starter), *(digest(file) for file in self._earlier))

    def grade(self) -> str:
        """Grade the current problem's file; its status."""
        from rich.markup import escape

        from grader.learner import practice
        from grader.reports.report import render

        started = time.perf_counter()
        if self.interactive:  # the screen is cleared for the report when it comes
            self.out.print("[dim]" + tr("grading problems/{folder}/solution.py...",
                                        folder=self.problem.folder) + "[/]")
        if self.pool is None:  # a learners' copy: its stored answers judge
            report = practice.practice_report([self.problem])
        else:
            from grader.importing import without_collections

            with without_collections():  # torch, pytest, hypothesis: the first time only
                from grader.grading.engine.session import grade_problems
            report = grade_problems({self.problem: self.problem.starter}, self.pool)
        status.record(report)
        summary = report.summaries[0]
        seconds = time.perf_counter() - started
        if self.interactive:
            self.out.clear()
            render(report, self.out)
            self.out.print("[dim]" + tr("graded in {seconds:.1f} s; watching "
                                        "problems/{folder}/solution.py · "
                                        "h hint · l list · r re-run · n next · q quit",
                                        seconds=seconds, folder=self.problem.folder) + "[/]")
            # The screen was cleared: the pool's one line on stderr went with it.
            notice = getattr(self.pool, "notice", None)
            if notice:
                self.out.print(f"[dim]{escape(notice)}[/]")
        else:
            passed = tr("{passed}/{total} checks pass", passed=summary.passed,
                        total=len(summary.results))
            print(f"{time.strftime('%H:%M:%S')} {self.problem.folder} "
                  f"{status_word(summary.status)} "
                  f"({passed}, {seconds:.1f} s)", flush=True)
        return summary.status

    def run(self) -> int:
        # Not None: a file missing from the start is said at once, as one removed later.
        last: object = NOTHING_SEEN  # the files as last acted on
        # The files at the look before this one: as they are at the start, which are
        # graded at once (a watch whose input is closed quits after its first look).
        seen: object = self.watched()
        graded: object = NOTHING_SEEN  # what they held when last graded
        while True:
            current = self.watched()
            # A save can land as several writes (the file emptied, then written): the
            # files are acted on once two looks in a row find them alike, not half written.
            if current != last and current == seen:
                last = current
                if current is None:
                    graded = NOTHING_SEEN
                    self.out.print(tr("waiting for problems/{folder}/solution.py",
                                      folder=self.problem.folder))
                elif self.contents() != graded:
                    # Only what they hold is graded again: a touch, or a save of what was
                    # graded already, changes the files' times and not their grade. A save
                    # during the grade is seen at the next look, and graded then.
                    graded = self.contents()
                    watched = self.problem
                    if self.grade() == "pass" and not self.stay and not self.advance():
                        return EXIT_PASS
                    if self.problem != watched:  # moved on: its file waits for a save
                        last = seen = self.watched()
                        graded = self.contents()
                        continue
            seen = current
            action = action_of(self.keys())
            if action == "quit":
                return EXIT_PASS
            if action == "rerun" or (action == "next" and self.skip()):
                last = graded = NOTHING_SEEN
            elif action == "hint":
                self.show_hint()
            elif action == "list":
                self.show_list()
            time.sleep(POLL)

    def advance(self) -> bool:
        """Move on, after a pass, to the first problem not passed; False when there is none."""
        following = status.first_unpassed()
        if following is None:
            self.out.print("[green]" + tr("every problem passes") + "[/]: "
                           + tr("try `gpt-kata talk`"))
            return False
        if following != self.problem:
            self.out.print("[green]✓ " + tr("{folder} passes", folder=self.problem.folder)
                           + "[/]; " + tr("next: {statement}", statement=statement(following)))
            self.problem = following
        return True

    def skip(self) -> bool:
        """Leave this problem for the next one not passed after it (then from the
        start); False, staying here, when every other problem passes."""
        ordered = problems()
        at = ordered.index(self.problem)
        following = next((p for p in (*ordered[at + 1:], *ordered[:at])
                          if status.learner_status(p) != "pass"), None)
        if following is None:
            self.out.print(tr("every other problem passes; still watching "
                              "problems/{folder}/solution.py", folder=self.problem.folder))
            return False
        self.out.print(tr("skipped {folder}; next: {statement}", folder=self.problem.folder,
                          statement=statement(following)))
        self.problem = following
        return True

    def show_hint(self) -> None:
        shown = status.next_hint(self.problem)
        for line in status.hint_lines(self.problem, shown, 0):
            self.out.print(line, markup=False)

    def show_list(self) -> None:
        from rich.cells import cell_len

        width = max(len(p.slug) for p in problems())  # the longest slug sets the column
        for p in problems():
            here = tr("<- watching") if p == self.problem else ""
            word = status_word(status.learner_status(p))
            # 11 columns of the console's cells: a Chinese character takes two
            shown = word + " " * max(0, 11 - cell_len(word))
            self.out.print(f"  {p.number:>2}  {p.slug:<{width}}  "
                           f"{shown} {here}".rstrip(), markup=False)


def status_word(learner_status: str) -> str:
    """A status as `list` says it, in the language in use."""
    words = {"pass": tr("pass"), "fail": tr("fail"), "error": tr("error"),
             "todo": tr("todo"), "not graded": tr("not graded"), "missing": tr("missing")}
    return words.get(learner_status, learner_status)


def statement(problem: Problem) -> str:
    """Where a problem's statement is, in the language in use where it has one."""
    return f"problems/{problem.folder}/{status.statement_of(problem).name}"


def watch(args: argparse.Namespace) -> int:
    if args.problem:
        problem = select_problems([args.problem])[0]
    else:
        problem = status.first_unpassed() or problems()[-1]
    interactive = sys.stdin.isatty() and sys.stdout.isatty()
    if paths.in_a_copy():
        graders: Any = contextlib.nullcontext(None)  # no sandbox: the copy runs its own processes
    else:
        from grader.learner.sandbox_notice import NoticedPool
        from grader.sandbox.wire.limits import Limits

        graders = NoticedPool(sandbox=Limits())
    with graders as pool, single_keys(interactive):
        try:
            return Watcher(problem, pool, interactive, args.stay).run()
        except KeyboardInterrupt:
            return EXIT_PASS
