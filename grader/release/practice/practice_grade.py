"""The practice grade: the fixed cases and drawn examples, judged against stored answers."""

from __future__ import annotations

import contextlib
import importlib.util
import sys
import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import torch
from gpt_kata_practice import codec, judge
from gpt_kata_practice.codec import stored
from gpt_kata_practice.program import ModelFileError
from gpt_kata_practice.weights import (
    KnownWeightsError,
    ParameterNamesError,
    load_known_weights,
)

from grader.grading.subject.inputs import answer_of, inputs_of
from grader.grading.values.failures import (
    changed_its_input,
    gave_two_outputs,
    returned_its_input,
)
from grader.locale import language, marked, tr, translated
from grader.reuse import learner_file
from grader.sandbox.wire.limits import reseed_global_generators
from grader.sandbox.wire.printed import CALL_OUTPUT_KEPT, CALL_OUTPUT_LIMIT, Capture, clip
from grader.wording import a_kind


@dataclass(frozen=True)
class Failure:
    """A case that failed, as data: what the grade says of it, the fix it offers and the
    mistake it names. Its text is made only where it is shown (cli.py): the JSON report
    carries what it says and the mistake, fix included, apart."""

    label: str  # "case 3", "drawn example 1", in the language in use
    says: str
    hint: str = ""
    mistake: dict[str, str] | None = None  # {id, name, hint}, the full grader's ids
    # Stored mistakes that all give this answer, none named yet: which one it names is
    # decided once every case is graded (`settle_names`).
    ties: tuple[dict[str, Any], ...] = ()
    got: str = ""  # what the learner's call gave, described as the kata's JSON report does
    # Every stored mistake that gives this answer, and what the failure said before one
    # was named: a mistake refuted by the learner's right answers elsewhere gives way to
    # another of them, or to none (`settle_names`).
    options: tuple[dict[str, Any], ...] = ()
    unnamed: str = ""


@dataclass
class Result:
    slug: str
    passed: int = 0
    failures: list[Failure] = field(default_factory=list)
    unavailable: str = ""  # the file cannot be graded: not written yet, or it does not load
    kind: str = ""  # why it is unavailable: "not-implemented" or "unavailable"
    not_practised: str = ""  # this copy has no practice cases for the problem
    # Methods of a problem practised in part, with why this copy has no cases for them:
    # {"stream_generate": "its checks judge how your code calls the model, ..."}
    parts_not_practised: dict[str, str] = field(default_factory=dict)
    # Each case checked, as the JSON report gives it: its label, "pass" or "fail", the
    # message and the mistake it names ({id, name, hint}, the ids the full grader uses).
    checks: list[dict[str, Any]] = field(default_factory=list)
    # The ids of the mistakes named so far, tried first on the next failure: one bug
    # gets one name on every case, as the kata's Diagnoses give it, where a case's
    # answer happens to be two mistakes' at once.
    named: list[str] = field(default_factory=list)
    # The mistakes stored for the cases answered right: each gives another answer there,
    # so a learner right there is not making it. The kata's diagnosis refutes a mistake
    # that fits one answer by chance on the same evidence (Diagnoses.seen).
    refuting: set[str] = field(default_factory=set)

    @property
    def ok(self) -> bool:
        return not (self.failures or self.unavailable or self.not_practised) and self.passed > 0


@dataclass(frozen=True)
class Reached:
    """A check as it begins, told to runs.py: its label, the method it calls, its
    inputs as Printing holds them (None for a refusal) and the result so far."""

    label: str
    method: str
    inputs: tuple[list[str], dict, str | None] | None
    result: Result


def as_shown(case: dict) -> dict:
    """Of a stored case, what its inputs are shown from: its answers stay here, not sent
    to runs.py with every check that begins."""
    return {key: case[key] for key in ("args", "shown") if key in case}


def load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"gpt_kata_yours_{path.parent.name}", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    reseed_global_generators()  # before the module's own code, as the kata's worker
    spec.loader.exec_module(module)
    return module


