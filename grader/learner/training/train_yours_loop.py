"""`gpt-kata train --yours` with the learner's own training loop (problem 30).

When the learner's train-loop passes its grade (and their GPT, problem 23, does;
with `--model modern` their modern GPT, problem 35), their `train_loop()` runs the
whole run in the sandboxed worker: their schedule, clipping, batches and
evaluations, with `gpt-kata train`'s settings. The grader only builds the model
with `train`'s seeded weights, hears from the worker of the loop's steps and
evaluations as they happen (the loop runs in a thread of the worker, watched
through its optimizer's step and its model's forward passes, so a loop that
returns its log shows its progress as well as one that yields it), and checks and
writes the weights as for the learner's step (grader/learner/training/train_yours.py).
Otherwise `train --yours` trains with the learner's step in the grader's loop, as
before, and says so.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from grader.learner.errors import UsageError
from grader.learner.status import current_status
from grader.learner.training.train_worker import GPT_MODEL, LossLog, Run, YourModel
from grader.locale import tr
from grader.registry import find

LOOP = "train-loop"
# A call may wait for a fiftieth of the run's steps, or for a whole evaluation, and the
# first pays for the start: the run's whole length at far above the measured 0.05 s a
# step, plus the start of `train_steps`'s, so that no healthy run is ended.
SECONDS_PER_STEP = 1.0
START_SECONDS = 180.0
# Problem 30 asks for warmup_steps < steps, and train's warm-up is 100 steps.
EVAL_BATCHES = 8  # as `train` evaluates: 8 fixed batches of 64 windows
MAX_NORM = 1.0  # as `train` clips

# Notes, in parentheses as the notes of the grades run first are: a failed run
# still ends in the one line that says why.
def step_used() -> str:
    return tr("(train --yours: training with your train_step (problem 25) in the grader's "
              "loop; once problem 30 passes (gpt-kata grade train-loop), your own loop runs)")


def loop_used(model: YourModel) -> str:
    return tr("(train --yours: training with your train_loop (problem 30), on your "
              "{model} (problem {number}))", model=model.said, number=find(model.slug).number)


def needed(model: YourModel) -> tuple[str, str]:
    return (model.slug, LOOP)


def loop_passes(pool: Any, model: YourModel = GPT_MODEL) -> bool:
    """Whether the learner's model and training loop both pass their grade of the files
    as they are now; a file changed since its last grade is graded first."""
    return all(current_status(find(slug), pool) == "pass" for slug in needed(model))


def loop_arguments(steps: int, settings: Any, context_length: int) -> dict[str, Any]:
    """train_loop()'s arguments after the generators, from `train`'s settings."""
    return {
        "optimizer": {"lr": settings.learning_rate, "weight_decay": settings.weight_decay},
        "steps": steps, "batch_size": settings.batch_size, "context_length": context_length,
        "max_lr": settings.learning_rate, "min_lr": settings.min_learning_rate,
        "warmup_steps": min(settings.warmup_steps, steps - 1), "max_norm": MAX_NORM,
        "eval_every": settings.eval_every, "eval_batches": EVAL_BATCHES,
    }


def read_entry(entry: Any, last_step: int, steps: int) -> tuple[int, float, float]:
    """A log entry as the harness sends it, if it is (step, train_loss, val_loss) with a
    step after the last one; UsageError otherwise. The loop passed its grade, but code
    in the worker could send anything."""
    if (isinstance(entry, tuple) and len(entry) == 3 and isinstance(entry[0], int)
            and not isinstance(entry[0], bool) and last_step < entry[0] <= steps
            and all(isinstance(v, float) and math.isfinite(v) for v in entry[1:])):
        return entry
    raise UsageError(tr("your train_loop logged {entry!r} after step {step}, which is not "
                        "(step, train_loss, val_loss) with finite losses", entry=entry,
                        step=last_step))


def read_progress(reply: Any, last_step: int, steps: int) -> tuple[int, list[int], list, bool]:
    """A progress report as the harness sends it (harnesses.train_loop_progress): the steps
    taken, no fewer than before and at most the run's; the steps at which evaluations
    ended, in order and none after the steps taken; the log entries; whether the loop is
    done. UsageError otherwise: code in the worker could send anything."""
    def count(value: Any, least: int) -> bool:
        return (isinstance(value, int) and not isinstance(value, bool)
                and least <= value <= steps)

    if isinstance(reply, dict) and set(reply) == {"steps", "evaluated", "log", "done"}:
        taken, evaluated, entries, done = (reply["steps"], reply["evaluated"], reply["log"],
                                           reply["done"])
        if isinstance(taken, int) and not isinstance(taken, bool) and taken > steps:
            raise UsageError(tr("your train_loop took {taken} optimizer steps, more than the "
                                "run's {steps}", taken=taken, steps=steps))
        if (count(taken, last_step) and isinstance(evaluated, list)
                and all(count(s, 0) and s <= taken for s in evaluated)
                and evaluated == sorted(evaluated) and isinstance(entries, list)
                and isinstance(done, bool)):
            return taken, evaluated, entries, done
    raise UsageError(tr("the training worker's reply cannot be read as progress (did your "
                        "code write to the grader's channel?)"))


def train_with_loop(out: Path, steps: int, seed: int, settings: Any, config: Any,
                    train_data: Any, val_data: Any, show_progress: bool,
                    on_eval: Callable[[int, int, float, float, float], None] | None,
                    pool: Any, model: YourModel = GPT_MODEL,
                    on_step: Callable[[int, int, float], None] | None = None) -> tuple:
    """The run by the learner's loop: (weights, evaluations, []), as
    train_yours.train_in_worker returns them; a loop gives no loss of each step.

    The worker reports the loop's steps and evaluations as they happen, whether the
    loop yields its log or returns it (harnesses.train_loop_progress): the progress
    and the time left follow the steps, and each evaluation's elapsed_s in
    loss_log.tsv is when the grader heard that it ended, not when its log entry came."""
    from rich.progress import Progress

    from grader.learner.training.train_worker import progress_columns

    print(loop_used(model), file=sys.stderr)
    run = Run([find(slug) for slug in needed(model)], pool, model, trainer=LOOP)
    limit = START_SECONDS + SECONDS_PER_STEP * model.step_cost * steps
    log = LossLog(out, steps, on_eval)
    try:
        started = time.perf_counter()
        columns = progress_columns(tr("training your {model} with your loop",
                                      model=model.said))
        with Progress(*columns, disable=not show_progress) as progress:
            task = progress.add_task("train", total=steps, loss="-", per_step=None)
            run.call("train_loop_begin", (
                run.model_file, config.to_dict(), seed, train_data, val_data,
                loop_arguments(steps, settings, config.context_length), settings.threads),
                limit, tr("building your {model} or starting your train_loop failed",
                          model=model.said))
            begun = time.perf_counter()  # the pace counts the loop's steps, not the start
            if on_step is not None:
                on_step(0, steps, 0.0)
            taken, last, done = 0, -1, False
            ended: dict[int, float] = {}  # when each evaluation was heard to end, by step
            while not done:
                reply = run.call("train_loop_progress", (), limit,
                                 tr("your train_loop failed"))
                now = time.perf_counter()
                before = taken
                taken, evaluated, entries, done = read_progress(reply, taken, steps)
                for step in evaluated:
                    ended.setdefault(step, now - started)
                for entry in entries:
                    step, train_loss, val_loss = read_entry(entry, last, steps)
                    last = step
                    # Never before the entry above it, whenever its evaluation was heard of.
                    elapsed = max(ended.get(step, now - started),
                                  log.entries[-1][3] if log.entries else 0.0)
                    log.add(step, train_loss, val_loss, elapsed)
                    progress.update(task, loss=f"{train_loss:.3f}")
                if taken > before:
                    pace = (now - begun) / taken
                    progress.update(task, completed=taken, per_step=pace, at=now)
                    if on_step is not None:
                        on_step(taken, steps, now - begun)
        if last != steps:
            raise UsageError(tr("your train_loop's log ends at step {last}, not at the last "
                                "step, {steps}", last=last, steps=steps))
        weights = run.trained_weights(limit, model)
    finally:
        log.close()
        run.close()
    return weights, log.evaluations(), []
