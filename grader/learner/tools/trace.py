"""`gpt-kata trace PROBLEM [PROMPT]`: a generation run step by step, beside the reference's.

The learner's code runs in a sandboxed worker whose model is served by the
grader's witness (grader/sandbox/host/witness.py), so every window it fed the model
is seen without the learner changing a line and without their code ever
running in this process. The reference runs here on a recording model. Each
window's next-token distribution comes from the model itself.

The fixed cases run in the order grade checks them, all in one worker, until
the first whose runs differ: that case is the one shown, named by the id grade
prints, so a mistake that only a later case reveals is not hidden.
"""

from __future__ import annotations

import argparse
import difflib
import importlib.util
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grader import paths
from grader.learner.errors import EXIT_FAIL, EXIT_PASS, UsageError
from grader.learner.options import check_report_target, hidden_in_a_copy, select_problems
from grader.learner.output import console
from grader.learner.tools.talk_text import prompt_ids
from grader.learner.tools.trace_plan import Plan, joined
from grader.locale import tr
from grader.registry import Problem, problems
from grader.wording import one_of

COUNTS = ("new_chars", "max_new_tokens")  # the argument that says how many steps
MAX_STEPS = 1000


def generation_method(problem: Problem) -> str | None:
    """The problem's method that generates text from a model and a context, if any."""
    from grader.grading.contracts.contract_derivation import reference_signature

    for method in problem.methods:
        names = reference_signature(problem, method).names
        if {"model", "context"} <= set(names) and any(c in names for c in COUNTS):
            return method
    return None


def traceable() -> list[str]:
    return [p.folder for p in problems() if generation_method(p)]


def load_contract(problem: Problem) -> Any:
    """The check module's contract: its cases are where the default arguments come from."""
    # Imported here: a learners' copy holds no check modules, nor what loads them.
    from grader.grading.contracts.declaring import load_check_module

    return load_check_module(problem).CONTRACT


def plans(args: argparse.Namespace) -> list[Plan]:
    """The fixed cases to trace, in the order grade checks them: the one named by
    --case, or else all of them (the trace shows the first whose runs differ)."""
    problem = select_problems([args.problem])[0]
    method = generation_method(problem)
    if method is None:
        raise UsageError(tr("{folder} does not generate text, so there is nothing to "
                            "trace; the problems that do: {traceable}", folder=problem.folder,
                            traceable=", ".join(traceable())))
    if args.reference and args.submission:
        raise UsageError(tr("use either --reference or --submission, not both"))
    submission = (problem.reference if args.reference else
                  Path(args.submission) if args.submission else problem.starter)
    if not submission.is_file():
        raise UsageError(tr("{submission}: no such file", submission=submission)
                         if args.submission else
                         tr("{submission}: no such file; run gpt-kata in your kata folder, "
                            "or name a file with --submission", submission=submission))
    contract = load_contract(problem)
    names = tuple(contract.arg_names)
    count = next(c for c in COUNTS if c in names)
    if args.steps is not None and not 0 <= args.steps <= MAX_STEPS:
        raise UsageError(tr("--steps must be between 0 and {most}", most=MAX_STEPS))
    if args.seed is not None and "seed" not in names:
        raise UsageError(tr("{folder}'s {method}() takes no seed: it seeds its "
                            "generator with 0 itself", folder=problem.folder, method=method))
    changed = tuple(name for name, given in (("prompt", args.prompt), (count, args.steps),
                                             ("seed", args.seed)) if given is not None)
    ids = list(contract.case_args)
    chosen = [case_named(args.case, ids, problem)] if args.case is not None else ids
    made: list[Plan] = []
    refused: UsageError | None = None
    for case_id in chosen:
        call = dict(zip(names, contract.case_args[case_id]))
        if args.prompt is not None:
            try:
                call["context"] = prompt_ids(args.prompt, call["int_to_char"])
            except UsageError as exc:
                # A case on a model with another vocabulary: the other cases still run.
                refused = refused or exc
                continue
        if args.steps is not None:
            call[count] = args.steps
        if args.seed is not None:
            call["seed"] = args.seed
        made.append(Plan(problem, method, contract.iterate, submission, names, call, case_id,
                         changed, args.case is not None, ids.index(case_id) + 1, len(ids)))
    if not made:
        assert refused is not None, "every problem that generates has fixed cases"
        raise refused
    return made


def case_named(name: str, ids: list[str], problem: Problem) -> str:
    """The fixed case called `name`, as grade prints it in brackets."""
    key = name.strip().strip("[]")
    if key in ids:
        return key
    # A part of an id ("crop") or a near miss ("crop-many-time") both count as close.
    close = [i for i in ids if key and key in i][:3] or difflib.get_close_matches(
        key, ids, n=3, cutoff=0.6)
    if close:
        raise UsageError(tr("{folder} has no fixed case {name!r} (did you mean {close}?); "
                            "its cases: {cases}", folder=problem.folder, name=name,
                            close=one_of(close), cases=", ".join(ids)))
    raise UsageError(tr("{folder} has no fixed case {name!r}; its cases: {cases}",
                        folder=problem.folder, name=name, cases=", ".join(ids)))


