"""`gpt-kata train`: its defaults, the run it starts, and the lines it prints where no
terminal shows a live bar."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from grader import paths
from grader.learner.errors import EXIT_PASS, UsageError
from grader.learner.output import clock
from grader.locale import tr

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
    if args.yours and paths.in_a_copy():  # the learner's own GPT and loop, here
        from grader.learner.training.practice_train import train_yours as train_here

        train_here(text, out, steps, args.seed, threads, modern, show_progress=live)
        print(tr("wrote {out}/model.safetensors, config.json, vocab.json, loss_log.tsv; "
                 "talk with it: gpt-kata talk --model {out} --yours", out=out))
        return EXIT_PASS
    if args.yours:
        from grader.learner.training.train_worker import GPT_MODEL, MODERN_MODEL
        from grader.learner.training.train_yours import train_yours

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
    """--steps and --threads, or their defaults for the model --model names; fewer
    steps than one are refused before any folder is made (a run of none would be
    written untrained, and talk would take it)."""
    modern = args.model == "modern"
    steps = args.steps if args.steps is not None else MODERN_STEPS if modern else TRAIN_STEPS
    if steps < 1:
        raise UsageError(tr("--steps {steps}: train at least one step", steps=steps))
    threads = args.threads or (MODERN_THREADS if modern else TRAIN_THREADS)
    return steps, threads


def curve_of(out: Path) -> str:
    return ", loss_curve.png" if (out / "loss_curve.png").exists() else ""


def progress_line(step: int, steps: int, train_loss: float, val_loss: float,
                  elapsed: float) -> None:
    """One plain line per evaluation: a log or a pipe shows no live progress bar. The
    time left is TenthLines' alone: one of its own, from the start (the setup and the
    evaluations in it), said at the same step as another from the first step, read
    as two answers to one question."""
    print(tr("step {step}/{steps}  loss {train_loss:.3f}  val {val_loss:.3f}  "
             "elapsed {elapsed}", step=step, steps=steps, train_loss=train_loss,
             val_loss=val_loss, elapsed=clock(elapsed)), flush=True)


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
