"""`gpt-kata`: list, grade, talk, train.

Heavy imports (torch, pytest) happen inside the commands, after a worker
process has been started, so that both processes load torch at the same time.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from pathlib import Path

from grader import paths
from grader.registry import Problem, find, problems

EXIT_PASS, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """A mistake in how the command was called: exit code 2 and one line."""


def file_hash(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def load_status() -> dict:
    try:
        return json.loads((paths.STATE / "status.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def save_status(updates: dict[str, dict]) -> None:
    status = {**load_status(), **updates}
    try:
        paths.STATE.mkdir(exist_ok=True)
        (paths.STATE / "status.json").write_text(json.dumps(status, indent=1) + "\n")
    except OSError:
        pass  # a read-only checkout still grades; it just cannot remember


def learner_status(problem: Problem) -> str:
    """pass / fail from the last grade of this exact file, else todo or not graded."""
    current = file_hash(problem.starter)
    if current is None:
        return "missing"
    recorded = load_status().get(problem.slug, {})
    if recorded.get("sha256") == current:
        return "todo" if recorded.get("starter") else recorded.get("status", "not graded")
    return "not graded"


# -- grade -----------------------------------------------------------------------------

def select_problems(names: list[str]) -> list[Problem]:
    try:
        chosen = [find(n) for n in names] if names else list(problems())
    except LookupError as exc:
        raise UsageError(str(exc)) from None
    return sorted(set(chosen), key=lambda p: p.number)


def resolve_submissions(args: argparse.Namespace) -> dict[Problem, Path]:
    chosen = select_problems(args.problems)
    if args.reference and args.submission:
        raise UsageError("use either --reference or --submission, not both")
    if args.reference:
        return {p: p.reference for p in chosen}
    if args.submission is None:
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


def grade(args: argparse.Namespace) -> int:
    submissions = resolve_submissions(args)
    if args.timeout is not None:
        if args.timeout <= 0:
            raise UsageError("--timeout must be a positive number of seconds")
        os.environ["GPT_KATA_CALL_TIMEOUT"] = str(args.timeout)
    from grader.sandbox.process import POOL

    POOL.prestart()  # the worker imports torch while this process does the same
    from rich.console import Console

    from grader.grading.plugin import GradingPlugin, run_checks
    from grader.grading.report import ProblemSummary, Report, render
    from grader.model import artifacts

    console = Console(highlight=False, stderr=args.quiet)
    goldens = "exact" if artifacts.goldens_platform_matches() else "live-only"
    if not args.quiet:
        source = "the reference solutions" if args.reference else (
            args.submission or "problems/")
        console.print(f"[bold]gpt-kata[/] grading {len(submissions)} problem(s) from {source}")
        if goldens == "live-only":
            console.print("[dim]this machine differs from where the goldens were made; "
                          "comparing live against the reference only[/]")
    plugin = GradingPlugin({p.slug: f for p, f in submissions.items()},
                           {p.slug: p for p in submissions})
    try:
        run_checks(plugin, list(submissions))
    finally:
        POOL.close()
    summaries = [ProblemSummary(p, f, [r for r in plugin.results if r.problem == p])
                 for p, f in submissions.items()]
    report = Report(summaries, goldens, artifacts.this_platform(), plugin.internal_errors)
    if not args.quiet:
        render(report, console, verbose=args.verbose)
    if args.json:
        report.write_json(Path(args.json))
    if not args.reference and args.submission is None:
        save_status({s.problem.slug: {"sha256": file_hash(s.submission), "status": s.status,
                                      "starter": s.untouched}
                     for s in summaries})
    return EXIT_PASS if report.status == "pass" else EXIT_FAIL


# -- list ------------------------------------------------------------------------------

def list_problems(args: argparse.Namespace) -> int:
    from rich.console import Console

    console = Console(highlight=False)
    marks = {"pass": "[green]✓ pass[/]", "fail": "[red]✗ fail[/]", "error": "[red]✗ fail[/]",
             "todo": "[dim]· todo[/]", "not graded": "[yellow]? not graded[/]",
             "missing": "[red]! missing[/]"}
    track = None
    for p in problems():
        if p.track != track:
            track = p.track
            console.print(f"[bold]{track}[/]")
        status = learner_status(p)
        console.print(f"  {p.number:>2}  {p.slug:<16} {marks.get(status, status):<14} {p.title}")
    console.print("[dim]statuses come from your last `gpt-kata grade`; "
                  "read a problem in problems/NN-slug/README.md[/]")
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

        out = paths.ROOT / "runs" / time.strftime("%Y%m%d-%H%M%S")
    if out.exists() and any(out.iterdir()):
        raise UsageError(f"{out} is not empty; choose a new --out so no earlier run is lost")
    from grader.model.training import TrainSettings
    from grader.model.training import train as run_train

    settings = TrainSettings(steps=args.steps, seed=args.seed)
    try:
        run_train(text, out, settings=settings)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    print(f"wrote {out}/model.safetensors, config.json, vocab.json, loss_log.tsv, loss_curve.png")
    return EXIT_PASS


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gpt-kata", description=(
        "Learn how GPT text generation works by writing it: read a problem in problems/, "
        "edit its solution.py, run `gpt-kata grade`."))
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("list", help="the problems, in order, with your status")
    p.set_defaults(run=list_problems)

    p = sub.add_parser("grade", help="grade your solutions (all, or the problems named)")
    p.add_argument("problems", nargs="*", metavar="PROBLEM",
                   help="slug, folder or number, e.g. generate, 06-generate or 6")
    p.add_argument("--submission", metavar="PATH",
                   help="grade this file (one problem) or folder laid out like problems/")
    p.add_argument("--reference", action="store_true", help="grade the reference solutions")
    p.add_argument("--json", metavar="FILE", help="also write a JSON report to FILE")
    p.add_argument("--timeout", type=float, metavar="SECONDS",
                   help="wall-clock limit for each call of your code (default 20)")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing on stdout")
    p.add_argument("-v", "--verbose", action="store_true", help="show every failing check")
    p.set_defaults(run=grade)

    p = sub.add_parser("talk", help="let the shipped model continue your prompt")
    p.add_argument("prompt", nargs="?", default="Once upon a time,")
    p.add_argument("--chars", type=int, default=200, help="how many characters to generate")
    p.add_argument("--stream", choices=["word", "sentence"],
                   help="show the text a word or a sentence at a time (problem 14)")
    sampling = p.add_argument_group(
        "sampling (problem 16); any of these switches from generate() to sample_text()")
    sampling.add_argument("--temperature", type=float, help="0 is greedy (default 1.0)")
    sampling.add_argument("--top-k", type=int, help="keep the k most likely tokens (0: off)")
    sampling.add_argument("--top-p", type=float, help="nucleus: keep probability top_p")
    sampling.add_argument("--no-repeat-ngram", type=int, metavar="N",
                          help="never repeat an N-gram (0: off)")
    sampling.add_argument("--seed", type=int, help="seed the generator once (default 0)")
    p.set_defaults(run=talk)

    p = sub.add_parser("train", help="train the GPT on the shipped corpus or your own text")
    p.add_argument("--corpus", metavar="FILE", help="a UTF-8 text file (default: data/corpus.txt)")
    p.add_argument("--out", metavar="DIR", help="where to write the run (default: runs/<time>)")
    p.add_argument("--steps", type=int, default=3000)
    p.add_argument("--seed", type=int, default=0)
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


if __name__ == "__main__":
    sys.exit(main())
