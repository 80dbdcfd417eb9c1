"""`gpt-kata trace PROBLEM [PROMPT]`: a generation run step by step, beside the reference's.

The learner's code runs in a sandboxed worker whose model is served by the
grader's witness (grader/sandbox/witness.py), so every window it fed the model
is seen without the learner changing a line and without their code ever
running in this process. The reference runs here on a recording model. Each
window's next-token distribution comes from the model itself.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grader.cli.errors import EXIT_FAIL, EXIT_PASS, UsageError
from grader.cli.options import check_report_target, select_problems
from grader.cli.output import console
from grader.registry import Problem, problems

COUNTS = ("new_chars", "max_new_tokens")  # the argument that says how many steps
MAX_STEPS = 1000


def generation_method(problem: Problem) -> str | None:
    """The problem's method that generates text from a model and a context, if any."""
    from grader.grading.contract import reference_signature

    for method in problem.methods:
        names = reference_signature(problem, method).names
        if {"model", "context"} <= set(names) and any(c in names for c in COUNTS):
            return method
    return None


def traceable() -> list[str]:
    return [p.folder for p in problems() if generation_method(p)]


def load_contract(problem: Problem) -> Any:
    """The check module's contract: its cases are where the default arguments come from."""
    name = f"gpt_kata_trace_checks_{problem.slug.replace('-', '_')}"
    spec = importlib.util.spec_from_file_location(name, problem.checks)
    assert spec and spec.loader, problem.checks
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module.CONTRACT


@dataclass
class Plan:
    """What to trace: whose file, which method, with which arguments."""

    problem: Problem
    method: str
    iterate: bool
    submission: Path
    names: tuple[str, ...]
    args: dict[str, Any]
    case_id: str
    changed: tuple[str, ...] = ()  # the case's arguments replaced from the command line


def plan(args: argparse.Namespace) -> Plan:
    problem = select_problems([args.problem])[0]
    method = generation_method(problem)
    if method is None:
        raise UsageError(f"{problem.folder} does not generate text, so there is nothing to "
                         f"trace; the problems that do: {', '.join(traceable())}")
    if args.reference and args.submission:
        raise UsageError("use either --reference or --submission, not both")
    submission = (problem.reference if args.reference else
                  Path(args.submission) if args.submission else problem.starter)
    if not submission.is_file():
        raise UsageError(f"{submission}: no such file" + (
            "" if args.submission else "; run gpt-kata in your kata folder, or name a file "
                                       "with --submission"))
    contract = load_contract(problem)
    case_id, case = next(iter(contract.case_args.items()))
    names = tuple(contract.arg_names)
    call = dict(zip(names, case))
    if args.prompt is not None:
        call["context"] = prompt_ids(args.prompt, call["int_to_char"])
    count = next(c for c in COUNTS if c in names)
    if args.steps is not None:
        if not 0 <= args.steps <= MAX_STEPS:
            raise UsageError(f"--steps must be between 0 and {MAX_STEPS}")
        call[count] = args.steps
    if args.seed is not None:
        if "seed" not in names:
            raise UsageError(f"{problem.folder}'s {method}() takes no seed: it seeds its "
                             "generator with 0 itself")
        call["seed"] = args.seed
    changed = tuple(name for name, given in (("prompt", args.prompt), (count, args.steps),
                                             ("seed", args.seed)) if given is not None)
    return Plan(problem, method, contract.iterate, submission, names, call, case_id, changed)


def prompt_ids(prompt: str, int_to_char: dict[int, str]) -> Any:
    from grader.model import artifacts

    try:
        ids = artifacts.encode(prompt, int_to_char)
    except ValueError as exc:
        raise UsageError(f"{exc}; the model knows only {''.join(int_to_char.values())!r}") \
            from None
    if ids.shape[1] == 0:
        raise UsageError("give a prompt of at least one character")
    return ids


def check_plot_target(target: str | None) -> None:
    if target is None:
        return
    check_report_target("--plot", target)
    if importlib.util.find_spec("matplotlib") is None:
        raise UsageError("--plot draws with matplotlib, which is not installed here "
                         "(pip install matplotlib)")


def trace(args: argparse.Namespace) -> int:
    the_plan = plan(args)
    check_plot_target(args.plot)
    import torch

    from grader.cli.trace_steps import Distributions
    from grader.model import artifacts

    torch.set_num_threads(1)
    out = console()
    yours, failure = learner_run(the_plan, args)
    if failure:
        out.print(failure, markup=False)
        return EXIT_FAIL
    reference = reference_run(the_plan)
    model = artifacts.build_model(the_plan.args["model"])
    probs = Distributions(model, int(the_plan.args["context_length"]))
    from grader.cli.trace_view import render

    difference = render(out, the_plan, yours, reference, probs)
    if args.plot:
        from grader.cli.trace_plot import plot

        step = difference if difference is not None else 0
        plot(Path(args.plot), the_plan, yours, reference, probs, step, difference is not None)
        out.print(f"drew step {step + 1} in {args.plot}", markup=False)
    return EXIT_PASS if difference is None else EXIT_FAIL