def where(exc: BaseException, path: Path) -> str:
    """Where in the learner's files the error was raised, as the kata's worker says it."""
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if shown := learner_file(frame.filename, str(path)):
            return f"{shown}:{frame.lineno}: "
    return ""


def call(part: dict[str, Any], module: ModuleType, args: tuple) -> Any:
    if part["module"]:
        # A module problem: build the class from the config, load the known weights, run it.
        config, weights, *inputs = args
        made = getattr(module, part["module"])(SimpleNamespace(**config))
        if not isinstance(made, torch.nn.Module):
            raise TypeError(f"{part['module']} is not a torch.nn.Module")
        load_known_weights(made, weights, part["module"])
        made.eval()
        with torch.no_grad():
            return made(*inputs)
    if part.get("harness"):
        # Code that is not one method call, driven as the instructor's grader drives it.
        from gpt_kata_practice import harnesses

        return getattr(harnesses, part["harness"])(module, *args)
    answer = getattr(module.Solution(), part["method"])(*args)
    return list(answer) if part["iterate"] else answer


def grade_problem(slug: str, path: Path,
                  running: Callable[[bool], None] = lambda _: None,
                  told: Callable[[str, Any], None] = lambda *_: None) -> Result:
    """The practice grade of the file at `path` as problem `slug`; `running(True)` is
    called as the learner's code begins to run (the file loaded, or a call) and
    `running(False)` as it ends (runs.py times the learner's code, not the grade's).

    `told("plan", [(label, drawn group or None), ...])` gives the checks to come, and
    `told("case", Reached)` each as it begins, with the result so far: where the code
    runs out of time, runs.py fails that check with its inputs, as the kata does, keeps
    those before it and says the rest were not run."""
    result = Result(slug)
    problem = stored()["problems"].get(slug)
    if problem is None:
        result.not_practised = stored()["not_practised"].get(
            slug, "this copy has no practice cases for it")
        return result
    parts = problem["parts"]  # one per method the checks call (bpe: train, encode, decode)
    result.parts_not_practised = dict(problem.get("not_practised", {}))
    wanted = parts[0]["module"] or "Solution"
    running(True)
    try:
        module = load(path)
        if not hasattr(module, wanted):
            result.unavailable = tr("{file} defines no class {name}", file=path.name,
                                    name=wanted)
            return result
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - the learner's to fix
        result.unavailable = f"{where(exc, path)}{type(exc).__name__}: {exc}"
        return result
    finally:
        running(False)
    checked, refusals, twice = [], [], []
    drawn: dict[str, str] = {}  # a drawn example's label -> its part's drawn examples'
    for part in parts:
        # With several methods, a label says whose case it is.
        named = f"{part['method']}() " if len(parts) > 1 else ""
        checked += [(named + tr("case {id}", id=case_id), part, case, case_id)
                    for case_id, case in part["cases"].items()]
        checked += [(named + tr("drawn example {n}", n=n), part, case, None)
                    for n, case in part["examples"].items()]
        drawn |= {named + tr("drawn example {n}", n=n): named + tr("drawn examples")
                  for n in part["examples"]}
        refusals += [(named + tr("refusal: {what}", what=refusal["what"]), part, refusal)
                     for refusal in part.get("refusals", {}).values()]
        if part.get("twice"):
            twice.append((named + tr("the same output twice"), part))
    told("plan", [(label, drawn.get(label)) for label, *_ in checked + twice + refusals])
    try:
        for label, part, case, case_id in checked:
            told("case", Reached(label, part["method"],
                                 (part["arg_names"], as_shown(case), case_id), result))
            grade_case(result, label, part, case, case_id, module, path, running, slug)
        for label, part in twice:
            case_id = part["twice"]
            told("case", Reached(label, part["method"], (
                part["arg_names"], as_shown(part["cases"][case_id]), case_id), result))
            grade_twice(result, label, part, module, path, running)
        for label, part, refusal in refusals:
            told("case", Reached(label, part["method"], None, result))
            args = codec.decode(refusal["args"])
            try:
                attempted = attempt(part, module, args, path, running)
            except WeightsRefused as why:
                fail(result, Failure(label, str(why)))
                continue
            refused(result, label, part, refusal, args, attempted)
    except Unavailable as why:
        result.unavailable, result.kind = why.args
    except ModelFileError as why:  # the copy's file, not the learner's code
        result.unavailable, result.kind = str(why), "unavailable"
    settle_names(result)
    for check in result.checks:  # counted as one, as the kata's drawn test is one check
        if check["name"] in drawn:
            check["drawn"] = drawn[check["name"]]
    return result


