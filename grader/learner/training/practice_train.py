"""`gpt-kata train --yours` in a learners' copy: the learner's GPT, trained by their loop.

In the kata, train --yours runs in the sandbox and starts from the grader's seeded
weights; until problem 30 passes, the grader's loop drives the learner's step. A
copy holds neither the grader's GPT nor its loop (problems 23, 25, 27 and 30 are
their answers), so here the learner's own pieces do it all, in this process: their
GPT (problem 23; with `--model modern`, their Llama of problem 35), drawn from the
seed by their own initialisation, and their train_loop() (problem 30), each passing
its last practice grade, with `train`'s settings and the corpus split as `train`
splits it. The run folder is the kata's: loss_log.tsv as the loop logs, config.json,
vocab.json and model.safetensors, which `talk --model RUN --yours` reads.
"""

from __future__ import annotations

import dataclasses
import math
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from grader.learner.errors import UsageError
from grader.learner.tools.practice_talk import failed, passing
from grader.locale import tr

# As `train` evaluates and clips (grader/learner/training/train_yours_loop.py says the same).
EVAL_BATCHES = 8
MAX_NORM = 1.0


def train_yours(text: str, out: Path, steps: int, seed: int, threads: int, modern: bool,
                show_progress: bool) -> None:
    """Train the learner's model with their loop and write the run to `out`; UsageError
    (exit 2) when a problem does not pass or their code fails."""
    import torch

    from grader.model.artifacts import split_corpus
    from grader.model.config import MODERN_SETTINGS, GPTConfig, LlamaConfig, TrainSettings

    gpt = passing("modern-gpt" if modern else "gpt", "train --yours")
    loop = passing("train-loop", "train --yours")
    base = MODERN_SETTINGS if modern else TrainSettings()
    settings = dataclasses.replace(base, steps=steps, seed=seed, threads=threads)
    context_length = (LlamaConfig if modern else GPTConfig)(vocab_size=2).context_length
    try:
        int_to_char, train_data, val_data = split_corpus(text, context_length)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    config = (LlamaConfig if modern else GPTConfig)(vocab_size=len(int_to_char))
    torch.set_num_threads(threads)
    print(tr("(train --yours: training your {model} (problem {number}) with your "
             "train_loop (problem 30), from your own initialisation seeded with {seed})",
             model=gpt.class_name, number=gpt.number, seed=seed), file=sys.stderr)
    net = built(gpt, config, seed)
    optimizer = torch.optim.AdamW(net.parameters(), lr=settings.learning_rate,
                                  weight_decay=settings.weight_decay)
    log = run_loop(loop, net, optimizer, train_data, val_data, settings, context_length,
                   show_progress, out)
    if log:  # the last evaluation, once the loop is done: it may log only then
        step, train_loss, val_loss, elapsed = log[-1]
        print(tr("step {step}: train loss {train:.3f}, validation loss {val:.3f}, after "
                 "{seconds:.0f} s", step=step, train=train_loss, val=val_loss,
                 seconds=elapsed), file=sys.stderr)
    write_run(out, net, config, int_to_char)


def built(problem: Any, config: Any, seed: int) -> Any:
    """The learner's model of `config`, its weights drawn from `seed` by its own
    initialisation; the caller's random state is left as it was."""
    import torch

    from grader.reuse import solution_of

    try:
        with torch.random.fork_rng():
            torch.manual_seed(seed)
            net = solution_of(problem.slug, name=problem.class_name)(config)
        if not isinstance(net, torch.nn.Module):
            raise TypeError(f"{problem.class_name} is not a torch.nn.Module")
    except Exception as exc:  # noqa: BLE001 - the learner's code, said in one line
        raise failed(problem.class_name, problem, exc) from None
    return net.train()


def run_loop(loop: Any, net: Any, optimizer: Any, train_data: Any, val_data: Any,
             settings: Any, context_length: int, show_progress: bool,
             out: Path) -> list[tuple[int, float, float, float]]:
    """The learner's train_loop() over the whole run, its steps shown as the optimizer
    takes them; its log, each entry with the seconds since the start when its step was
    taken, as loss_log.tsv holds it (written when the loop ends). A loop that returns
    its log had every entry at the run's whole time."""
    import torch
    from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

    from grader.reuse import solution_of

    steps = settings.steps
    started = time.perf_counter()
    columns = (TextColumn(tr("training with your train_loop")), BarColumn(),
               TextColumn("{task.completed}/{task.total}"), TimeRemainingColumn())
    # When the optimizer had taken each number of steps: an entry's evaluation follows
    # its step, and a loop that returns its log is heard of only at its end.
    stepped: dict[int, float] = {0: 0.0}
    with Progress(*columns, disable=not show_progress) as progress:
        task = progress.add_task("train", total=steps)

        def step_taken(*_: Any) -> None:
            stepped[len(stepped)] = time.perf_counter() - started
            progress.advance(task)

        optimizer.register_step_post_hook(step_taken)
        try:
            with torch.enable_grad():
                result = solution_of(loop.slug)().train_loop(
                    net, optimizer, train_data, val_data,
                    torch.Generator().manual_seed(settings.seed),
                    torch.Generator().manual_seed(1), steps=steps,
                    batch_size=settings.batch_size, context_length=context_length,
                    max_lr=settings.learning_rate, min_lr=settings.min_learning_rate,
                    warmup_steps=min(settings.warmup_steps, steps - 1), max_norm=MAX_NORM,
                    eval_every=settings.eval_every, eval_batches=EVAL_BATCHES)
                # A loop that yields its log is heard at each evaluation; one that
                # returns it, at its end.
                entries = [(entry, time.perf_counter() - started) for entry in result]
        except Exception as exc:  # noqa: BLE001 - the learner's code, said in one line
            raise failed("train_loop()", loop, exc) from None
    log = []
    for entry, elapsed in entries:
        if not (isinstance(entry, tuple) and len(entry) == 3 and isinstance(entry[0], int)
                and all(isinstance(v, float) and math.isfinite(v) for v in entry[1:])):
            raise UsageError(tr("your train_loop logged {entry!r} after step {step}, which "
                                "is not (step, train_loss, val_loss) with finite losses",
                                entry=entry, step=log[-1][0] if log else 0))
        # When its step was taken, never after it was heard of or before the entry above.
        elapsed = max(min(stepped.get(entry[0], elapsed), elapsed), log[-1][3] if log else 0.0)
        log.append((entry[0], entry[1], entry[2], elapsed))
    out.mkdir(parents=True, exist_ok=True)
    with (out / "loss_log.tsv").open("w", encoding="utf-8") as file:
        file.write("step\ttrain_loss\tval_loss\telapsed_s\n")
        file.writelines(f"{s}\t{t:.4f}\t{v:.4f}\t{e:.1f}\n" for s, t, v, e in log)
    return log


def write_run(out: Path, net: Any, config: Any, int_to_char: dict[int, str]) -> None:
    """config.json, vocab.json and model.safetensors, as `train` writes them: the weights
    by the names of the learner's model, which passed its grade on the shipped ones."""
    import torch

    from grader.model.artifacts import save_model, save_vocab

    save_vocab(int_to_char, out / "vocab.json")
    with torch.no_grad():  # config.json from the run's config, whatever the model holds
        save_model(SimpleNamespace(config=config, state_dict=net.state_dict), out)
