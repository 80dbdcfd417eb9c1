"""A model named rather than sent: what crosses the worker protocol
(grader/sandbox/wire/encoding.py) and what the grader and a worker each build a model from.

Here, on the model's floor, since every side uses it: the checks and the grading
engine to name the model a case runs, the sandbox to carry and validate it, the
model code to build it. It holds no model code and imports nothing but the
standard library, so a worker that is handed no model may hold it.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class ModelSpec:
    """A model described, not sent: the shipped one, a seeded random one, or a trained run.

    The shipped and random models are built by each side for itself. A run
    (`kind="run"`, `path` its folder, `config` its sizes) is built only by the
    grader: a sandboxed worker cannot read the run's folder, so it is handed a
    model whose forward passes the grader's witness serves. The learner's own
    GPT (`kind="yours"`, `path` their problems/23-gpt/solution.py, `config` the
    shipped sizes) is built only by a worker, with the shipped weights
    (grader/model/yours.py): the grader never imports a learner's code; with a run's
    sizes and `seed` the handle of the run's weights, which the grader handed that
    worker, with those (`talk --model RUN --yours`). A hidden
    model (`kind="hidden"`, `config` its sizes, `seed` a handle, not its weights'
    seed) stands in for a shipped or random one in the checks that judge how the
    model is used: its weights are drawn by the grader and never leave it
    (grader/model/hidden_weights.py), so the witness serves its forward passes as a run's.
    The shipped modern model (`kind="modern"`, data/llama.safetensors) is built by each
    side for itself, as the shipped one is; the learner's modern GPT is `kind="yours"`
    with the modern model's sizes (`n_kv_head` among them).
    """

    kind: str = "shipped"
    config: dict[str, int] = field(default_factory=dict)
    seed: int = 0
    path: str = ""

    def __repr__(self) -> str:
        if self.kind == "shipped":
            return "the shipped model"
        if self.kind == "modern":
            return "the shipped modern model"
        if self.kind == "run":
            return f"the model trained in {self.path}"
        if self.kind == "yours":
            what = "your modern GPT" if "n_kv_head" in self.config else "your GPT"
            if self.seed:  # the handle of a run's weights (grader/model/yours.py)
                return f"{what} with a trained run's weights"
            if "n_kv_head" in self.config:
                return f"{what} with the shipped modern weights"
            return f"{what} with the shipped weights"
        sizes = ", ".join(f"{k}={v}" for k, v in self.config.items())
        if self.kind == "hidden":
            return f"GPT({sizes}) with weights the grader drew for this grade"
        return f"random GPT({sizes}, seed={self.seed})"

    def key(self) -> tuple:
        return (self.kind, tuple(sorted(self.config.items())), self.seed, self.path)