def grade_case(result: Result, label: str, part: dict[str, Any], case: dict[str, Any],
               case_id: str | None, module: ModuleType, path: Path,
               running: Callable[[bool], None], slug: str) -> None:
    """Judge one case (or drawn example, `case_id` None) into `result`."""
    judged(result, label, (part["arg_names"], case, case_id), lambda: case_failure(
        label, part, case, module, path, running, slug, result.named, result.refuting))


def grade_twice(result: Result, label: str, part: dict[str, Any], module: ModuleType,
                path: Path, running: Callable[[bool], None]) -> None:
    """The kata's check of the same output twice, on the same case: a module must give an
    output, and the same one when called again (a dropout left active does not)."""
    case = part["cases"][part["twice"]]
    judged(result, label, (part["arg_names"], case, part["twice"]),
           lambda: twice_failure(label, part, module, case["args"], path, running))


def judged(result: Result, label: str, inputs: tuple[list[str], dict, str | None],
           failure_of: Callable[[], Failure | None]) -> None:
    """One check into `result`, passed or failed as `failure_of` finds it. What the
    learner's code prints meanwhile, judged too, is shown under its failure, as the kata
    shows it, not poured onto the terminal above the report; and so are its inputs."""
    with Printing() as printed:
        printed.inputs = inputs
        try:
            failure = failure_of()
        except WeightsRefused as why:
            failure = Failure(label, str(why))
    if failure is None:
        result.passed += 1
        result.checks.append({"name": label, "status": "pass", "message": None,
                              "mistake": None})
    else:
        fail_printing(result, printed, failure)


def twice_failure(label: str, part: dict[str, Any], module: ModuleType, stored_args: Any,
                  path: Path, running: Callable[[bool], None]) -> Failure | None:
    outputs = []
    for _ in range(2):
        got, shown = attempt(part, module, codec.decode(stored_args), path, running)
        if got[0] == "error":
            return Failure(label, tr("{method}() raised {error}", method=part["method"],
                                     error=shown))
        if not isinstance(got[1], torch.Tensor):
            return Failure(label, tr("{what} should be {kind}, but it is {actual}",
                                     what=translated(marked("the module's output")),
                                     kind=a_kind("Tensor"),
                                     actual=a_kind(type(got[1]).__name__)))
        outputs.append(got[1])
    first, second = outputs
    if first.shape == second.shape and not torch.equal(first, second):
        return Failure(label, gave_two_outputs(part["twice"]))
    return None


