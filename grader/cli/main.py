"""`gpt-kata`: list, grade, watch, hint, reset, trace, talk, train.

Heavy imports (torch, pytest) happen inside the commands, after a worker
process has been started, so that both processes load torch at the same time.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from grader import paths
from grader.cli import status
from grader.cli.errors import EXIT_FAIL, EXIT_PASS, EXIT_USAGE, UsageError
from grader.cli.options import (
    positive_megabytes,
    positive_seconds,
    require_isolation,
    select_problems,
)
from grader.cli.output import clock, console
from grader.registry import Problem, problems
from grader.sandbox.process import (
    DEFAULT_CALL_TIMEOUT,
    DEFAULT_MEMORY_MB,
    DEFAULT_PROBLEM_BUDGET,
    Sandbox,
    WorkerPool,
)

# -- grade -----------------------------------------------------------------------------

def resolve_submissions(args: argparse.Namespace) -> dict[Problem, Path]:
    chosen = select_problems(args.problems)
    if args.reference and args.submission:
        raise UsageError("use either --reference or --submission, not both")
    if args.reference:
        return {p: p.reference for p in chosen}
    if args.submission is None:
        if not any(p.starter.is_file() for p in chosen):
            raise UsageError(f"no problems/NN-slug/solution.py in {paths.KATA}: run gpt-kata "
                             "in your kata folder, or name one with --submission")
        return {p: p.starter for p in chosen}
    target = Path(args.submission)
    if target.is_file():
        if not args.problems:
            by_folder = [p for p in problems() if p.folder == target.resolve().parent.name]
            if not by_folder:
                raise UsageError(f"which problem is {target} for? name it: "
                                 f"gpt-kata grade PROBLEM --submission {target}")
            chosen = by_folder
        if len(chosen) != 1:
            raise UsageError("--submission FILE grades one problem; name exactly one")
        return {chosen[0]: target}
    if target.is_dir():
        found = {p: target / p.folder / "solution.py" for p in chosen}
        found = {p: f for p, f in found.items() if f.is_file()}
        if not found:
            raise UsageError(f"{target} holds no NN-slug/solution.py files like problems/")
        if args.problems and len(found) < len(chosen):
            missing = ", ".join(p.folder for p in chosen if p not in found)
            raise UsageError(f"{target} has no solution.py for {missing}")
        return found
    raise UsageError(f"--submission {target}: no such file or folder")


def check_report_target(option: str, target: str | None) -> None:
    """Refuse a report path that could not be written, before minutes of grading."""
    if target is None:
        return
    path = Path(target)
    if target.endswith(("/", os.sep)) or path.is_dir():
        raise UsageError(f"{option} {target} is a folder; name a file to write")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise UsageError(f"{option} {target}: there is no folder {parent}")
    if not os.access(path if path.exists() else parent, os.W_OK):
        raise UsageError(f"{option} {target}: not allowed to write there")


def grade(args: argparse.Namespace) -> int:
    submissions = resolve_submissions(args)
    check_report_target("--json", args.json)
    check_report_target("--junit", args.junit)
    require_isolation(args)
    sandbox = None if args.no_sandbox else Sandbox(memory_bytes=int(args.memory * 2**20))
    pool = WorkerPool(debug=bool(os.environ.get("GPT_KATA_DEBUG")), sandbox=sandbox)
    pool.start()  # the fork server imports torch while this process does the same
    pool.prepare([(str(f), "Solution", list(p.methods))
                  for p, f in sorted(submissions.items(), key=lambda item: item[0].number)])
    try:
        return grade_with(args, submissions, pool)
    finally:
        pool.close()


def grade_with(args: argparse.Namespace, submissions: dict[Problem, Path],
               pool: WorkerPool) -> int:
    from grader.grading.report import render
    from grader.grading.session import Limits, goldens_mode, grade_problems

    out = console(stderr=args.quiet)
    if not args.quiet:
        source = "the reference solutions" if args.reference else (
            args.submission or "problems/")
        out.print(f"[bold]gpt-kata[/] grading {len(submissions)} problem(s) from {source}")
        if goldens_mode() == "live-only" and args.verbose:
            out.print("[dim]this machine's torch or CPU differs from the one the goldens "
                          "were made on, so answers are compared with the reference run "
                          "here[/]")
        if pool.sandbox is None and not args.no_sandbox:
            out.print("[dim]your code runs without a sandbox on this system "
                      "(isolation needs Linux)[/]")
    report = grade_problems(submissions, pool, Limits(call_timeout=args.timeout,
                                                      problem_budget=args.budget))
    report.mode = "classroom" if args.classroom else "practice"
    pool.close()  # every worker is gone before anything is written
    if not args.quiet:
        render(report, out, verbose=args.verbose)
    if args.json:
        report.write_json(Path(args.json))
    if args.junit:
        from grader.grading.junit import write_junit

        write_junit(report.to_json(), Path(args.junit))
    if not args.reference and args.submission is None:
        status.record(report)
    return EXIT_PASS if report.status == "pass" else EXIT_FAIL


# -- list ------------------------------------------------------------------------------

def list_problems(args: argparse.Namespace) -> int:
    out = console()
    marks = {"pass": "[green]✓ pass[/]", "fail": "[red]✗ fail[/]", "error": "[red]✗ fail[/]",
             "todo": "[dim]· todo[/]", "not graded": "[yellow]? not graded[/]",
             "missing": "[red]! missing[/]"}
    track = None
    for p in problems():
        if p.track != track:
            track = p.track
            out.print(f"[bold]{track}[/]")
        state = status.learner_status(p)
        out.print(f"  {p.number:>2}  {p.slug:<16} {marks.get(state, state):<14} {p.title}")
    out.print("[dim]statuses come from your last `gpt-kata grade`; "
                  "read a problem in problems/NN-slug/README.md[/]")
    return EXIT_PASS


# -- hint ------------------------------------------------------------------------------

def hint(args: argparse.Namespace) -> int:
    if args.problem:
        problem = select_problems([args.problem])[0]
    else:
        problem = status.first_unpassed()
        if problem is None:
            print("every problem passes its last grade; name one for its hints: "
                  "gpt-kata hint PROBLEM")
            return EXIT_PASS
    what, text = status.next_hint(problem)
    print(f"{problem.folder}, {what}:")
    for line in text.splitlines():
        print(f"  {line}")
    shown = status.load_status().get(problem.slug, {}).get("hints_shown", 0)
    if shown < len(problem.hints):
        print(f"(`gpt-kata hint {problem.slug}` again for a stronger hint)")
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
        raise UsageError(f"no starter for {problem.folder} in {starter.parent}")
    target = problem.starter
    pristine = starter.read_bytes()
    if target.is_file() and target.read_bytes() == pristine:
        print(f"{target} is already the starter; nothing to do")
        return EXIT_PASS
    backup = backup_path(target) if target.exists() else None
    if not args.yes:
        if not sys.stdin.isatty():
            raise UsageError(f"reset replaces {target}; there is no terminal to ask on, "
                             "so pass --yes to confirm")
        keep = f" (yours is kept as {backup.name})" if backup else ""
        answer = input(f"Put the starter back in {target}{keep}? [y/N] ")
        if answer.strip().lower() not in ("y", "yes"):
            print("nothing changed")
            return EXIT_FAIL
    if backup is not None:
        # a learner's work is never deleted: it moves aside before the starter goes in
        target.rename(backup)
        print(f"kept your file as {backup}")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(pristine)
    print(f"{target} is the starter again")
    return EXIT_PASS


# -- talk ------------------------------------------------------------------------------

def talk(args: argparse.Namespace) -> int:
    from grader.cli.talk import talk as run_talk

    return run_talk(args)


# -- train -----------------------------------------------------------------------------

def train(args: argparse.Namespace) -> int:
    corpus = Path(args.corpus) if args.corpus else paths.DATA / "corpus.txt"
    try:
        text = corpus.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"--corpus {corpus}: no such file") from None
    except UnicodeDecodeError as exc:
        raise UsageError(f"--corpus {corpus} is not UTF-8 text ({exc.reason} at byte "
                         f"{exc.start})") from None
    out = Path(args.out) if args.out else None
    if out is None:
        import time

        out = paths.KATA / "runs" / time.strftime("%Y%m%d-%H%M%S")
    if out.exists() and any(out.iterdir()):
        raise UsageError(f"{out} is not empty; choose a new --out so no earlier run is lost")
    from grader.model.training import TrainSettings
    from grader.model.training import train as run_train

    settings = TrainSettings(steps=args.steps, seed=args.seed)
    live = sys.stdout.isatty()
    try:
        run_train(text, out, settings=settings, show_progress=live,
                  on_eval=None if live else progress_line)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    curve = ", loss_curve.png" if (out / "loss_curve.png").exists() else ""
    print(f"wrote {out}/model.safetensors, config.json, vocab.json, loss_log.tsv{curve}")
    return EXIT_PASS


def progress_line(step: int, steps: int, train_loss: float, val_loss: float,
                  elapsed: float) -> None:
    """One plain line per evaluation: a log or a pipe shows no live progress bar."""
    left = elapsed / step * (steps - step) if step else None
    eta = clock(left) if left is not None else "?"
    print(f"step {step}/{steps}  loss {train_loss:.3f}  val {val_loss:.3f}  "
          f"elapsed {clock(elapsed)}  ETA {eta}", flush=True)


class DefaultsShown(argparse.HelpFormatter):
    """Every option that takes a value says what it is when not given."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if not action.option_strings or action.nargs == 0 or "default" in text:
            return text
        shown = "none" if action.default is None else "%(default)s"
        return f"{text} (default: {shown})".lstrip()


