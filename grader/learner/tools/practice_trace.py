"""`gpt-kata trace` in a learners' copy: the learner's run beside the reference's stored one.

The kata runs the learner's code in a sandboxed worker whose model calls it serves,
and the reference here. A copy holds no reference: the release ran it on each
fixed case and stored the windows its model read and its text
(grader/release/traces.py). The learner's code runs here, in this process, on the
same case's arguments, with its model (the exported program of the shipped or a
random GPT) noting each forward pass; then the two runs are compared, shown and
drawn exactly as the kata does (grader/learner/tools/trace.py).

A case's prompt, length and seed are the stored ones: the reference's run beside
yours exists for those only.
"""

from __future__ import annotations

import argparse
from functools import cache
from typing import Any

from grader.learner.errors import UsageError
from grader.learner.options import select_problems
from grader.learner.tools.trace import (
    Traced,
    as_text,
    case_named,
    check_plot_target,
    failed_on_case,
    show_first_difference,
    text_ids,
)
from grader.learner.tools.trace_plan import Plan
from grader.locale import tr


@cache
def stored() -> dict[str, Any]:
    from gpt_kata_practice.practice_grade import stored as cases

    return cases().get("traces", {})


def trace(args: argparse.Namespace) -> int:
    import torch

    to_trace = plans(args)
    check_plot_target(args.plot)
    torch.set_num_threads(1)
    return show_first_difference(args, to_trace, trace_case)


def plans(args: argparse.Namespace) -> list[Plan]:
    """The stored fixed cases, in the order grade checks them: the one --case names,
    or else all of them."""
    from pathlib import Path

    from gpt_kata_practice import codec

    problem = select_problems([args.problem])[0]
    traces = stored()
    if problem.slug not in traces:
        from grader.registry import problems

        held = [p.folder for p in problems() if p.slug in traces]
        raise UsageError(tr("{folder} does not generate text, so there is nothing to "
                            "trace; the problems that do: {traceable}", folder=problem.folder,
                            traceable=", ".join(held)))
    if args.reference:
        raise UsageError(tr("--reference traces the reference solution, which this "
                            "learners' copy does not hold"))
    changed = [option for option, given in (("PROMPT", args.prompt), ("--steps", args.steps),
                                            ("--seed", args.seed)) if given is not None]
    if changed:
        raise UsageError(tr("{options}: in a learners' copy trace runs the fixed cases as "
                            "they are, for the reference's run beside yours is stored for "
                            "those only", options=", ".join(changed)))
    submission = Path(args.submission) if args.submission else problem.starter
    if not submission.is_file():
        raise UsageError(tr("{submission}: no such file", submission=submission))
    held = traces[problem.slug]
    names = tuple(held["names"])
    ids = list(held["cases"])
    chosen = [case_named(args.case, ids, problem)] if args.case is not None else ids
    return [Plan(problem, held["method"], held["iterate"], submission, names,
                 dict(zip(names, codec.decode(held["cases"][case_id]["args"]))), case_id,
                 (), args.case is not None, ids.index(case_id) + 1, len(ids))
            for case_id in chosen]


def trace_case(the_plan: Plan) -> tuple[Traced | None, str | None]:
    """Both runs of one case, or a one-line reason the learner's has none."""
    from grader.learner.tools.trace_steps import Distributions, Run, first_difference, steps_of

    yours, failure = learner_run(the_plan)
    if failure:
        return None, failure
    held = stored()[the_plan.problem.slug]["cases"][the_plan.case_id]
    int_to_char = the_plan.args["int_to_char"]
    reference = Run(steps_of([(tokens, past) for tokens, past in held["passes"]],
                             text_ids(held["text"], int_to_char)), held["text"])
    model = the_plan.args["model"]
    probs = Distributions(model, int(the_plan.args["context_length"]))
    difference = first_difference(yours.steps, reference.steps, probs)
    return Traced(the_plan, yours, reference, probs, difference), None


def learner_run(the_plan: Plan) -> tuple[Any, str | None]:
    """The learner's run of one case, here, on a model that notes its forward passes;
    or a one-line reason it has none."""
    import torch
    from gpt_kata_practice.practice_grade import load

    from grader.learner.tools.trace_steps import RecordingModel, Run, steps_of

    label = tr("your {method}()", method=the_plan.method)
    model = RecordingModel(the_plan.args["model"])
    values = [model if name == "model" else the_plan.args[name] for name in the_plan.names]
    try:
        solution = load(the_plan.submission).Solution()
        with torch.no_grad():
            result = getattr(solution, the_plan.method)(*values)
            if the_plan.iterate:
                result = list(result)
    except Exception as exc:  # noqa: BLE001 - the learner's code, said in one line
        return None, failed_on_case(label, the_plan.case_id, len(model.passes),
                                    f"{type(exc).__name__}: {exc}")
    text = as_text(result, the_plan.iterate)
    return Run(steps_of(model.passes, text_ids(text, the_plan.args["int_to_char"]),
                        model.told),
               text if text is not None else tr("({type}, not text)",
                                                type=type(result).__name__),
               "" if text is not None else type(result).__name__), None