def case_failure(label: str, part: dict[str, Any], case: dict[str, Any], module: ModuleType,
                 path: Path, running: Callable[[bool], None], slug: str,
                 named: list[str], refuting: set[str] | None = None) -> Failure | None:
    """What is wrong with the learner's answer to `case`, or None where it is right;
    where it is, the stored mistakes whose answer there is not the learner's join
    `refuting` (a mistake's answer the judge takes for right may be theirs)."""
    args = codec.decode(case["args"])
    models = watched(args) if part.get("calls") else []
    got, shown = attempt(part, module, args, path, running)
    want = codec.decode(case["expected"])
    changed = judge.changed_inputs(args, codec.decode(case["args"]), part["arg_names"])
    if changed:
        said = changed_its_input(part["method"], changed)
        return Failure(label, said.text, hint=said.hint)
    if part.get("returns_new") and got[0] == "value":
        shared = judge.input_returned(got[1], args, part["arg_names"])
        if shared:
            said = returned_its_input(part["method"], shared)
            return Failure(label, said.text, hint=said.hint)
    if got[0] == "value":  # a float dtype the instructor's judge takes too
        got = ("value", judge.in_stored_dtypes(got[1], want, part.get("any_float_dtype", [])))
    # A case on a model may have other right answers, where two picks tie.
    right = [want, *(codec.decode(v) for v in case.get("also_right", []))]
    if any(judge.same_outcome(got, ("value", r), part["judge"], args) for r in right):
        if refuting is not None:
            # A mistake made in several ways is stored once a way: one that gives the
            # learner's answer is enough.
            # A way that raises here is no evidence against it, as in the kata's diagnosis.
            stored = [(m["id"], codec.decode(m["outcome"])) for m in case["mistakes"]]
            theirs = {key for key, outcome in stored
                      if judge.is_mistake(got, outcome, part["judge"], args)}
            refuting |= ({key for key, outcome in stored if outcome[0] == "value"} - theirs
                         - set(case.get("right_ways", [])))
        left = codec.decode(case["generators"]) if "generators" in case else {}
        elsewhere = judge.generator_elsewhere(args, left, part["arg_names"])
        if elsewhere:
            return Failure(label, tr(
                "the right answer, but the generator `{name}` is left in another "
                "state than the reference leaves it in, so the next draw from it will "
                "differ.", name=elsewhere), hint=tr(
                "leave the generator where the statement says: put back with "
                "set_state(initial_state) where it asks for that, else moved on by "
                "exactly the draws it describes"))
        wrong = wrong_calls(part, args, models, slug) if models else None
        return None if wrong is None else Failure(label, *wrong)
    failure = naming(wrong_answer(label, part, got, shown, want), got, case["mistakes"],
                     part["judge"], args, named)
    # Where stored mistakes give the answer (one named, or several tied), the answer is
    # explained: calling the code again to diagnose it would only drop that name.
    if failure.mistake is None and not failure.ties and part.get("diagnosis"):
        failure = drawn_again(failure, part, module, path, running, slug)
    if failure.mistake is None and not failure.ties and part["module"]:
        failure = unrepeated(failure, part, module, case, got, want, path, running)
    return replace(failure, got=answer_of(got))


def wrong_answer(label: str, part: dict[str, Any], got: tuple[str, Any], shown: str,
                 want: Any) -> Failure:
    """The failure of an answer that is not right, in the words of its part's judge."""
    if got[0] == "error":
        message = tr("{method}() raised {error}", method=part["method"], error=shown)
    elif isinstance(want, float) and (isinstance(got[1], bool)
                                      or not isinstance(got[1], (float, int))):
        # A 0-d tensor of the right value reads as the number itself: say what it is.
        message = tr("{method}() returned {what}, not a float", method=part["method"],
                     what=a_kind(type(got[1]).__name__))
    elif (isinstance(got[1], torch.Tensor) and isinstance(want, torch.Tensor)
          and got[1].shape == want.shape and got[1].dtype != want.dtype
          and got[1].is_floating_point() and want.is_floating_point()):
        # Said as the kata's judges say it: the values may be right, the dtype is not.
        message = tr("{method}() returned a {dtype} tensor, expected {expected}, the dtype "
                     "of its input: keep the input's dtype", method=part["method"],
                     dtype=str(got[1].dtype).removeprefix("torch."),
                     expected=str(want.dtype).removeprefix("torch."))
    elif part["judge"] in ("training-steps", "training-loop"):
        message = f"{part['method']}(): {judge.training_difference(got[1], want, part['judge'])}"
    elif isinstance(want, str) and not isinstance(got[1], str):
        # A list of characters beside the text it spells reads as right: say what it is,
        # as the kata's judges say it.
        message = tr("{what} should be {kind}, but it is {actual}",
                     what=tr("{method}()'s result", method=part["method"]),
                     kind=a_kind("str"), actual=a_kind(type(got[1]).__name__))
    elif (isinstance(want, torch.Tensor) and judge.describe(got[1]) == judge.describe(want)
          and (differs := judge.difference(got[1], want))):
        # Of the shape and dtype expected: where its values differ is all there is to say.
        message = tr("{method}() returned {what}, as expected, but{difference}",
                     method=part["method"], what=judge.describe(want),
                     difference=differs.lstrip(";；"))
    else:
        message = tr("{method}() returned {got}; expected {expected}{difference}",
                     method=part["method"], got=judge.describe(got[1]),
                     expected=judge.describe(want), difference=judge.difference(got[1], want))
    return Failure(label, message)


