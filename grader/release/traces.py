"""The reference's runs that `gpt-kata trace` sets a learner's run beside, for a copy.

In the kata, trace runs the reference live on each fixed case of a problem that
generates text. A copy holds no reference: the release runs it here on those cases
and stores what trace reads of a run, the window the model read at each step and
its text, with the case's arguments, each model among them the spec of its
exported program. The copy rebuilds the steps from them as the kata does
(grader/learner/tools/trace_steps.py).
"""

from __future__ import annotations

from typing import Any

from grader.registry import problems
from grader.release.models import Models


def stored_traces(models: Models, only: frozenset[str] | None = None) -> dict[str, Any]:
    """Each problem that generates text: its method and arguments' names, and each fixed
    case's arguments with the reference's passes and text; the models they run are
    added to `models` (with their KV cache, which kv-cache's reference uses)."""
    import torch

    from grader.learner.tools.trace import generation_method, load_contract, reference_run
    from grader.learner.tools.trace_plan import Plan
    from grader.model.spec import ModelSpec
    from grader.release.practice import codec

    stored: dict[str, Any] = {}
    for problem in problems():
        method = generation_method(problem)
        if method is None or (only is not None and problem.slug not in only):
            continue
        contract = load_contract(problem)
        names = tuple(contract.arg_names)
        met = Models()
        cases = {}
        for number, (case_id, args) in enumerate(contract.case_args.items(), start=1):
            plan = Plan(problem, method, contract.iterate, problem.reference, names,
                        dict(zip(names, args)), case_id, (), False, number,
                        len(contract.case_args))
            with torch.no_grad():
                run = reference_run(plan)
            # Each model kept, to be exported for the copy.
            shown = tuple(met.exported(a) if isinstance(a, ModelSpec) else a for a in args)
            cases[case_id] = {"args": codec.encode(shown),
                              "passes": passes_of(run), "text": run.text}
        models.merge(met)
        models.cached |= set(met.specs)
        stored[problem.slug] = {"method": method, "iterate": contract.iterate,
                                "names": list(names), "cases": cases}
    return stored


def passes_of(run: Any) -> list[list[Any]]:
    """A run's forward passes as trace_steps.steps_of reads them, [token ids, tokens
    cached]: each the whole window its step read, none cached, which gives the same
    steps (a cached pass's window is rebuilt as this one)."""
    return [[list(step.window), 0] for step in run.steps]
