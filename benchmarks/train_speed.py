"""How fast training runs, against what this CPU's matrix multiplies can do.

In one run, on the shipped GPT's sizes (and the modern decoder's, with
`--model modern`), with the batch `gpt-kata train` uses:

- the matrix-multiply throughput this CPU reaches at the thread count, on a large
  square product (its peak) and on the model's own matmul shapes (what a step's
  matmuls could reach at best, run alone);
- the training step `gpt-kata train` runs (grader/model/training.py's
  `optimisation_step`: forward, loss, backward, clipping, AdamW), in tokens per
  second and in FLOP/s (each weight matmul 6 FLOPs per weight per token over
  forward and backward, and the attention's two products);
- the share: the step's FLOP/s over the model shapes' matmul FLOP/s. What is left is
  the work the model's definition asks beside its matmuls (GELU, LayerNorm,
  softmax, copies) and the optimizer's.

    python benchmarks/train_speed.py [--threads 1] [--steps 40] [--model gpt|modern]
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path

import torch

from grader.model.config import GPTConfig, LlamaConfig
from grader.model.gpt import GPT
from grader.model.llama import Llama
from grader.model.training import TrainSettings, optimisation_step

# The goal: the step reaches this share of the model shapes' own matmul FLOP/s
# (measured in the same run); below it, something beside the matmuls grew.
SHARE_GOAL = 0.25
BATCH = TrainSettings().batch_size
DATA = Path(__file__).resolve().parent.parent / "data"


def rate(run: Callable[[], object], flops: float, repeats: int) -> float:
    """FLOP/s of `run`, its fastest of `repeats` after two warm-ups."""
    for _ in range(2):
        run()
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - started)
    return flops / best


def matmul_rate(shapes: list[tuple[int, int, int]], repeats: int = 20) -> float:
    """FLOP/s of the products (m, k) @ (k, n) of `shapes`, one after another."""
    pairs = [(torch.randn(m, k), torch.randn(k, n)) for m, k, n in shapes]
    flops = sum(2 * m * k * n for m, k, n in shapes)
    return rate(lambda: [a @ b for a, b in pairs], flops, repeats)


def model_of(kind: str) -> tuple[torch.nn.Module, int, int]:
    """The model at the shipped sizes, its context length and vocabulary size."""
    if kind == "modern":
        config = LlamaConfig(**json.loads((DATA / "llama-config.json").read_text()))
        return Llama(config), config.context_length, config.vocab_size
    config = GPTConfig(**json.loads((DATA / "config.json").read_text()))
    return GPT(config), config.context_length, config.vocab_size


def step_shapes(model: torch.nn.Module, tokens: int) -> list[tuple[int, int, int]]:
    """The forward pass's weight matmuls: one (tokens, in) @ (in, out) per Linear."""
    return [(tokens, m.in_features, m.out_features) for m in model.modules()
            if isinstance(m, torch.nn.Linear)]


def step_flops(model: torch.nn.Module, length: int) -> float:
    """FLOPs of one training step: 6 per weight per token for every Linear (forward,
    and the two products of backward), and per attention layer q @ k^T and
    weights @ v, 2 * T * T * C each, three times over."""
    tokens = BATCH * length
    linear = sum(6 * tokens * i * o for _, i, o in step_shapes(model, 1))
    layers = [m for m in model.modules() if type(m).__name__ in
              ("CausalSelfAttention", "Attention", "GroupedQueryAttention")]
    width = next(m for m in model.modules() if isinstance(m, torch.nn.Linear)).in_features
    attention = len(layers) * 3 * 2 * (2 * BATCH * length * length * width)
    return float(linear + attention)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--model", choices=("gpt", "modern"), default="gpt")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)

    model, length, vocab = model_of(args.model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    x = torch.randint(vocab, (BATCH, length))
    y = torch.randint(vocab, (BATCH, length))
    flops = step_flops(model, length)
    step = rate(lambda: optimisation_step(model, optimizer, x, y), flops, args.steps)
    peak = matmul_rate([(1024, 1024, 1024)], repeats=5)
    shapes = matmul_rate(step_shapes(model, BATCH * length))
    tokens = step / flops * BATCH * length
    share = step / shapes
    print(f"{args.model}, {args.threads} thread(s), batch {BATCH} x {length} tokens")
    print(f"  matmul peak (1024^3):     {peak / 1e9:7.1f} GFLOP/s")
    print(f"  the model's matmul shapes: {shapes / 1e9:7.1f} GFLOP/s")
    print(f"  a training step:           {step / 1e9:7.1f} GFLOP/s, {tokens:,.0f} tokens/s, "
          f"{flops / step * 1000:.1f} ms")
    mark = "ok  " if share >= SHARE_GOAL else "OVER"
    print(f"{mark} {share:.2f} of the shapes' matmul rate (goal >= {SHARE_GOAL:.2f}), "
          f"{step / peak:.2f} of the peak")
    print(json.dumps({"tokens_per_s": round(tokens), "step_gflops": round(step / 1e9, 1),
                      "shapes_gflops": round(shapes / 1e9, 1),
                      "peak_gflops": round(peak / 1e9, 1), "share": round(share, 3)}))
    return 0 if share >= SHARE_GOAL else 1


if __name__ == "__main__":
    raise SystemExit(main())