class Unavailable(Exception):
    """The file cannot be graded further: (what the grade says, its kind)."""


class WeightsRefused(Exception):
    """The module cannot take this case's known weights (a parameter of another shape):
    the case fails with what was expected and found, as in the kata, and the next is
    graded, where another config may fit (as many key heads as query heads)."""


def attempt(part: dict[str, Any], module: ModuleType, args: tuple, path: Path,
            running: Callable[[bool], None]) -> tuple[tuple[str, Any], str]:
    """The outcome of one call, ("value", answer) or ("error", "Type: message"), and an
    error as the grade shows it (where in the file it was raised); Unavailable where the
    file is not written yet or its module takes no known weights."""
    running(True)
    try:
        return ("value", call(part, module, args)), ""
    except NotImplementedError as exc:
        if where(exc, path):  # the starter's, not torch's for a module with no forward
            raise Unavailable("not implemented yet (the starter still raises "
                              "NotImplementedError)", "not-implemented") from None
        error = f"{type(exc).__name__}: {exc}"
        return ("error", error), error
    except ParameterNamesError as exc:  # every case loads by the same names: all fail
        raise Unavailable(str(exc), "unavailable") from None
    except KnownWeightsError as exc:  # of a shape this case's weights do not have
        raise WeightsRefused(str(exc)) from None
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - a wrong answer, to compare
        error = f"{type(exc).__name__}: {exc}"
        return ("error", error), f"{where(exc, path)}{error}"
    finally:
        running(False)


def refused(result: Result, label: str, part: dict[str, Any], refusal: dict[str, Any],
            args: tuple, attempted: tuple[tuple[str, Any], str]) -> None:
    """Judge a call the reference refuses as the instructor's grade does: it must raise
    ValueError, with a message."""
    (kind, answer), shown = attempted
    what = refusal["what"]
    if kind == "value":
        fail(result, naming(Failure(label, tr(
            "{what} returned a value instead of raising ValueError: {why}", what=what,
            why=translated(refusal["why"]))), ("value", answer), refusal["mistakes"],
            part["judge"], args, result.named))
    elif not answer.startswith("ValueError:"):
        fail(result, Failure(label, tr("{what} should raise {kind}; instead {raised}",
                                       what=what, kind="ValueError",
                                       raised=tr("{method}() raised {error}",
                                                 method=part["method"], error=shown))))
    elif not answer.removeprefix("ValueError:").strip():
        fail(result, Failure(label, tr("{what} raised {kind} without a message; say what is "
                                       "wrong", what=what, kind="ValueError")))
    else:
        result.passed += 1
        result.checks.append({"name": label, "status": "pass", "message": None,
                              "mistake": None})


def watched(args: tuple) -> list[codec.ExportedGPT]:
    """The models among a case's arguments, each now noting its calls afresh (a stored
    model is shared by every case that runs it)."""
    models = [a for a in args if isinstance(a, codec.ExportedGPT)]
    for model in models:
        model.calls = []
    return models


