"""`gpt-kata train --yours`: the learner's GPT, batches and training step, trained.

The learner's code (GPT from problem 23, or with `--model modern` their modern
GPT from 35; get_batch from 19, train_step from 25) runs only in one sandboxed
worker, which keeps the model, its AdamW and
the batch generator between calls (grader/sandbox/worker/harnesses.py, train_*).
The grader stays in charge of the run: it encodes the corpus, sets the
learning rate of every step (the schedule of `gpt-kata train`), asks for the
steps a chunk at a time (25, or a tenth of a shorter run), so that it can show
progress and end a chunk that
takes far longer than the ones before it, and at the end receives the weights,
checks every name, shape and value against the grader's model, and writes a run
folder that `gpt-kata talk --model RUN` reads like any other. The names are checked
before the first step too: the worker loads the seeded weights `train` starts from
into the learner's model by name (harnesses._learner_net). With the learner's loop
(problem 30) the run is theirs: grader/learner/training/train_yours_loop.py.
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
from grader.learner.training.train_worker import (
    FIRST_CHUNK_TIMEOUT,
    GPT_MODEL,
    MIN_CHUNK_TIMEOUT,
    LossLog,
    Run,
    YourModel,
)
from grader.locale import tr
from grader.registry import Problem, find

# The problems whose code trains, in the order a learner meets them.
NEEDED = ("batches", "gpt", "train-step")
CHUNK_STEPS = 25
# CPU seconds the worker may use per step and torch thread (RLIMIT_CPU counts the
# time of all its threads), far above the measured cost (README, "Train your own
# GPT"), plus the start and evaluations.
CPU_SECONDS_PER_STEP_AND_THREAD = 1.0
CPU_SECONDS_BASE = 300


def refuse(problem: Problem, state: str, model: YourModel = GPT_MODEL) -> UsageError:
    if model.modern:
        return UsageError(tr(
            "--yours trains your modern GPT with your train_loop (problem 30), or until it "
            "passes with your get_batch and train_step, and your {folder} {state}; finish "
            "problem {number} first (gpt-kata grade {slug})", folder=problem.folder,
            state=state, number=problem.number, slug=problem.slug))
    return UsageError(tr("--yours trains your GPT with your get_batch and train_step, and "
                         "your {folder} {state}; finish problem {number} first "
                         "(gpt-kata grade {slug})", folder=problem.folder, state=state,
                         number=problem.number, slug=problem.slug))


def needed(model: YourModel) -> tuple[str, ...]:
    return tuple(model.slug if slug == "gpt" else slug for slug in NEEDED)


def check_passes(problem: Problem, pool: Any, model: YourModel = GPT_MODEL) -> None:
    """UsageError unless the problem passes its grade of the file as it is now. A file
    changed since its last grade is graded first, as `talk` does."""
    status = current_status(problem, pool)
    if status == "missing":
        raise refuse(problem, tr("has no solution.py ({starter})", starter=problem.starter),
                     model)
    if status == "todo":
        raise refuse(problem, tr("is still the starter"), model)
    if status != "pass":
        raise refuse(problem, tr("does not pass its grade"), model)


def check_finished(pool: Any, model: YourModel = GPT_MODEL) -> list[Problem]:
    """The three problems, each passing its grade of the file as it is now; otherwise
    UsageError naming the first that does not."""
    problems = [find(slug) for slug in needed(model)]
    for problem in problems:
        check_passes(problem, pool, model)
    return problems


def check_weights(received: Any, expected: dict[str, Any],
                  model: YourModel = GPT_MODEL) -> dict[str, Any]:
    """The weights the worker sent, if they are exactly the grader's model's names and
    shapes with finite float values; UsageError otherwise."""
    import torch

    what = tr("your trained {model}", model=model.said)
    if not isinstance(received, dict) or not all(isinstance(v, torch.Tensor)
                                                 for v in received.values()):
        raise UsageError(tr("{what}'s weights did not come back as tensors by name",
                            what=what))
    missing = sorted(set(expected) - set(received))
    extra = sorted(set(received) - set(expected))
    if missing or extra:
        raise UsageError(tr("{what}'s parameters do not have the names the statement "
                            "of problem {number} fixes (missing: {missing}; not expected: "
                            "{extra})", what=what, number=find(model.slug).number,
                            missing=", ".join(missing) or tr("none"),
                            extra=", ".join(extra) or tr("none")))
    for name, tensor in received.items():
        if tuple(tensor.shape) != tuple(expected[name].shape):
            raise UsageError(tr("{what}'s {name} has shape {shape}, not {expected}",
                                what=what, name=name, shape=tuple(tensor.shape),
                                expected=tuple(expected[name].shape)))
        if not tensor.is_floating_point() or not torch.isfinite(tensor).all():
            raise UsageError(tr("{what}'s {name} holds values that are not finite "
                                "floats: training diverged", what=what, name=name))
    return {name: received[name].to(expected[name].dtype) for name in expected}


def check_chunk(losses: Any, evaluation: Any, steps: int, evaluated: bool) -> None:
    """UsageError unless a chunk's reply is what the harness sends: a float per step,
    and two losses when it evaluated. Code in the worker could send anything."""
    def floats(value: Any, count: int) -> bool:
        return (isinstance(value, list) and len(value) == count
                and all(isinstance(v, float) and math.isfinite(v) for v in value))

    if not floats(losses, steps) or not (floats(evaluation, 2) if evaluated
                                         else evaluation is None):
        raise UsageError(tr("the training worker's reply cannot be read as losses (did your "
                            "code write to the grader's channel?)"))


def mark_failed(out: Path, reason: UsageError | str) -> UsageError:
    """Record in the run folder that its training failed, so that `talk --model`
    says so instead of waiting for a model; the error to raise, saying it too."""
    from grader.model.runs import FAILED

    if not (out / "loss_log.tsv").is_file():  # nothing was written: nothing to mark
        return reason if isinstance(reason, UsageError) else UsageError(reason)
    (out / FAILED).write_text(f"{reason}\n", encoding="utf-8")
    return UsageError(tr("{reason} (the run in {out} failed: it keeps only its loss_log.tsv)",
                         reason=reason, out=out))


def train_yours(text: str, out: Path, steps: int, seed: int, threads: int,
                show_progress: bool,
                on_eval: Callable[[int, int, float, float, float], None] | None,
                model: YourModel = GPT_MODEL,
                on_step: Callable[[int, int, float], None] | None = None) -> None:
    """Train the learner's GPT (or `model`) and write the run to `out`; UsageError
    (exit 2) when a problem is not finished or their code fails while training (the
    run folder then says it failed). `on_step(step, steps, seconds)` hears of the steps
    as they are taken, at least every tenth of them, with the seconds since the first
    began, as `gpt-kata train`'s does."""
    from grader.sandbox.worker.layers.policy import Policy

    # Options are refused before torch is imported: at once, not seconds later
    # (--steps by the command, train_steps_and_threads).
    # The sandbox limits the processes and threads a worker may start (where the
    # grader does not run as root); past it, torch could not start its threads.
    if Policy.max_processes is not None and threads > Policy.max_processes:
        raise UsageError(tr("--threads {threads}: --yours trains in the sandbox, which "
                            "allows at most {most} threads", threads=threads,
                            most=Policy.max_processes))
    from grader.model.artifacts import split_corpus
    from grader.model.config import TrainSettings
    from grader.sandbox.wire.frames import MAX_FRAME

    settings = TrainSettings(steps=steps, seed=seed, threads=threads)
    try:
        int_to_char, train_data, val_data = split_corpus(
            text, model.config(2).context_length)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    # The encoded corpus travels to the worker in one message: 8 bytes a character
    # as int64, under the protocol's frame limit.
    most = (MAX_FRAME - 2**20) // 8
    if len(text) > most:
        raise UsageError(tr("the corpus has {size} characters, more than the {most} "
                            "train --yours can hand to your code; use a smaller --corpus",
                            size=len(text), most=most))
    config = model.config(len(int_to_char))
    try:
        trained = train_in_worker(out, steps, seed, settings, config, int_to_char,
                                  train_data, val_data, show_progress, on_eval, model,
                                  on_step)
    except UsageError as exc:
        raise mark_failed(out, exc) from None
    except KeyboardInterrupt:
        mark_failed(out, tr("training was interrupted"))
        raise
    try:
        write_run(out, config, int_to_char, *trained, model=model)
    except UsageError as exc:
        raise mark_failed(out, exc) from None