def check_plot_target(target: str | None) -> None:
    if target is None:
        return
    check_report_target("--plot", target)
    if importlib.util.find_spec("matplotlib") is None:
        raise UsageError(tr("--plot draws with matplotlib, which is not installed here "
                            "(pip install matplotlib)"))


@dataclass
class Traced:
    """One case traced: both runs, the model's distributions, the first differing step."""

    plan: Plan
    yours: Any  # trace_steps.Run
    reference: Any
    probs: Any  # trace_steps.Distributions
    difference: int | None


def trace(args: argparse.Namespace) -> int:
    to_trace = plans(args)
    check_plot_target(args.plot)
    import torch

    from grader.learner.sandbox_notice import NoticedPool
    from grader.sandbox.host.process import SubmissionProcess
    from grader.sandbox.wire.limits import Limits

    torch.set_num_threads(1)
    # One sandboxed worker for the learner's file, kept for every case traced.
    with NoticedPool(sandbox=Limits()) as pool:
        process = SubmissionProcess(str(to_trace[0].submission), "Solution",
                                    list(to_trace[0].problem.methods), pool, witnessed=True)
        try:
            return show_first_difference(args, to_trace,
                                         lambda the_plan: trace_case(the_plan, process, args))
        finally:
            process.close()


def show_first_difference(args: argparse.Namespace, to_trace: list[Plan],
                          run: Callable[[Plan], tuple[Traced | None, str | None]]) -> int:
    """Trace each case with `run` until one's runs differ, and show that one (or the
    first, if none does); a learners' copy traces its cases in its own way
    (grader/learner/tools/practice_trace.py)."""
    out = console()
    first: Traced | None = None
    shown: Traced | None = None
    count = 0
    for the_plan in to_trace:
        traced, failure = run(the_plan)
        if failure:
            out.print(failure, markup=False)
            return EXIT_FAIL
        assert traced is not None
        first, count = first or traced, count + 1
        if traced.difference is not None or traced.yours.text != traced.reference.text:
            shown = traced
            break  # the first case that differs is the one shown: no need to run on
    assert first is not None, "plans() gives at least one case"
    shown = shown or first
    from grader.learner.tools.trace_view import render

    render(out, shown.plan, shown.yours, shown.reference, shown.probs, shown.difference,
           traced_cases=count)
    if args.plot:
        from grader.learner.tools.trace_plot import plot
        from grader.locale.fonts import in_english_note

        step = shown.difference if shown.difference is not None else 0
        in_english = plot(Path(args.plot), shown.plan, shown.yours, shown.reference,
                          shown.probs, step, shown.difference is not None)
        out.print(tr("drew step {step} in {plot}", step=step + 1, plot=args.plot),
                  markup=False)
        if in_english:
            out.print(in_english_note(args.plot), markup=False)
    same = shown.difference is None and shown.yours.text == shown.reference.text
    return EXIT_PASS if same else EXIT_FAIL


def trace_case(the_plan: Plan, process: Any,
               args: argparse.Namespace) -> tuple[Traced | None, str | None]:
    """Both runs of one case, or a one-line reason the learner's has none."""
    from grader.learner.tools.trace_steps import Distributions, first_difference
    from grader.model import artifacts

    yours, failure = learner_run(the_plan, process, args)
    if failure:
        return None, failure
    reference = reference_run(the_plan)
    model = artifacts.build_model(the_plan.args["model"])
    probs = Distributions(model, int(the_plan.args["context_length"]))
    difference = first_difference(yours.steps, reference.steps, probs)
    return Traced(the_plan, yours, reference, probs, difference), None


def learner_run(the_plan: Plan, process: Any,
                args: argparse.Namespace) -> tuple[Any, str | None]:
    """The learner's run of one case in the worker, or a one-line reason it has none."""
    from grader.grading.values.worker_errors import one_line
    from grader.learner.tools.trace_steps import Run, steps_of

    label = (tr("the reference's {method}()", method=the_plan.method) if args.reference
             else tr("your {method}()", method=the_plan.method))
    values = tuple(the_plan.args[name] for name in the_plan.names)
    outcome = process.call(the_plan.method, values, iterate=the_plan.iterate)
    if outcome.model_passes is None and outcome.error is None:
        from grader.sandbox.host.pool import SPAWN_VARIABLE

        if sys.platform.startswith("linux") and os.environ.get(SPAWN_VARIABLE) == "1":
            return None, tr("trace cannot see {label}'s model calls on the spawned path that "
                            "{variable}=1 forces: unset it", label=label,
                            variable=SPAWN_VARIABLE)
        return None, tr("trace cannot see {label}'s model calls here: that needs the grader "
                        "to serve them, which it does on Linux only", label=label)
    if outcome.error:
        return None, failed_on_case(label, the_plan.case_id, len(outcome.model_passes or []),
                                    one_line(outcome.error))
    result = outcome.result
    if the_plan.iterate and isinstance(result, list):
        result = [chunk for chunk, _count in result]
    text = as_text(result, the_plan.iterate)
    passes = [(tokens, past) for (tokens, _logits), (_new, past)
              in zip(outcome.model_passes, outcome.model_calls or [])]
    told = [logits for _tokens, logits in outcome.model_passes]
    return Run(steps_of(passes, text_ids(text, the_plan.args["int_to_char"]), told),
               text if text is not None else tr("({type}, not text)",
                                                type=type(result).__name__),
               "" if text is not None else type(result).__name__), None