def wrong_calls(part: dict[str, Any], args: tuple, models: list[codec.ExportedGPT],
                slug: str) -> tuple[str, str, dict[str, str] | None] | None:
    """What is wrong with how the code called its model, by the part's rule (the one
    problem 15's check judges by), as a failure's message, fix and mistake; None if
    nothing is."""
    from grader.grading.judging.cached_steps import (
        expect_no_calls_for_no_text,
        expect_one_token_per_step,
    )
    from grader.grading.values.failures import GradeFailure

    named = dict(zip(part["arg_names"], args))
    calls, models[0].calls = models[0].calls or [], None
    try:
        if part["calls"] == "no-calls-for-no-text":
            expect_no_calls_for_no_text(part["method"], named["new_chars"], calls)
        else:
            expect_one_token_per_step(calls, named["context"].shape[1], named["new_chars"],
                                      named["context_length"])
    except GradeFailure as failure:
        pieces = failure.diagnosis.pieces
        mistake = next((p.mistake for p in pieces if p.mistake), None)
        named_mistake = None if mistake is None else mistake.named(slug)
        return (failure.diagnosis.says, next((p.hint for p in pieces if p.hint), ""),
                None if named_mistake is None else {"id": named_mistake.id,
                                                    "name": named_mistake.name,
                                                    "hint": named_mistake.hint})
    return None


def drawn_again(failure: Failure, part: dict[str, Any], module: ModuleType, path: Path,
                running: Callable[[bool], None], slug: str) -> Failure:
    """`failure`, with what the kata's diagnosis of the part says of the learner's code
    called again (sample's draws on a probe, generator_draws.py, the kata's own code):
    no stored answer shows a draw from PyTorch's global random state."""
    from grader.grading.judging.generator_draws import how_drawn

    def again(*args: Any) -> tuple[str, Any]:
        return attempt(part, module, args, path, running)[0]

    diagnosis = how_drawn(again) if part["diagnosis"] == "generator-draws" else ""
    if not diagnosis or isinstance(diagnosis, str):
        return failure
    mistake = diagnosis.mistake
    named = None if mistake is None else mistake.named(slug)
    return Failure(failure.label, failure.says + diagnosis.says,
                   next(iter(diagnosis.hints), ""),
                   None if named is None else {"id": named.id, "name": named.name,
                                               "hint": named.hint})


def naming(failure: Failure, got: tuple[str, Any], mistakes: list[dict[str, Any]], rule: str,
           args: tuple, named: list[str] | None = None) -> Failure:
    """`failure`, saying which stored mistake gives the learner's outcome, if one does:
    one of those already `named` for this file first (it is noted there). Where several
    give it and none is named yet, it carries them all, to be named once every case is
    graded: the first in the list was named, where the other cases showed another
    (problem 06's first case named the first position's logits, the next two softmax
    over the batch, which the kata named on all three)."""
    named = named if named is not None else []
    giving = [mistake for mistake in sorted(mistakes, key=lambda m: m["id"] not in named)
              if judge.is_mistake(got, codec.decode(mistake["outcome"]), rule, args)]
    failure = replace(failure, options=tuple(giving), unnamed=failure.says)
    if len(giving) > 1 and giving[0]["id"] not in named:
        return replace(failure, ties=tuple(giving))
    return named_as(failure, giving[0], named) if giving else failure


def named_as(failure: Failure, mistake: dict[str, Any], named: list[str]) -> Failure:
    """`failure`, saying it is what `mistake` gives, noted in `named`."""
    if mistake["id"] not in named:
        named.append(mistake["id"])
    said = tr("This is what happens when you {name}.", name=translated(mistake["name"]))
    return Failure(failure.label, f"{failure.unnamed or failure.says}\n{said}",
                   mistake["hint"], {k: mistake[k] for k in ("id", "name", "hint")},
                   got=failure.got, options=failure.options,
                   unnamed=failure.unnamed or failure.says)