def learner_run(the_plan: Plan, args: argparse.Namespace) -> tuple[Any, str | None]:
    """The learner's run in a sandboxed worker, or a one-line reason it has none."""
    from grader.cli.trace_steps import Run, steps_of
    from grader.grading.skeleton import one_line
    from grader.sandbox.process import Sandbox, SubmissionProcess, WorkerPool

    whose = "the reference's" if args.reference else "your"
    label = f"{whose} {the_plan.method}()"
    values = tuple(the_plan.args[name] for name in the_plan.names)
    with WorkerPool(sandbox=Sandbox()) as pool:
        process = SubmissionProcess(str(the_plan.submission), "Solution",
                                    list(the_plan.problem.methods), pool, witnessed=True)
        try:
            outcome = process.call(the_plan.method, values, iterate=the_plan.iterate)
        finally:
            process.close()
    if outcome.model_passes is None and outcome.error is None:
        return None, (f"trace cannot see {label}'s model calls here: that needs the grader "
                      "to serve them, which it does on Linux only")
    if outcome.error:
        passes = len(outcome.model_passes or [])
        after = f" after {passes} model call{'s' * (passes != 1)}" if passes else ""
        return None, f"{label} failed{after}: {one_line(outcome.error)}"
    result = outcome.result
    if the_plan.iterate and isinstance(result, list):
        result = [chunk for chunk, _count in result]
    text = as_text(result)
    passes = [(tokens, past) for (tokens, _logits), (_new, past)
              in zip(outcome.model_passes, outcome.model_calls or [])]
    told = [logits for _tokens, logits in outcome.model_passes]
    return Run(steps_of(passes, text_ids(text, the_plan.args["int_to_char"]), told),
               text if text is not None else f"({type(result).__name__}, not text)"), None


def reference_run(the_plan: Plan) -> Any:
    import torch

    from grader.cli.trace_steps import RecordingModel, Run, steps_of
    from grader.grading.skeleton import fresh, load_reference

    reference = load_reference(the_plan.problem)
    model = RecordingModel(fresh(the_plan.args["model"]))
    values = [model if name == "model" else fresh(the_plan.args[name])
              for name in the_plan.names]
    with torch.no_grad():
        result = getattr(reference, the_plan.method)(*values)
        if the_plan.iterate:
            result = list(result)
    text = as_text(result) or ""
    return Run(steps_of(model.passes, text_ids(text, the_plan.args["int_to_char"]),
                        model.told), text)


def as_text(result: Any) -> str | None:
    """A method's answer as one text: a string, or the chunks a generator yielded."""
    if isinstance(result, str):
        return result
    if isinstance(result, list) and all(isinstance(chunk, str) for chunk in result):
        return "".join(result)
    return None


def text_ids(text: str | None, int_to_char: dict[int, str]) -> list[int] | None:
    if text is None:
        return None
    lookup = {c: i for i, c in int_to_char.items()}
    if any(c not in lookup for c in text):
        return None
    return [lookup[c] for c in text]


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "trace", help="your generation step by step beside the reference's, with the first "
                      "step where they differ",
        description="Run your generation method (problems 06, 07, 13 to 16) and the "
                    "reference's on the same arguments and show, step by step, the window "
                    "the model saw, the reference's top probabilities, both picks, and the "
                    "first step where the runs differ. Options go after the prompt.")
    p.add_argument("problem", metavar="PROBLEM",
                   help="a problem that generates: slug, number, NN-slug or folder, e.g. "
                        "generate, 6, 06-generate")
    p.add_argument("prompt", nargs="?", metavar="PROMPT",
                   help="the text to continue (default: the prompt of the problem's first "
                        "fixed check)")
    p.add_argument("--steps", type=int, metavar="N",
                   help="how many new characters to generate (default: as many as the "
                        "first fixed check)")
    p.add_argument("--seed", type=int,
                   help="the seed, for a problem whose method takes one (default: the first "
                        "fixed check's)")
    p.add_argument("--plot", metavar="FILE.png",
                   help="also draw the distributions at the first differing step, with "
                        "matplotlib (default: no picture)")
    p.add_argument("--submission", metavar="FILE",
                   help="trace this file (default: your problems/NN-slug/solution.py)")
    p.add_argument("--reference", action="store_true",
                   help="trace the reference solution (it differs nowhere)")
    p.set_defaults(run=trace)