def failed_on_case(label: str, case: str, passes: int, error: str) -> str:
    """A run that raised, in one line, with how many model calls it made first."""
    said = dict(label=label, case=case, passes=passes, error=error)
    if passes == 1:
        return tr("{label} failed on case [{case}] after {passes} model call: {error}", **said)
    if passes:
        return tr("{label} failed on case [{case}] after {passes} model calls: {error}",
                  **said)
    return tr("{label} failed on case [{case}]: {error}", **said)


def reference_run(the_plan: Plan) -> Any:
    import torch

    from grader.grading.subject.reference import fresh, load_reference
    from grader.learner.tools.trace_steps import RecordingModel, Run, steps_of

    reference = load_reference(the_plan.problem)
    model = RecordingModel(fresh(the_plan.args["model"]))
    values = [model if name == "model" else fresh(the_plan.args[name])
              for name in the_plan.names]
    try:
        with torch.no_grad():
            result = getattr(reference, the_plan.method)(*values)
            if the_plan.iterate:
                result = list(result)
    except Exception as exc:  # noqa: BLE001 - said in one line, never as a traceback
        # The reference answers every fixed case as it stands (its goldens say so):
        # only the values given on the command line can make it refuse.
        error = f"{type(exc).__name__}: {exc}"
        if the_plan.changed:
            raise UsageError(tr("the reference {method}() refuses case [{case}] with your "
                                "{changed}: {error}", method=the_plan.method,
                                case=the_plan.case_id, changed=joined(the_plan.changed),
                                error=error)) from None
        raise UsageError(tr("the reference {method}() refuses case [{case}]: {error}",
                            method=the_plan.method, case=the_plan.case_id,
                            error=error)) from None
    text = as_text(result, the_plan.iterate) or ""
    return Run(steps_of(model.passes, text_ids(text, the_plan.args["int_to_char"]),
                        model.told), text)


def as_text(result: Any, iterates: bool) -> str | None:
    """A method's answer as one text: a string, or the chunks a generator yielded. A
    list that a method returned is no text, even of characters: its grade fails it."""
    if isinstance(result, str):
        return result
    if iterates and isinstance(result, list) and all(isinstance(c, str) for c in result):
        return "".join(result)
    return None


def text_ids(text: str | None, int_to_char: dict[int, str]) -> list[int] | None:
    if text is None:
        return None
    from grader.model.artifacts import char_to_int

    lookup = char_to_int(int_to_char)
    if any(c not in lookup for c in text):
        return None
    return [lookup[c] for c in text]


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "trace",
        help=tr("your generation step by step beside the reference's, with the first "
                "step where they differ"),
        description=tr("Run your generation method (problems 06, 07, 13 to 16) and the "
                       "reference's on the problem's fixed cases, in the order grade checks "
                       "them, and show the first case where the runs differ (its id is the "
                       "[case-id] grade prints): step by step, the window the model saw, "
                       "the reference's top probabilities, both picks, and the first step "
                       "where they differ. Step N makes new character N, as grade counts "
                       "them.") + ("" if paths.in_a_copy() else " " + tr(
                           "Options may go before or after the prompt.")))
    p.add_argument("problem", metavar="PROBLEM",
                   help=tr("a problem that generates: slug, number, NN-slug or folder, e.g. "
                           "generate, 6, 06-generate"))
    p.add_argument("prompt", nargs="?", metavar="PROMPT",
                   help=tr("the text to continue, in place of each case's prompt (default: "
                           "the cases' own)"))
    p.add_argument("--case", metavar="ID",
                   help=tr("trace this fixed case only, e.g. crop-many-times (default: the "
                           "first case where your run differs, or else the first case)"))
    p.add_argument("--steps", type=int, metavar="N",
                   help=tr("how many new characters to generate (default: as many as the "
                           "case)"))
    p.add_argument("--seed", type=int,
                   help=tr("the seed, for a problem whose method takes one (default: the "
                           "case's)"))
    p.add_argument("--plot", metavar="FILE.png",
                   help=tr("also draw the distributions at the first differing step, with "
                           "matplotlib (default: no picture)"))
    p.add_argument("--submission", metavar="FILE",
                   help=tr("trace this file (default: your problems/NN-slug/solution.py)"))
    p.add_argument("--reference", action="store_true",
                   help=tr("trace the reference solution (it differs nowhere)"))
    # A copy traces its fixed cases as they are (grader/learner/tools/practice_trace.py).
    hidden_in_a_copy(p, ("prompt", "steps", "seed", "reference"))
    p.set_defaults(run=trace)