def settle_names(result: Result) -> None:
    """Name each failure once every case is graded. A mistake the learner's right
    answers refute (`Result.refuting`) is not theirs: another that gives the answer is
    named in its place, or none. Of several, one the other cases named, else the one
    that explains the most of these failures (the first, where that ties too)."""
    refuted = result.refuting
    result.named[:] = [name for name in result.named if name not in refuted]
    for failure in list(result.failures):
        if failure.options and failure.mistake is not None and failure.mistake["id"] in refuted:
            # Named by a stored answer (naming): another that gives it, or none, in its
            # place. A mistake named otherwise (how the model was called, the draws of a
            # probe) was named on evidence of its own, and stands.
            standing = tuple(m for m in failure.options if m["id"] not in refuted)
            plain = Failure(failure.label, failure.unnamed, got=failure.got)
            renamed = replace(plain, ties=standing) if standing else plain
            renamed_in(result, failure, renamed)
        elif failure.ties:
            standing = tuple(m for m in failure.ties if m["id"] not in refuted)
            if len(standing) < len(failure.ties):
                plain = Failure(failure.label, failure.unnamed, got=failure.got)
                renamed_in(result, failure, replace(plain, ties=standing))
    tied = [failure for failure in result.failures if failure.ties]
    counts = Counter(mistake["id"] for failure in tied for mistake in failure.ties)
    for failure in tied:
        chosen = max(failure.ties, key=lambda m: (m["id"] in result.named, counts[m["id"]]))
        renamed_in(result, failure, named_as(failure, chosen, result.named))


def renamed_in(result: Result, failure: Failure, renamed: Failure) -> None:
    """`failure` in `result` said as `renamed` says it, in the failures and the checks."""
    result.failures[result.failures.index(failure)] = renamed
    for check in result.checks:
        if check["name"] == failure.label and check["status"] == "fail":
            if check.get("alike") == failure.says:  # a fixed case's: its message
                check["alike"] = renamed.says
            check.update(message=with_inputs(renamed.says, check.get("inputs", "")),
                         mistake=renamed.mistake)


def unrepeated(failure: Failure, part: dict[str, Any], module: ModuleType,
               case: dict[str, Any], got: tuple[str, Any], want: Any, path: Path,
               running: Callable[[bool], None]) -> Failure:
    """`failure`, saying that the module gave another output when called again on the
    same case, where it does: a dropout left active. The kata's grade says so on each
    such case too, as well as in its check of the same output twice (grade_twice)."""
    if got[0] != "value" or not isinstance(got[1], torch.Tensor):
        return failure
    again, _ = attempt(part, module, codec.decode(case["args"]), path, running)
    if again[0] != "value":
        return failure
    second = judge.in_stored_dtypes(again[1], want, part.get("any_float_dtype", []))
    if not isinstance(second, torch.Tensor) or second.shape != got[1].shape:
        return failure
    if torch.equal(judge.nan_as_zero(second), judge.nan_as_zero(got[1])):
        return failure
    said = tr("Called again with the same weights and input, your module gave another "
              "output: is a dropout left active?")
    return Failure(failure.label, f"{failure.says}\n{said}", tr(
        "the grader calls it in evaluation mode (module.eval()), where nn.Dropout does "
        "nothing, but F.dropout(x, p) drops unless given training=self.training: use "
        "nn.Dropout, or leave dropout out"))


def fail(result: Result, failure: Failure) -> None:
    fail_printing(result, "", failure)


def fail_printing(result: Result, printed: Printing | str, failure: Failure) -> None:
    """Record `failure`, with what its case's calls `printed` and the case's inputs."""
    result.failures.append(failure)
    output, arguments, shown, alike = "", None, "", failure.says
    if isinstance(printed, Printing):
        output = printed.output()
        arguments, shown = printed.shown_inputs()
        if printed.inputs is not None and printed.inputs[2] is None:
            # A part's failing drawn examples are shown one, as the kata shows its drawn
            # test's one smallest failing input; the JSON report keeps each.
            alike = failure.label.rsplit(" ", 1)[0]
    result.checks.append({"name": failure.label, "status": "fail",
                          "message": with_inputs(failure.says, shown), "alike": alike,
                          "mistake": failure.mistake, "output": output,
                          "arguments": arguments, "inputs": shown, "got": failure.got or None})


