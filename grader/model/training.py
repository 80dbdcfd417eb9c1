"""Train the character-level GPT on a text file: seeded, reproducible on one machine."""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch
import torch.nn.functional as F
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from grader.locale import tr
from grader.locale.fonts import in_english_note, picture_language
from grader.model.artifacts import save_model, save_vocab, split_corpus
from grader.model.config import TrainSettings
from grader.model.gpt import GPT, GPTConfig
from grader.model.llama import Llama, LlamaConfig


def learning_rate(step: int, s: TrainSettings) -> float:
    """Linear warm-up, then cosine decay to min_learning_rate, which stays from step
    `steps` on: problem 27's schedule."""
    if step < s.warmup_steps:
        return s.learning_rate * (step + 1) / s.warmup_steps
    progress = min(1.0, (step - s.warmup_steps) / max(1, s.steps - s.warmup_steps))
    return s.min_learning_rate + 0.5 * (s.learning_rate - s.min_learning_rate) * (
        1 + math.cos(math.pi * progress)
    )


def random_windows(
    data: torch.Tensor, batch_size: int, length: int, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    starts = torch.randint(len(data) - length - 1, (batch_size,), generator=generator)
    x = torch.stack([data[s : s + length] for s in starts.tolist()])
    y = torch.stack([data[s + 1 : s + length + 1] for s in starts.tolist()])
    return x, y


@torch.no_grad()
def estimate_loss(model: GPT | Llama, data: torch.Tensor, batches: int = 8, seed: int = 1) -> float:
    """Mean loss on a fixed set of windows, so successive values are comparable."""
    model.eval()
    g = torch.Generator().manual_seed(seed)
    losses = []
    for _ in range(batches):
        x, y = random_windows(data, 64, model.context_length, g)
        losses.append(F.cross_entropy(model(x).flatten(0, 1), y.flatten()).item())
    model.train()
    return sum(losses) / len(losses)


def plot_losses(log: list[tuple[int, float, float]], path: Path,
                vocab_size: int | None = None) -> bool:
    """Draw the loss curve to path; False, after saying so, when matplotlib is missing.

    The loss axis is logarithmic, so that the slow fall of the late steps reads as
    well as the fast one of the first; with `vocab_size`, a dashed line marks
    ln(vocab_size), the loss of a uniform guess, where an untrained GPT starts.
    """
    # Imported here, not at the top: only training draws, and grading should
    # neither pay for matplotlib nor need it.
    try:
        import matplotlib
    except ImportError:
        print(tr("matplotlib is not installed, so {picture} was not drawn; the losses are "
                 "in {log} (pip install matplotlib)", picture=path.name,
                 log=path.with_name("loss_log.tsv")), file=sys.stderr)
        return False

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    with picture_language(plt) as in_english:
        steps, train, val = zip(*log)
        fig, ax = plt.subplots(figsize=(7, 4), dpi=100)
        ax.plot(steps, train, label=tr("train"))
        ax.plot(steps, val, label=tr("validation"))
        if vocab_size is not None and vocab_size > 1:
            uniform = math.log(vocab_size)
            ax.axhline(uniform, color="grey", linestyle="--", linewidth=1,
                       label=tr("ln({vocab}) = {loss}: a uniform guess", vocab=vocab_size,
                                loss=f"{uniform:.2f}"))
        ax.set_yscale("log")
        # Plain numbers at 1, 2, 3 ... of each decade: a loss of 1.2 reads as 1.2, not 10^0.
        ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 1.5, 2.0, 3.0, 5.0, 7.0)))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel(tr("step"))
        ax.set_ylabel(tr("cross-entropy loss (nats per character, log scale)"))
        ax.set_title(tr("gpt-kata training loss"))
        ax.grid(alpha=0.3, which="both")
        ax.legend()
        fig.tight_layout()
        fig.savefig(path)
        plt.close(fig)
    if in_english:
        print(in_english_note(path.name), file=sys.stderr)
    return True


def optimisation_step(model: torch.nn.Module, optimizer: torch.optim.Optimizer,
                      x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """One step on the batch (x, y): the loss, its gradients clipped to norm 1, the
    optimizer's update; the loss. benchmarks/train_speed.py times this very step."""
    loss = F.cross_entropy(model(x).flatten(0, 1), y.flatten())
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    return loss


def train(
    text: str,
    out_dir: Path,
    config: GPTConfig | LlamaConfig | None = None,
    settings: TrainSettings = TrainSettings(),
    show_progress: bool = True,
    on_eval: Callable[[int, int, float, float, float], None] | None = None,
    on_step: Callable[[int, int, float], None] | None = None,
) -> GPT | Llama:
    """Train on `text` and write model, config, vocab, loss log and loss curve to out_dir.

    `on_eval(step, steps, train_loss, val_loss, elapsed_seconds)` hears of every
    evaluation, for progress where no live bar can be drawn, and `on_step(step, steps,
    seconds)` of every step, with the seconds since the first began. A LlamaConfig trains the
    modern decoder (grader/model/llama.py) the same way, on the same batches.
    """
    config = config or GPTConfig(vocab_size=2)
    int_to_char, train_data, val_data = split_corpus(text, config.context_length)
    config = type(config)(**{**config.to_dict(), "vocab_size": len(int_to_char)})

    torch.set_num_threads(settings.threads)
    torch.manual_seed(settings.seed)
    model = Llama(config) if isinstance(config, LlamaConfig) else GPT(config)
    optimizer = torch.optim.AdamW(
        model.parameters(), lr=settings.learning_rate, weight_decay=settings.weight_decay
    )
    batches = torch.Generator().manual_seed(settings.seed)
    out_dir.mkdir(parents=True, exist_ok=True)
    log: list[tuple[int, float, float]] = []
    log_file = (out_dir / "loss_log.tsv").open("w", encoding="utf-8")
    log_file.write("step\ttrain_loss\tval_loss\telapsed_s\n")
    started = time.perf_counter()
    first_step = None

    columns = (TextColumn("training"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
               TextColumn("loss {task.fields[loss]}"), TimeElapsedColumn(), TimeRemainingColumn())
    with Progress(*columns, disable=not show_progress) as progress:
        task = progress.add_task("train", total=settings.steps, loss="-")
        for step in range(settings.steps + 1):
            if step % settings.eval_every == 0 or step == settings.steps:
                train_loss = estimate_loss(model, train_data)
                val_loss = estimate_loss(model, val_data)
                log.append((step, train_loss, val_loss))
                log_file.write(f"{step}\t{train_loss:.4f}\t{val_loss:.4f}\t"
                               f"{time.perf_counter() - started:.1f}\n")
                log_file.flush()
                progress.update(task, loss=f"{train_loss:.3f} / val {val_loss:.3f}")
                if on_eval is not None:
                    on_eval(step, settings.steps, train_loss, val_loss,
                            time.perf_counter() - started)
            if step == settings.steps:
                break
            if first_step is None:  # the pace counts steps, not the first evaluation
                first_step = time.perf_counter()
                if on_step is not None:
                    on_step(0, settings.steps, 0.0)
            for group in optimizer.param_groups:
                group["lr"] = learning_rate(step, settings)
            x, y = random_windows(train_data, settings.batch_size, config.context_length, batches)
            optimisation_step(model, optimizer, x, y)
            progress.advance(task)
            if on_step is not None:
                on_step(step + 1, settings.steps, time.perf_counter() - first_step)
    log_file.close()

    model.eval()
    save_model(model, out_dir)
    save_vocab(int_to_char, out_dir / "vocab.json")
    plot_losses(log, out_dir / "loss_curve.png", len(int_to_char))
    return model