def train_in_worker(out: Path, steps: int, seed: int, settings: Any, config: Any,
                    int_to_char: dict[int, str], train_data: Any, val_data: Any,
                    show_progress: bool,
                    on_eval: Callable[[int, int, float, float, float], None] | None,
                    model: YourModel = GPT_MODEL,
                    on_step: Callable[[int, int, float], None] | None = None) -> tuple:
    """The run in the learner's worker: (weights, evaluations, each step's loss).

    The learner's modern GPT must pass before anything else is asked of them: with
    it, their loop trains, or until the loop passes, their step."""
    from rich.progress import Progress

    from grader.learner.sandbox_notice import NoticedPool
    from grader.learner.training.train_worker import progress_columns
    from grader.model.training import learning_rate
    from grader.sandbox.wire.limits import Limits

    cpu = int(CPU_SECONDS_BASE + CPU_SECONDS_PER_STEP_AND_THREAD * model.step_cost
              * settings.threads * steps)
    with NoticedPool(sandbox=Limits(cpu_seconds=cpu)) as pool:
        from grader.learner.training.train_yours_loop import loop_passes, step_used, train_with_loop

        if model.modern:
            check_passes(find(model.slug), pool, model)
        if loop_passes(pool, model):  # problem 30: the learner's loop
            return train_with_loop(out, steps, seed, settings, config, train_data, val_data,
                                   show_progress, on_eval, pool, model, on_step)
        try:
            problems = check_finished(pool, model)
        except UsageError:
            if model.modern:  # a learner at problem 35 has met 30: name it, not 19 or 25
                check_passes(find("train-loop"), pool, model)
            raise
        print(step_used(), file=sys.stderr)
        run = Run(problems, pool, model)
        log = LossLog(out, steps, on_eval)
        try:
            started = time.perf_counter()
            step_losses: list[float] = []
            optimizer = {"lr": settings.learning_rate, "weight_decay": settings.weight_decay}

            columns = progress_columns(tr("training your {model}", model=model.said))
            with Progress(*columns, disable=not show_progress) as progress:
                task = progress.add_task("train", total=steps, loss="-", per_step=None)
                begun = run.call("train_begin", (
                    run.model_file, run.files["batches"], config.to_dict(), seed,
                    train_data, val_data, settings.batch_size, optimizer, settings.threads),
                    FIRST_CHUNK_TIMEOUT, tr("building your {model} for training failed",
                                            model=model.said))
                check_chunk([], begun, 0, True)
                log.add(0, *begun, time.perf_counter() - started)
                first_step = time.perf_counter()  # the pace counts steps, not the start
                if on_step is not None:
                    on_step(0, steps, 0.0)
                # A chunk is at most a tenth of the run, so that progress comes that often.
                chunk = max(1, min(CHUNK_STEPS, steps // 10))
                while len(step_losses) < steps:
                    first = len(step_losses)
                    last = min(steps, first + chunk)
                    rates = [learning_rate(s, settings) for s in range(first, last)]
                    # Evaluated as often as `train` evaluates, and at the end.
                    evaluate = last == steps or last % settings.eval_every == 0
                    limit = run.chunk_timeout()
                    losses, evaluation = run.call(
                        "train_chunk", (rates, evaluate), limit,
                        tr("training failed within steps {first}-{last} "
                           "(limit {limit:.0f} s for these steps)", first=first + 1,
                           last=last, limit=limit))
                    check_chunk(losses, evaluation, len(rates), evaluate)
                    step_losses += losses
                    if evaluation is not None:
                        log.add(last, *evaluation, time.perf_counter() - started)
                    now = time.perf_counter()
                    progress.update(task, completed=last, loss=f"{losses[-1]:.3f}",
                                    per_step=(now - first_step) / last, at=now)
                    if on_step is not None:
                        on_step(last, steps, now - first_step)
            weights = run.trained_weights(MIN_CHUNK_TIMEOUT, model)
        finally:
            log.close()
            run.close()
    return weights, log.evaluations(), step_losses


def write_run(out: Path, config: Any, int_to_char: dict[int, str], weights: Any,
              log: list[tuple[int, float, float]], step_losses: list[float],
              model: YourModel = GPT_MODEL) -> None:
    """The rest of the run folder `gpt-kata train` writes (loss_log.tsv is written
    while training), and each step's loss in step_losses.tsv. config.json's fields
    say which model it is (grader/model/runs.py)."""
    import torch

    from grader.model.artifacts import save_model, save_vocab
    from grader.model.gpt import GPT
    from grader.model.llama import Llama
    from grader.model.training import plot_losses

    net = Llama(config) if model.modern else GPT(config)
    net.load_state_dict(check_weights(weights, net.state_dict(), model), strict=True)
    net.eval()
    with (out / "step_losses.tsv").open("w", encoding="utf-8") as file:
        file.write("step\tloss\n")  # what your train_step returned, at full precision
        file.writelines(f"{i + 1}\t{loss!r}\n" for i, loss in enumerate(step_losses))
    save_vocab(int_to_char, out / "vocab.json")
    with torch.no_grad():
        save_model(net, out)
    if not plot_losses(log, out / "loss_curve.png", len(int_to_char)):
        print(tr("(no loss curve; the losses are in {log})", log=out / "loss_log.tsv"),
              file=sys.stderr)