def timed_out(reached: Reached, plan: list[tuple[str, str | None]], said: str,
              kind: str) -> Result:
    """The result of a problem whose code gave no answer in time (`said` why) in the
    check `reached`, as the kata gives it: the checks before it as they were judged,
    that one failed with its inputs, and each after it not run, all of `kind` (STUCK,
    or BUSY where the busy machine may be the cause)."""
    result = reached.result
    says = f"{reached.method}(): {said}"
    arguments, shown = shown_inputs(reached.inputs)
    labels = [label for label, _ in plan]
    after = labels[labels.index(reached.label) + 1:] if reached.label in labels else []
    not_run = tr("not run: {reason}, in an earlier check of this problem", reason=says)
    for label, message, inputs in [(reached.label, says, shown),
                                   *((label, not_run, "") for label in after)]:
        result.failures.append(Failure(label, message))
        result.checks.append({"name": label, "status": "fail",
                              "message": with_inputs(message, inputs), "alike": message,
                              "mistake": None, "output": "", "inputs": inputs, "got": None,
                              "arguments": arguments if label == reached.label else None,
                              "kind": kind})
    groups = dict(plan)
    for check in result.checks:  # as grade_problem groups them once every case is graded
        if groups.get(check["name"]):
            check["drawn"] = groups[check["name"]]
    return result


def with_inputs(says: str, shown: str) -> str:
    """A failure's message with its case's inputs under it, as the kata's gives them."""
    return f"{says}\n{shown}" if shown else says


class Printing(contextlib.AbstractContextManager):
    """What the learner's code prints meanwhile, held as the kata's worker holds a call's
    output (at most CALL_OUTPUT_KEPT characters, the lines past them counted)."""

    def __init__(self) -> None:
        self.captured = Capture(CALL_OUTPUT_KEPT)
        self.redirect = contextlib.redirect_stdout(self.captured)
        # The case's argument names, the case as stored (its arguments as they were
        # before the call, which may change them) and its id (None for a drawn example).
        self.inputs: tuple[list[str], dict, str | None] | None = None

    def __enter__(self) -> Printing:
        self.redirect.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.redirect.__exit__(*exc)

    def output(self) -> Any:
        return clip(self.captured.printed(), CALL_OUTPUT_LIMIT)

    def shown_inputs(self) -> tuple[dict[str, str] | None, str]:
        return shown_inputs(self.inputs)


def shown_inputs(inputs: tuple[list[str], dict, str | None] | None,
                 ) -> tuple[dict[str, str] | None, str]:
    """A case's inputs (its argument names, the case as stored and its id) as the kata's
    failures give them: each by name, for the JSON report, and under their heading,
    for the terminal, in the lines the kata's check wrote for it where it writes its
    own (clip-grad-norm's gradients, say). A copy's drawn example is one of those it
    stores, not one shrunk: it is named as a case is."""
    if inputs is None:
        return None, ""
    names, case, case_id = inputs
    try:  # the models as the specs they were made from: "the shipped model"
        arguments = inputs_of(dict(zip(names, codec.decode_specs(case["args"]))))
    except Exception:  # noqa: BLE001 - a failure's inputs must not fail the grade
        return None, ""
    heading = (tr("the inputs of case {case}:", case=case_id) if case_id
               else tr("its inputs:"))
    lines = (case.get("shown", {}).get(language())
             or [f"{name}: {what}" for name, what in arguments.items()])
    return arguments, "\n".join([heading, *(f"  {line}" for line in lines)])