class KataParser(argparse.ArgumentParser):
    """A command's parser. With `intermixed`, its options may also come between or
    before its positionals: argparse alone takes all of a command's positionals in
    one go, so `trace generate --steps 5 "Tom"` would leave "Tom" unrecognised."""

    def __init__(self, *args: Any, intermixed: bool = False, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", DefaultsShown)
        super().__init__(*args, **kwargs)
        self.intermixed = intermixed
        self._parsing = False

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        if not self.intermixed or self._parsing:
            return super().parse_known_args(args, namespace)
        # parse_known_intermixed_args parses in two passes through parse_known_args,
        # which must then be argparse's own.
        self._parsing = True
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._parsing = False


def run_watch(args: argparse.Namespace) -> int:
    from grader.cli.watch import watch

    return watch(args)


def build_parser() -> argparse.ArgumentParser:
    parser = KataParser(prog="gpt-kata", description=(
        "Learn how GPT text generation works by writing it: read a problem in problems/, "
        "edit its solution.py, run `gpt-kata grade`."))
    # every subcommand's parser, including those added elsewhere, shows its defaults
    sub = parser.add_subparsers(dest="command", required=True, parser_class=KataParser)

    p = sub.add_parser("list", help="the problems, in order, with your status")
    p.set_defaults(run=list_problems)

    p = sub.add_parser("grade", help="grade your solutions (all, or the problems named)")
    p.add_argument("problems", nargs="*", metavar="PROBLEM",
                   help="slug, number, folder or path, e.g. generate, 6, 06-generate or "
                        "problems/06-generate/ (default: every problem)")
    p.add_argument("--submission", metavar="PATH",
                   help="grade this file (one problem) or folder laid out like problems/ "
                        "(default: your problems/)")
    p.add_argument("--reference", action="store_true", help="grade the reference solutions")
    p.add_argument("--json", metavar="FILE", help="also write a JSON report to FILE")
    p.add_argument("--junit", metavar="FILE", help="also write a JUnit XML report to FILE")
    p.add_argument("--timeout", type=positive_seconds, default=DEFAULT_CALL_TIMEOUT,
                   metavar="SECONDS",
                   help="wall-clock limit for each call of your code (default: %(default)g)")
    p.add_argument("--budget", type=positive_seconds, default=DEFAULT_PROBLEM_BUDGET,
                   metavar="SECONDS",
                   help="wall-clock limit for all calls of one problem together "
                        "(default: %(default)g)")
    p.add_argument("--memory", type=positive_megabytes, default=DEFAULT_MEMORY_MB, metavar="MB",
                   help="memory your code may use beyond the worker's own, on Linux "
                        "(default: %(default)g)")
    p.add_argument("--classroom", action="store_true",
                   help="grade files you do not trust: refuse to run without a sandbox")
    p.add_argument("--allow-unisolated", action="store_true",
                   help="with --classroom, grade even where no sandbox is available")
    p.add_argument("--no-sandbox", action="store_true",
                   help="run your code without the sandbox (your own code only)")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing on stdout")
    p.add_argument("-v", "--verbose", action="store_true", help="show every failing check")
    p.set_defaults(run=grade)

    p = sub.add_parser("watch", help="re-grade a problem every time you save it, then move on")
    p.add_argument("problem", nargs="?", metavar="PROBLEM",
                   help="slug, number, NN-slug or folder (default: the first not passed)")
    p.add_argument("--stay", action="store_true",
                   help="keep watching this problem after it passes (default: move on)")
    p.set_defaults(run=run_watch)

    p = sub.add_parser("hint", help="a hint for a problem, a stronger one each time you ask")
    p.add_argument("problem", nargs="?", metavar="PROBLEM",
                   help="slug, number, folder or path (default: the first problem not "
                        "passed)")
    p.set_defaults(run=hint)

    p = sub.add_parser("reset", help="put a problem's starter back, keeping your file as a "
                                     "timestamped .bak next to it")
    p.add_argument("problem", metavar="PROBLEM", help="slug, number, folder or path")
    p.add_argument("--yes", action="store_true",
                   help="do not ask for confirmation (needed without a terminal)")
    p.set_defaults(run=reset)

    from grader.cli.trace import add_parser as add_trace_parser

    add_trace_parser(sub)

    from grader.cli.gradebook import add_parser as add_gradebook_parser

    add_gradebook_parser(sub)

    from grader.cli.gradescope import add_parser as add_gradescope_parser

    add_gradescope_parser(sub)

    p = sub.add_parser("talk", help="let the shipped model continue your prompt")
    p.add_argument("prompt", nargs="?", default="Once upon a time,",
                   help="the text to continue (default: %(default)r)")
    p.add_argument("--chars", type=int, default=200,
                   help="how many characters to generate (default: %(default)s)")
    p.add_argument("--stream", choices=["word", "sentence"],
                   help="show the text a word or a sentence at a time (problem 14) "
                        "(default: each character as it comes)")
    sampling = p.add_argument_group(
        "sampling (problem 16); any of these switches from generate() to sample_text()")
    sampling.add_argument("--temperature", type=float, help="0 is greedy (default: 1.0)")
    sampling.add_argument("--top-k", type=int,
                          help="keep the k most likely tokens, 0 for all (default: 0)")
    sampling.add_argument("--top-p", type=float,
                          help="nucleus: keep probability top_p, 1.0 for all (default: 1.0)")
    sampling.add_argument("--no-repeat-ngram", type=int, metavar="N",
                          help="never repeat an N-gram, 0 for off (default: 0)")
    sampling.add_argument("--seed", type=int, help="seed the generator once (default: 0)")
    p.set_defaults(run=talk)

    p = sub.add_parser("train", help="train the GPT on the shipped corpus or your own text")
    p.add_argument("--corpus", metavar="FILE", help="a UTF-8 text file (default: data/corpus.txt)")
    p.add_argument("--out", metavar="DIR", help="where to write the run (default: runs/<time>)")
    p.add_argument("--steps", type=int, default=3000,
                   help="optimizer steps (default: %(default)s)")
    p.add_argument("--seed", type=int, default=0,
                   help="seed for the weights and the batches (default: %(default)s)")
    p.set_defaults(run=train)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except UsageError as exc:
        print(f"gpt-kata {args.command}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130


def run() -> None:
    """The console entry point: `main`, then an exit that skips interpreter teardown.

    Unloading torch, hypothesis and pytest at exit takes about half a second,
    longer than grading a passing problem's checks. Every file the commands
    write is closed before they return, so only the standard streams need flushing.
    """
    code = main()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


if __name__ == "__main__":
    run()
