"""`gpt-kata`: list, grade, watch, hint, reset, trace, talk, train.

Each command lives in a function here or in a module of its own (grade,
gradebook, watch, trace, talk); heavy imports (torch, pytest) happen inside them.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

from grader import paths
from grader.learner import status
from grader.learner.errors import EXIT_FAIL, EXIT_PASS, EXIT_USAGE, UsageError
from grader.learner.grade import add_grade_arguments, grade
from grader.learner.options import KataParser, positive_count, select_problems
from grader.learner.output import clock, console, exit_now
from grader.locale import LANGUAGES, code_of, tr, translated, use
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
    what, text = status.next_hint(problem)
    print(tr("{folder}, {what}:", folder=problem.folder, what=what))
    for line in text.splitlines():
        print(f"  {line}")
    shown = status.load_status().get(problem.slug, {}).get("hints_shown", 0)
    if shown < len(problem.hints):
        print(tr("(`gpt-kata hint {slug}` again for a stronger hint)", slug=problem.slug))
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


# -- talk ------------------------------------------------------------------------------

def talk(args: argparse.Namespace) -> int:
    from grader.learner.tools.talk import talk as run_talk

    return run_talk(args)


# -- train -----------------------------------------------------------------------------

# Steps of `train`, and of `train --yours`, when --steps is not given: fewer left the
# reference solutions' GPT short of 95% well-formed sentences (README.md, "Train
# your own GPT").
TRAIN_STEPS = 3000
# Torch threads of `train` and `train --yours` when --threads is not given, as
# TrainSettings has it (grader.model.training imports torch, which the parser must not).
TRAIN_THREADS = 2
# With --model modern: the shipped modern model's settings (config.MODERN_SETTINGS).
MODERN_STEPS = 2400
MODERN_THREADS = 1


def train(args: argparse.Namespace) -> int:
    corpus = Path(args.corpus) if args.corpus else paths.DATA / "corpus.txt"
    try:
        text = corpus.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(tr("--corpus {corpus}: no such file", corpus=corpus)) from None
    except UnicodeDecodeError as exc:
        raise UsageError(tr("--corpus {corpus} is not UTF-8 text ({reason} at byte "
                            "{byte})", corpus=corpus, reason=exc.reason,
                            byte=exc.start)) from None
    out = Path(args.out) if args.out else None
    if out is None:
        import time

        out = paths.KATA / "runs" / time.strftime("%Y%m%d-%H%M%S")
    if out.exists() and any(out.iterdir()):
        raise UsageError(tr("{out} is not empty; choose a new --out so no earlier run is "
                            "lost", out=out))
    live = sys.stdout.isatty()
    modern = args.model == "modern"
    steps, threads = train_steps_and_threads(args)
    from grader.learner.practice import in_a_copy

    if args.yours and in_a_copy():  # the learner's own GPT and loop, here
        from grader.learner.tools.practice_train import train_yours as train_here

        train_here(text, out, steps, args.seed, threads, modern, show_progress=live)
        print(tr("wrote {out}/model.safetensors, config.json, vocab.json, loss_log.tsv; "
                 "talk with it: gpt-kata talk --model {out} --yours", out=out))
        return EXIT_PASS
    if args.yours:
        from grader.learner.tools.train_worker import GPT_MODEL, MODERN_MODEL
        from grader.learner.tools.train_yours import train_yours

        train_yours(text, out, steps, args.seed, threads, show_progress=live,
                    on_eval=None if live else progress_line,
                    model=MODERN_MODEL if modern else GPT_MODEL,
                    on_step=None if live else TenthLines())
        print(tr("wrote {out}/model.safetensors, config.json, vocab.json, loss_log.tsv, "
                 "step_losses.tsv{curve}; talk with it: gpt-kata talk --model {out}",
                 out=out, curve=curve_of(out)))
        return EXIT_PASS
    from grader.model.training import TrainSettings
    from grader.model.training import train as run_train

    settings = TrainSettings(steps=steps, seed=args.seed, threads=threads)
    config = None
    if modern:
        from grader.model.llama import LlamaConfig

        config = LlamaConfig(vocab_size=2)  # the corpus's vocabulary replaces it
    try:
        run_train(text, out, config=config, settings=settings, show_progress=live,
                  on_eval=None if live else progress_line,
                  on_step=None if live else TenthLines())
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    print(tr("wrote {out}/model.safetensors, config.json, vocab.json, "
             "loss_log.tsv{curve}; talk with it: gpt-kata talk --model {out}",
             out=out, curve=curve_of(out)))
    return EXIT_PASS


def train_steps_and_threads(args: argparse.Namespace) -> tuple[int, int]:
    """--steps and --threads, or their defaults for the model --model names."""
    modern = args.model == "modern"
    steps = args.steps if args.steps is not None else MODERN_STEPS if modern else TRAIN_STEPS
    threads = args.threads or (MODERN_THREADS if modern else TRAIN_THREADS)
    return steps, threads


def curve_of(out: Path) -> str:
    return ", loss_curve.png" if (out / "loss_curve.png").exists() else ""


def progress_line(step: int, steps: int, train_loss: float, val_loss: float,
                  elapsed: float) -> None:
    """One plain line per evaluation: a log or a pipe shows no live progress bar."""
    left = elapsed / step * (steps - step) if step else None
    eta = clock(left) if left is not None else "?"
    print(tr("step {step}/{steps}  loss {train_loss:.3f}  val {val_loss:.3f}  "
             "elapsed {elapsed}  ETA {eta}", step=step, steps=steps, train_loss=train_loss,
             val_loss=val_loss, elapsed=clock(elapsed), eta=eta), flush=True)


class TenthLines:
    """One plain line each time another tenth of the steps is done, with the time since
    the first step and the time left at the pace of the steps so far: evaluations can
    be far apart (a run of 3000 steps evaluates every 100; one of 50, only at the end)."""

    def __init__(self) -> None:
        self.tenths = 0

    def __call__(self, step: int, steps: int, seconds: float) -> None:
        tenths = step * 10 // steps
        if tenths <= self.tenths:
            return
        self.tenths = tenths
        left = seconds / step * (steps - step)
        print(tr("step {step}/{steps}  {seconds} since the first step  ETA {eta}",
                 step=step, steps=steps, seconds=clock(seconds), eta=clock(left)),
              flush=True)


def run_watch(args: argparse.Namespace) -> int:
    from grader.learner.watch import watch

    return watch(args)


def build_parser() -> argparse.ArgumentParser:
    parser = KataParser(prog="gpt-kata", description=tr(
        "Learn how GPT text generation works by writing it: read a problem in problems/, "
        "edit its solution.py, run `gpt-kata grade`."))
    parser.add_argument("--lang", choices=sorted(LANGUAGES), metavar="LANG",
                        help=tr("the language to speak: en (English) or zh (中文) (default: "
                                "GPT_KATA_LANG, else your locale, else en)"))
    # every subcommand's parser, including those added elsewhere, shows its defaults
    sub = parser.add_subparsers(dest="command", required=True, parser_class=KataParser)

    p = sub.add_parser("list", help=tr("the problems, in order, with your status"))
    p.set_defaults(run=list_problems)

    p = sub.add_parser("grade", help=tr("grade your solutions (all, or the problems named)"))
    add_grade_arguments(p)
    p.set_defaults(run=grade)

    p = sub.add_parser("watch", help=tr("re-grade a problem every time you save it, then "
                                        "move on"))
    p.add_argument("problem", nargs="?", metavar="PROBLEM",
                   help=tr("slug, number, NN-slug or folder (default: the first not passed)"))
    p.add_argument("--stay", action="store_true",
                   help=tr("keep watching this problem after it passes (default: move on)"))
    p.set_defaults(run=run_watch)

    p = sub.add_parser("hint", help=tr("a hint for a problem, a stronger one each time you "
                                       "ask"))
    p.add_argument("problem", nargs="?", metavar="PROBLEM",
                   help=tr("slug, number, folder or path (default: the first problem not "
                           "passed)"))
    p.set_defaults(run=hint)

    p = sub.add_parser("reset", help=tr("put a problem's starter back, keeping your file as "
                                        "a timestamped .bak next to it"))
    p.add_argument("problem", metavar="PROBLEM", help=tr("slug, number, folder or path"))
    p.add_argument("--yes", action="store_true",
                   help=tr("do not ask for confirmation (needed without a terminal)"))
    p.set_defaults(run=reset)

    from grader.learner.tools.trace import add_parser as add_trace_parser

    add_trace_parser(sub)

    for module in INSTRUCTOR_COMMANDS:
        try:
            adding = importlib.import_module(module).add_parser
        except ModuleNotFoundError as missing:
            if not (missing.name or "").startswith("grader."):
                raise
            continue  # a learners' copy holds none of the instructor's commands
        adding(sub)

    p = sub.add_parser("talk", help=tr("let a model continue your prompt, through your code"))
    p.add_argument("prompt", nargs="?", default="Once upon a time,",
                   help=tr("the text to continue (default: %(default)r)"))
    p.add_argument("--model", default="shipped", metavar="RUN",
                   help=tr("'shipped', 'modern' (the shipped Llama-style model), or a run "
                           "folder written by `gpt-kata train` (default: %(default)s)"))
    p.add_argument("--yours", action="store_true",
                   help=tr("the shipped weights through your own GPT (problem 23) as well as "
                           "your generate, or with --model modern through your modern GPT "
                           "(problem 35), or with --model RUN the run's weights through "
                           "your GPT or modern GPT, whichever the run holds; refused until "
                           "both pass. Without it the grader's GPT runs"))
    p.add_argument("--chars", type=int, default=200,
                   help=tr("how many characters to generate (default: %(default)s)"))
    p.add_argument("--stream", choices=["word", "sentence"],
                   help=tr("show the same text a word at a time (problem 14's WordStreamer) "
                           "or a sentence at a time (default: the whole text at once)"))
    sampling = p.add_argument_group(
        tr("sampling (problem 16's sample_text(), which talk uses, streamed or not)"))
    sampling.add_argument("--temperature", type=float, help=tr("0 is greedy (default: 1.0)"))
    sampling.add_argument("--top-k", type=int,
                          help=tr("keep the k most likely tokens, 0 for all (default: 0)"))
    sampling.add_argument("--top-p", type=float,
                          help=tr("nucleus: keep probability top_p, 1.0 for all (default: "
                                  "1.0)"))
    sampling.add_argument("--no-repeat-ngram", type=int, metavar="N",
                          help=tr("never repeat an N-gram, 0 for off (default: 0)"))
    sampling.add_argument("--seed", type=int,
                          help=tr("seed the generator once (default: 0 with the options "
                                  "above; without any, a fresh seed, shown before the text)"))
    p.set_defaults(run=talk)

    p = sub.add_parser("train", help=tr("train the GPT, or the modern model, on the shipped "
                                        "corpus or your own text"))
    p.add_argument("--corpus", metavar="FILE",
                   help=tr("a UTF-8 text file (default: data/corpus.txt)"))
    p.add_argument("--out", metavar="DIR",
                   help=tr("where to write the run (default: runs/<time>)"))
    p.add_argument("--model", choices=["gpt", "modern"], default="gpt",
                   help=tr("the GPT, or the modern Llama-style model of problem 35 (with "
                           "--yours, yours), by default with the steps and threads the "
                           "shipped modern model was trained with (default: %(default)s)"))
    p.add_argument("--steps", type=int,
                   help=tr("optimizer steps, with --yours too; how long they take depends "
                           "on the machine and its load, so the run shows the time left as "
                           "it goes, from the pace of its steps so far (default: {steps}; "
                           "{modern_steps} with --model modern)",
                           steps=TRAIN_STEPS, modern_steps=MODERN_STEPS))
    p.add_argument("--yours", action="store_true",
                   help=tr("train your GPT (problem 23) with your train_loop (30) once it "
                           "passes, until then your get_batch (19) and train_step (25), "
                           "run in the sandbox; refused until they pass. With --model "
                           "modern: your modern GPT (35) instead, refused until it passes"))
    p.add_argument("--seed", type=int, default=0,
                   help=tr("seed for the weights and the batches (default: %(default)s)"))
    p.add_argument("--threads", type=positive_count, metavar="N",
                   help=tr("torch threads, with --yours too; more are faster on more cores, "
                           "and the losses then differ in their last bits, since sums run "
                           "in another order (default: {threads}; {modern_threads} with "
                           "--model modern)", threads=TRAIN_THREADS,
                           modern_threads=MODERN_THREADS))
    p.set_defaults(run=train)
    return parser


def main(argv: list[str] | None = None) -> int:
    chosen = language_asked(sys.argv[1:] if argv is None else argv)
    if chosen:
        use(chosen)  # before the parser is built: its help speaks the language too
    args = build_parser().parse_args(argv)
    try:
        if args.command in NEEDS_REFERENCES:
            from grader.learner import practice

            if practice.in_a_copy():
                if args.command == "talk":  # through the learner's own code
                    from grader.learner.tools.practice_talk import talk as talk_in_a_copy

                    return talk_in_a_copy(args)
                if args.command == "trace":  # beside the reference's stored runs
                    from grader.learner.tools.practice_trace import trace as trace_in_a_copy

                    return trace_in_a_copy(args)
                if not args.yours:  # train: the grader's GPT and loop, which it lacks
                    raise UsageError(tr(
                        "`gpt-kata train` trains the grader's GPT, whose code this learners' "
                        "copy does not hold: `gpt-kata train --yours` trains your own GPT "
                        "with your train_loop"))
        return args.run(args)
    except UsageError as exc:
        print(f"gpt-kata {args.command}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130


# The instructor's commands, each in a module of its own that adds its parser.
INSTRUCTOR_COMMANDS = ("grader.classroom.gradebook.command", "grader.classroom.gradescope_bundle",
                       "grader.classroom.similarity", "grader.release.command")
# The learner's commands that run the kata's reference code, which a learners' copy
# does not hold (grader/learner/practice.py).
NEEDS_REFERENCES = ("talk", "trace", "train")


def language_asked(argv: list[str]) -> str | None:
    """The language `--lang` names before the command, or None; one the kata does not
    speak is left for the parser to refuse with its choices."""
    for i, arg in enumerate(argv):
        if not arg.startswith("-"):
            return None  # the command: a --lang after it is the command's own business
        if arg == "--lang" and i + 1 < len(argv):
            return code_of(argv[i + 1])
        if arg.startswith("--lang="):
            return code_of(arg.split("=", 1)[1])
    return None


def run() -> None:
    """The console entry point: `main`, then an exit that skips interpreter teardown
    (longer than grading a passing problem's checks)."""
    exit_now(main())


if __name__ == "__main__":
    run()
