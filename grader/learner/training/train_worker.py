"""The training worker of `train --yours`, the model it trains, its loss log and the
time-left column of its progress: shared by the run through the learner's step and the
run through their loop."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from grader.learner.errors import UsageError
from grader.locale import tr
from grader.registry import Problem, find
from grader.sandbox.worker.harness_ref import harness_ref

# The first chunk also imports the optimizer's machinery and warms torch up; a
# later one gets several times the slowest chunk so far, so that a machine
# busy with other work does not end a healthy run, but never less than a
# minute, and a step that never returns is still ended within minutes.
FIRST_CHUNK_TIMEOUT = 180.0
CHUNK_SLACK = 5.0
MIN_CHUNK_TIMEOUT = 60.0


@dataclass(frozen=True)
class YourModel:
    """Which of the learner's models `train --yours` trains: their GPT (problem 23), or
    with `--model modern` their modern GPT (problem 35, class Llama)."""

    slug: str
    name: str  # as messages call it: "your GPT", "your modern GPT"
    modern: bool
    # What a step costs against the GPT's, for the time and CPU limits: `make_data
    # modern-model` took 0.28 s a step on a free 2-core machine and up to 0.8 s under
    # load, where the GPT's step takes about 0.05 s.
    step_cost: float = 1.0

    @property
    def said(self) -> str:
        """Its name in the language in use, as messages say it."""
        return tr("modern GPT") if self.modern else self.name

    def config(self, vocab_size: int) -> Any:
        """The sizes `gpt-kata train` gives this model for a vocabulary."""
        if self.modern:
            from grader.model.llama import LlamaConfig

            return LlamaConfig(vocab_size=vocab_size)
        from grader.model.gpt import GPTConfig

        return GPTConfig(vocab_size=vocab_size)


GPT_MODEL = YourModel("gpt", "GPT", modern=False)
MODERN_MODEL = YourModel("modern-gpt", "modern GPT", modern=True, step_cost=5.0)


class LossLog:
    """A run's loss_log.tsv, each evaluation written as it comes, as `train` does: a run
    cut short keeps its log. Opened only at the first, once the learner's model is
    built, so that a model that cannot be built leaves no folder behind to be refused
    next time. `on_eval(step, steps, train_loss, val_loss, elapsed)` hears of each."""

    def __init__(self, out: Path, steps: int,
                 on_eval: Callable[[int, int, float, float, float], None] | None) -> None:
        self.out, self.steps, self.on_eval = out, steps, on_eval
        self.entries: list[tuple[int, float, float, float]] = []  # and each elapsed_s
        self.file: IO[str] | None = None

    def add(self, step: int, train_loss: float, val_loss: float, elapsed: float) -> None:
        if self.file is None:
            self.out.mkdir(parents=True, exist_ok=True)
            self.file = (self.out / "loss_log.tsv").open("w", encoding="utf-8")
            self.file.write("step\ttrain_loss\tval_loss\telapsed_s\n")
        self.entries.append((step, train_loss, val_loss, elapsed))
        self.file.write(f"{step}\t{train_loss:.4f}\t{val_loss:.4f}\t{elapsed:.1f}\n")
        self.file.flush()
        if self.on_eval is not None:
            self.on_eval(step, self.steps, train_loss, val_loss, elapsed)

    def evaluations(self) -> list[tuple[int, float, float]]:
        """(step, train_loss, val_loss) of each evaluation so far."""
        return [entry[:3] for entry in self.entries]

    def close(self) -> None:
        if self.file is not None:
            self.file.close()


def time_left(per_step: float | None, measured_at: float, left_steps: int,
              now: float) -> str:
    """The time the remaining steps take at the run's own pace so far, counted down
    since that pace was measured; "?" before the first chunk of steps has run."""
    from grader.learner.output import clock

    if per_step is None:
        return "?"
    return clock(max(0.0, per_step * left_steps - (now - measured_at)))


def progress_columns(title: str) -> tuple:
    """A training run's progress bar: its title, the bar, the steps, the loss, the time
    taken and the time left at the run's own pace."""
    from rich.progress import BarColumn, TextColumn, TimeElapsedColumn

    return (TextColumn(title), BarColumn(), TextColumn("{task.completed}/{task.total}"),
            TextColumn(tr("loss {task.fields[loss]}")), TimeElapsedColumn(),
            time_left_column())


def time_left_column() -> Any:
    """A progress column of the time left, from the pace of every step so far: rich's
    own estimate reads only the last 30 s of updates, which a chunk of 25 slow steps
    outlasts, and then it shows -:--:--."""
    from rich.progress import ProgressColumn
    from rich.text import Text

    class TimeLeft(ProgressColumn):
        def render(self, task: Any) -> Text:
            left = int((task.total or 0) - task.completed)
            return Text(time_left(task.fields.get("per_step"), task.fields.get("at", 0.0),
                                  left, time.perf_counter()), style="progress.remaining")

    return TimeLeft()


class Run:
    """The worker that trains, and the calls the grader makes to it."""

    def __init__(self, problems: list[Problem], pool: Any,
                 model: YourModel = GPT_MODEL, trainer: str = "train-step") -> None:
        """`trainer`: the problem whose file trains (train-step's, or train-loop's)."""
        from grader.sandbox.host.process import SubmissionProcess
        from grader.sandbox.wire.limits import Limits

        self.files = {p.slug: str(p.starter.resolve()) for p in problems}
        self.model_file = self.files[model.slug]
        trains = find(trainer)
        # No budget for all calls together: each chunk has a limit of its own.
        self.process = SubmissionProcess(self.files[trainer], trains.class_name,
                                         list(trains.methods), pool,
                                         Limits(problem_budget=math.inf), trains=trains.trains)
        self.slowest = 0.0

    def call(self, name: str, args: tuple, timeout: float, what: str) -> Any:
        """The harness's result; UsageError with the learner's error in one line."""
        from grader.grading.values.worker_errors import one_line
        from grader.sandbox.wire.encoding import Unencodable

        started = time.monotonic()
        try:
            outcome = self.process.call(harness_ref(name), args, timeout=timeout)
        except Unencodable as exc:  # only a corpus can be this large
            raise UsageError(tr("the corpus is too large to hand to your code ({error}); "
                                "train --yours on a smaller --corpus", error=exc)) from None
        if outcome.error:
            raise UsageError(f"{what}: {one_line(outcome.error)}")
        if name == "train_chunk":  # the other calls cost what no chunk does
            self.slowest = max(self.slowest, time.monotonic() - started)
        return outcome.result

    def trained_weights(self, timeout: float, model: YourModel) -> Any:
        """The weights the learner's model ends its training with, handed back."""
        return self.call("train_weights", (), timeout,
                         tr("handing back your trained {model}'s weights failed",
                            model=model.said))

    def chunk_timeout(self) -> float:
        if self.slowest == 0.0:
            return FIRST_CHUNK_TIMEOUT
        return max(MIN_CHUNK_TIMEOUT, CHUNK_SLACK * self.slowest)

    def close(self) -> None:
        self.process.close()
