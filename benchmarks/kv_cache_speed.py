"""Tokens per second of generation with a KV cache against the plain loop.

Runs the reference `generate_cached` (problem 15) and the reference `generate`
(problem 06) in the same run, on the same seeded random model with a context
of 1024 tokens, for 64, 256 and 1024 new tokens from a one-token prompt (so the
text never outgrows the window and the cache is never rebuilt). Each size is
timed `--repeats` times and the fastest run counts, except 1024 new tokens,
which the plain loop makes slowly enough to time once. Nothing is downloaded.

    python benchmarks/kv_cache_speed.py [--threads 1] [--repeats 3]
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path

import torch

from grader.model import artifacts

ROOT = Path(__file__).resolve().parent.parent
CONFIG = {"vocab_size": 64, "context_length": 1024, "n_layer": 4, "n_head": 4, "n_embd": 128}
SIZES = (64, 256, 1024)
SEED = 0


def reference(folder: str):
    path = ROOT / "solutions" / folder / "solution.py"
    spec = importlib.util.spec_from_file_location(f"benchmark_{folder.replace('-', '_')}", path)
    assert spec and spec.loader, path
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.Solution()


def timed(run, repeats: int) -> tuple[float, str]:
    """The fastest of `repeats` runs, in seconds, and the text it made."""
    best, text = float("inf"), ""
    for _ in range(repeats):
        started = time.perf_counter()
        text = run()
        best = min(best, time.perf_counter() - started)
    return best, text


@torch.no_grad()
def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    parser.add_argument("--repeats", type=int, default=3,
                        help="timed runs for 64 and 256 new tokens; 1024 is timed once")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    plain, cached = reference("06-generate"), reference("15-kv-cache")
    model = artifacts.random_model(CONFIG, SEED)
    n = CONFIG["context_length"]
    int_to_char = {i: chr(ord("0") + i) for i in range(CONFIG["vocab_size"])}
    prompt = torch.tensor([[0]])
    print(f"random GPT {CONFIG}, seed {SEED}, {args.threads} thread(s), one-token prompt")
    print(f"{'new tokens':>10} {'plain tok/s':>12} {'cached tok/s':>13} {'speed-up':>9}"
          f" {'same text':>10} {'runs':>5}")
    for size in SIZES:
        repeats = 1 if size >= 1024 else args.repeats
        t_plain, text_plain = timed(
            lambda size=size: plain.generate(model, size, prompt, n, int_to_char), repeats)
        t_cached, text_cached = timed(
            lambda size=size: cached.generate_cached(model, size, prompt, n, int_to_char),
            repeats)
        print(f"{size:>10} {size / t_plain:>12.1f} {size / t_cached:>13.1f}"
              f" {t_plain / t_cached:>8.1f}x {'yes' if text_plain == text_cached else 'NO':>10}"
              f" {repeats:>5}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
