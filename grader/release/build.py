"""Write the learners' copy: statements, starters, data, and a practice grader, no answers.

What is copied is listed here, file by file; nothing is copied by walking a
folder, so no reference code can slip in with a new file. The practice cases
are made from the check modules the instructor's grade runs: each fixed case's
arguments, its golden (the reference's answer) and the answer of each known
mistake that differs from it; likewise a few examples drawn by the checks' own
draw functions (examples.py), with the reference's answers; the other answers
float rounding gives where picks tie (ties.py); and the models they run, as
exported programs (models.py). Every file is written from sorted, fixed data, so
two releases of one commit are the same byte for byte, whatever instructor's
seed is set.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from grader import paths
from grader.grading.contracts.declaring import load_check_module
from grader.grading.subject.inputs import describe_inputs
from grader.locale import CATALOGS, ENGLISH, LANGUAGES, speaking, tr
from grader.model.spec import ModelSpec
from grader.registry import Problem, problems
from grader.release import answers, examples, float_dtypes, sources, ties
from grader.release.models import Models, example_programs, modern_outputs
from grader.release.practice.codec import model_name
from grader.release.traces import stored_traces

PRACTICE_SOURCE = Path(__file__).with_name("practice")
TEMPLATES = Path(__file__).with_name("templates")
PACKAGE = "gpt_kata_practice"
# The data a learner's code and the statements use. Not goldens.json nor
# manifest.json: the practice cases carry what is needed of the goldens.
DATA_FILES = ("corpus.txt", "vocab.json", "config.json", "model.safetensors",
              "llama-config.json", "llama.safetensors")  # the modern model: 35, talk
# The shipped GPT, as a check names it (grader/grading/subject/cases.py's SHIPPED).
SHIPPED_SPEC = ModelSpec("shipped")
# The kata's own package as the copy holds it (grader/), its files as they are: the
# learner's runtime, which holds no answer. Its commands (list, grade, watch, hint,
# reset; talk, trace and train --yours through the learner's own code), the report
# and its statuses, grader.play and grader.reuse for the statements' examples and a
# later problem's solution_of, check() for a class in a notebook, and the language
# module; grading there is the stored answers' (grader/learner/practice.py), and the
# shipped GPT the exported program they run.
# tests/test_learner_runtime.py holds this list to what those modules import.
RUNTIME_FILES = (
    "__init__.py", "__main__.py", "paths.py", "play.py", "registry.py", "reuse.py",
    "wording.py", "locale/__init__.py", "locale/fonts.py", "locale/parsers.py",
    "model/__init__.py", "model/artifacts.py", "model/config.py", "model/parts.py",
    "model/runs.py", "model/spec.py",
    "cli/__init__.py", "cli/entry.py", "cli/main.py",
    "learner/__init__.py", "learner/commands.py", "learner/errors.py", "learner/grade.py",
    "learner/notebook.py", "learner/options.py", "learner/output.py", "learner/practice.py",
    "learner/shown.py",
    "learner/status.py", "learner/watch.py",
    "learner/training/__init__.py", "learner/training/command.py",
    "learner/training/practice_train.py",
    "learner/tools/__init__.py", "learner/tools/practice_talk.py",
    "learner/tools/practice_trace.py",
    "learner/tools/talk_text.py", "learner/tools/trace.py", "learner/tools/trace_plan.py",
    "learner/tools/trace_plot.py", "learner/tools/trace_steps.py", "learner/tools/trace_view.py",
    "grading/__init__.py",
    "grading/values/__init__.py", "grading/values/failures.py", "grading/values/sanitise.py",
    "grading/values/tolerances.py",
    "grading/subject/__init__.py", "grading/subject/cases.py",
    "grading/subject/inputs.py",
    "grading/judging/__init__.py", "grading/judging/cached_steps.py",
    "grading/judging/refusals.py",
    "grading/judging/generator_draws.py",
    "grading/judging/schedule_rates.py", "grading/judging/written_by_hand.py",
    # SIGTERM taken as a Ctrl-C, and remembered (grader/learner/output.py).
    "grading/engine/__init__.py", "grading/engine/ctrl_c.py",
    "reports/__init__.py", "reports/junit.py", "reports/late.py", "reports/provenance.py",
    "reports/report.py", "reports/results.py", "reports/scoring.py", "reports/written.py",
    "sandbox/__init__.py", "sandbox/host/__init__.py", "sandbox/host/slow_or_endless.py",
    "sandbox/wire/__init__.py", "sandbox/wire/encoding.py", "sandbox/wire/limits.py",
    "sandbox/wire/printed.py",
)
PRACTICE_FILES = ("__init__.py", "codec.py", "practice_grade.py", "judge.py", "program.py",
                  "runs.py", "shipped.py", "training.py")

WITNESSED = "its checks judge how your code calls the model, which stored answers cannot show"
# The rules by which a copy judges how a learner's code calls its model
# (practice/practice_grade.py).
CALL_RULES = ("one-token-per-step", "no-calls-for-no-text")
# The diagnoses a copy makes by calling the learner's code again, where no stored answer
# can name a mistake (practice/practice_grade.py): a check module declares one as
# PRACTICE_DIAGNOSIS, and both graders run the same runtime code for it.
AGAIN_DIAGNOSES = ("generator-draws",)
HARNESS = ("its checks drive your code with code of the grader's own that this copy cannot "
           "hold (a model it builds and trains)")
NEEDS_MODEL = ("some of its cases run a model this copy cannot hold (a trained run, or your own "
               "GPT)")
NO_CONTRACT = "its checks declare no contract of cases the copy could store"
CANNOT_STORE = "some of its cases hold values this copy cannot store"


# The drivers `talk` runs the learner's code through in a copy (learner/tools/practice_talk.py).
TALK_HARNESSES = {"word_streamer"}


class ReleaseError(Exception):
    """The copy cannot be written where asked."""


def write_release(out: Path, only: frozenset[str] | None = None,
                  progress: Callable[[str], None] | None = None,
                  answer_hints: bool = True) -> list[Path]:
    """Write the learners' copy into `out` (new or empty); the files written, sorted.
    `only` (slugs) leaves every other problem without practice cases: a smaller copy
    for a test of a few problems. Without `answer_hints`, the copy is a graded class's:
    no problem's last hint, no mistake's fix (answers.py). `progress` is told each
    step as it starts (writing the copy takes minutes)."""
    say = progress or (lambda _: None)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ReleaseError(tr("{out} is not an empty folder: the copy is written afresh",
                              out=out))
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []

    def read(path: Path) -> bytes:
        try:
            return path.read_bytes()
        except FileNotFoundError:
            raise ReleaseError(tr("{path} is missing: every problem in the registry needs "
                                  "its statement and starter before a release",
                                  path=path)) from None

    def put(relative: str, data: bytes) -> None:
        target = out / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        written.append(target)

    put("README.md", (TEMPLATES / "README.md").read_bytes())
    put("pyproject.toml", (TEMPLATES / "pyproject.toml").read_bytes())
    put(".gitignore", (TEMPLATES / "gitignore").read_bytes())
    left_out: set[str] = set()  # the English of the hints a graded class's copy leaves out
    if answer_hints:
        put("problems/registry.toml", paths.REGISTRY.read_bytes())
    else:
        registry, left_out = answers.registry_without_answers(
            paths.REGISTRY.read_text(encoding="utf-8"))
        put("problems/registry.toml", registry)
    for problem in problems():
        put(f"problems/{problem.folder}/README.md",
            read(paths.ROOT / "problems" / problem.folder / "README.md"))
        starter = read(paths.STARTERS / problem.folder / "solution.py")
        put(f"problems/{problem.folder}/solution.py", starter)
        put(f"data/starters/{problem.folder}/solution.py", starter)  # what reset puts back
        for language in LANGUAGES:  # the statement in each language the kata speaks
            if language != ENGLISH:
                put(f"problems/{problem.folder}/README.{language}.md",
                    read(paths.ROOT / "problems" / problem.folder / f"README.{language}.md"))
    for name in DATA_FILES:
        put(f"data/{name}", (paths.DATA / name).read_bytes())
    for name in PRACTICE_FILES:
        put(f"{PACKAGE}/{name}", (PRACTICE_SOURCE / name).read_bytes())
    # The learner's runtime that holds no answer, the kata's own files as they are: a
    # later problem's `from grader.reuse import solution_of` works in the copy too.
    for name in RUNTIME_FILES:
        source = (paths.PACKAGE / name).read_bytes()
        put(f"grader/{name}", source if answer_hints else answers.without_fixes(source))
    # The language's catalogs: the copy speaks the kata's words, in its languages.
    # Written once the cases' fixes are known; not the labels of the site's pictures
    # (pictures.po), which only the site's build reads.
    catalogs = sorted(p for p in CATALOGS.glob("*/*.po") if p.stem != "pictures")
    # Written from the grader's own definitions: one source for both graders.
    put(f"{PACKAGE}/weights.py", sources.weights_module())
    models = Models()
    models.exported(SHIPPED_SPEC)  # the copy's tools run the shipped GPT even where no case does,
    models.cached.add(model_name(SHIPPED_SPEC))  # and problem 15's example its KV cache
    from grader.play import TRAINED_IN_EXAMPLES

    for config, seed in TRAINED_IN_EXAMPLES:  # and the statements' examples train their own
        models.record_trained(config, seed)
    cases = practice_cases(models, only, say)
    say(tr("the reference's runs that trace shows"))
    cases["traces"] = stored_traces(models, only)
    # The models those runs met too, each with the context length its program reads.
    cases["models"] = models.entries()
    put(f"{PACKAGE}/harnesses.py", sources.harnesses_module(
        sorted({part["harness"] for p in cases["problems"].values() for part in p["parts"]
                if part["harness"]} | TALK_HARNESSES)))
    if not answer_hints:
        left_out |= answers.cases_without_fixes(cases) | answers.every_fix()
    put(f"{PACKAGE}/cases.json", cases_json(cases).encode("utf-8"))
    for catalog in catalogs:
        text = catalog.read_bytes()
        put(f"grader/locale/{catalog.parent.name}/{catalog.name}",
            answers.catalog_without(text, left_out | answers.instructors_texts(text)))
    say(tr("exporting the {count} models the cases and the statements' examples run",
           count=len(models.specs) + len(models.trained)))
    for name, program in {**models.programs(), **example_programs()}.items():
        put(f"{PACKAGE}/models/{name}.safetensors", program)
    put(f"{PACKAGE}/modern.json", modern_json())
    return sorted(written)


def modern_json() -> bytes:
    """The shipped modern model's logits on the prompts problem 35's example gives it,
    for the copy's stand-in (practice/shipped.py): the copy holds no modern model."""
    from grader.play import MODERN_PROMPTS, encode
    from grader.release.practice import codec

    inputs = [encode(prompt) for prompt in MODERN_PROMPTS]
    stored = {"inputs": inputs, "outputs": modern_outputs(inputs)}
    return (json.dumps(codec.encode(stored), sort_keys=True) + "\n").encode("utf-8")


def cases_json(cases: dict[str, Any]) -> str:
    return json.dumps(cases, ensure_ascii=True, separators=(",", ":"), allow_nan=True) + "\n"


def practice_cases(models: Models, only: frozenset[str] | None,
                   progress: Callable[[str], None]) -> dict[str, Any]:
    """Every problem's stored cases, or why it has none, in the registry's order; the
    models they run are added to `models`. Computed on one thread: another count sums
    a tensor's entries in another order, and its last bits would tell machines apart."""
    import torch

    practised: dict[str, Any] = {}
    not_practised: dict[str, str] = {}
    chosen = [p for p in problems() if only is None or p.slug in only]
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        for i, problem in enumerate(chosen, start=1):
            progress(tr("practice cases {i}/{count}: {folder}", i=i, count=len(chosen),
                        folder=problem.folder))
            met = Models()
            try:
                practised[problem.slug] = problem_cases(problem, met)
            except NotPractised as why:
                not_practised[problem.slug] = str(why)
                continue
            models.merge(met)
        return {"problems": practised, "not_practised": not_practised,
                "models": models.entries(), "trainable": models.trainable()}
    finally:
        torch.set_num_threads(threads)


class NotPractised(Exception):
    """A problem whose fixed cases this copy cannot judge; the message says why."""


def contracts_of(module: Any) -> list[Any]:
    """The contracts a check module grades by: CONTRACT first, then any other of its
    own (bpe's encode and decode), in the order the module defines them."""
    from grader.grading.contracts.contract import Contract

    first = getattr(module, "CONTRACT", None)
    if not isinstance(first, Contract):
        raise NotPractised(NO_CONTRACT)
    found = [first]
    for value in vars(module).values():
        if isinstance(value, Contract) and all(value is not c for c in found):
            found.append(value)
    return found


def practice_contract(module: Any, contract: Any) -> Any:
    """The contract, or NotPractised saying in one line why the copy cannot judge its
    cases from stored answers. A contract whose checks judge the model's calls is
    practised where its module says by which rule the copy judges them too
    (PRACTICE_CALLS: kv-cache's one token a step; generate's and greedy's no call for
    no text)."""
    if contract.witness_model_calls and getattr(module, "PRACTICE_CALLS", None) not in CALL_RULES:
        raise NotPractised(WITNESSED)
    if contract.harness:
        try:  # the copy calls the code through the same driver, written from its source
            sources.harness_source([contract.harness])
        except sources.SourceError:
            raise NotPractised(HARNESS) from None
    return contract


def reference_call(contract: Any, reference: Any) -> Any:
    """The reference's answer to a set of arguments, called as the learner's code is:
    through the check's harness if it has one."""
    import sys

    from grader.grading.subject.reference import run_harness

    if contract.harness:
        module = sys.modules[type(reference).__module__]
        return lambda *args: run_harness(contract.called, module, args)
    return getattr(reference, contract.method)


def practice_rule(module: Any, contract: Any) -> str:
    """The practice judge's rule for the problem's answers (practice/judge.py): the one
    its check module declares (PRACTICE_RULE, where its judge allows a rounding error
    of its own), else as its contract judges. Filters keep tied tokens in any order;
    a module's outputs carry rounding errors of the tensor's scale; a streamer may
    pass on what one call completes in one callback or several."""
    from grader.checks.stream.stream_word_streamer import same_passed_on
    from grader.grading.judging.filtered_logits import same_filtering
    from grader.grading.values.equality import same_activations
    from grader.release.practice.judge import RULES

    declared = getattr(module, "PRACTICE_RULE", None)
    if declared is not None:
        if declared not in RULES:
            raise ReleaseError(f"{module.__name__} declares PRACTICE_RULE = {declared!r}, "
                               f"which is not one of the practice judge's: {sorted(RULES)}")
        return declared
    return ("filtering" if contract.matches is same_filtering
            else "passed-on" if contract.matches is same_passed_on
            else "activations" if contract.same_as_golden is same_activations else "")


def problem_cases(problem: Problem, models: Models) -> dict[str, Any]:
    """The cases of each of the problem's contracts that the copy can judge (`parts`):
    NotPractised, saying why of the first, if none can be; one that cannot is left to
    the instructor's grade, and `not_practised` says why (stream's stream_generate(),
    judged by how it calls the model, beside its WordStreamer, practised here)."""
    module = load_check_module(problem)
    contracts = contracts_of(module)
    parts = []
    left: dict[str, str] = {}
    for contract in contracts:
        met = Models()
        try:
            parts.append(contract_cases(problem, module, practice_contract(module, contract),
                                        met))
        except NotPractised as why:
            left[contract.method] = str(why)
            continue
        models.merge(met)
    if not parts:
        raise NotPractised(left[contracts[0].method])
    return {"parts": parts, **({"not_practised": left} if left else {})}


def live_answer(contract: Any, method: Any, args: tuple) -> tuple[tuple[str, Any], Any]:
    """The reference's outcome on `args`, a list for a method that yields, and where it
    leaves each generator it is given, by argument position (put back, as sample's; moved
    on by its draws, as batches'), stored so that the practice grade holds the learner's to
    it as the kata's judges do; None where none is given."""
    import torch

    from grader.grading.subject.reference import fresh_args
    from grader.grading.values.equality import outcome_of
    from grader.release.practice import codec

    ran = fresh_args(args)
    with torch.no_grad():
        answer = outcome_of(method, *ran)
    if answer[0] == "value" and contract.iterate:
        answer = ("value", list(answer[1]))
    generators = {i: a for i, a in enumerate(ran) if isinstance(a, torch.Generator)}
    return answer, codec.encode(generators) if generators else None


def contract_cases(problem: Problem, module: Any, contract: Any,
                   models: Models) -> dict[str, Any]:
    """The contract's fixed cases and a few drawn examples, each with the reference's
    answer on this machine (a fixed case's golden where that is not a value), with the
    other right answers and the known mistakes'."""
    from grader.grading.subject.reference import load_reference
    from grader.model import artifacts
    from grader.sandbox.wire.encoding import decode

    reference = load_reference(problem)  # the mistakes' helpers may look it up by name
    rule = practice_rule(module, contract)
    method = reference_call(contract, reference)
    goldens = artifacts.load_goldens()[problem.slug] if contract.goldens else {}

    first: list[tuple[tuple, Any]] = []  # the first case's arguments and answer

    def one(args: tuple, golden: Any = None, into: Models = models,
            drawn: bool = False) -> dict[str, Any] | None:
        """The case stored, or None where the reference refuses its arguments (the
        refusal checks are live only); the models it met are added to `into`."""
        met = Models()
        with met.recording_trained():  # the GPTs a training driver builds for it
            # The reference's answer on this machine, as the full grade judges: a golden
            # was made on the maintainer's CPU, and another CPU's kernels (AVX-512 for
            # AVX2) move the last bits of the model's logits that the stored arguments
            # hold, so the copy would fail its own references. The golden stands in only
            # where the reference's answer now is not a value.
            answer, left = live_answer(contract, method, args)
            if answer[0] == "value":
                golden = (answer[1],)
            elif golden is None:
                return None
            case = stored_case(problem, contract, reference, args, golden[0], rule, met,
                               drawn)
            if left:
                case["generators"] = left
        into.merge(met)
        if not first:
            first.append((args, golden[0]))
        return case

    stored = {}
    # Built anew, on this one thread: the check's own (case_args) may have been built on
    # more, and a case made by a forward pass (rope's heads of the modern model) then
    # differs in its last bits, so that two copies would too.
    for case_id, args in contract.cases().items():
        case = one(args, (decode(goldens[case_id]),) if contract.goldens else None)
        if case is not None:
            stored[case_id] = case
    candidates: list[tuple[dict[str, Any], Models]] = []
    for args in examples.drawn_examples(module, contract):
        met = Models()
        try:
            case = one(args, into=met, drawn=True)
        except NotPractised:
            continue  # an example whose values the copy cannot store; the cases still can
        if case is not None:
            candidates.append((case, met))
    drawn: dict[str, Any] = {}
    for case, met in examples.most_telling(candidates, lambda c: c[0]["mistakes"]):
        models.merge(met)  # only a kept example's models are exported
        drawn[str(len(drawn) + 1)] = case
    refusals = {refusal_id: stored_refusal(problem, contract, method, refusal, rule, models)
                for refusal_id, refusal in contract.refused.items()}
    calls = getattr(module, "PRACTICE_CALLS", "")
    if calls and calls not in CALL_RULES:
        raise ReleaseError(f"{module.__name__} declares PRACTICE_CALLS = {calls!r}, which "
                           f"is not one of the copy's: {list(CALL_RULES)}")
    again = getattr(module, "PRACTICE_DIAGNOSIS", "")
    if again and again not in AGAIN_DIAGNOSES:
        raise ReleaseError(f"{module.__name__} declares PRACTICE_DIAGNOSIS = {again!r}, which "
                           f"is not one of the copy's: {sorted(AGAIN_DIAGNOSES)}")
    lenient = float_dtypes.any_float_dtype(contract, reference, *first[0]) if first else []
    # The check of the same output twice (grading/contracts/module_checks.py's
    # repeatable), which needs no stored answer: the copy runs it on the same case.
    twice = getattr(getattr(module, "test_the_same_output_twice", None), "case", "")
    if calls == "one-token-per-step":  # the copy runs these models' forward_with_cache
        models.cached |= set(models.specs)
    return {"method": contract.method, "module": problem.module or "",
            "arg_names": list(contract.arg_names), "iterate": contract.iterate,
            "harness": contract.harness, "judge": rule, "cases": stored, "examples": drawn,
            **({"refusals": refusals} if refusals else {}),
            **({"calls": calls} if calls else {}),
            **({"diagnosis": again} if again else {}),
            **({"returns_new": True} if contract.returns_new else {}),
            **({"twice": twice} if twice in stored else {}),
            **({"any_float_dtype": lenient} if lenient else {})}


def stored_case(problem: Problem, contract: Any, reference: Any, args: tuple, expected: Any,
                rule: str, models: Models, drawn: bool = False) -> dict[str, Any]:
    """One case or example as the copy stores it: its arguments as the learner's code
    receives them, the right answer (and any other the check's judge takes where
    float rounding moves a tie), and each known mistake's answer that differs."""
    from grader.grading.values.equality import same_outcome

    # The practice package's codec and judge, as the copy will run them.
    from grader.release.practice import codec, judge

    met = Models()
    shown = resolve(problem, args, met)
    try:
        encoded_args = codec.encode(shown)
        encoded_expected = codec.encode(expected)
    except TypeError as why:
        raise NotPractised(f"{CANNOT_STORE} ({why})") from None

    def taken(answer: Any, want: Any) -> bool:
        return judge.same_outcome(("value", answer), ("value", want), rule, shown)

    # (No harness drives a model today: ties reruns the method itself.)
    others = ([] if problem.module or contract.harness
              else ties.other_answers(contract, reference, args, expected, taken))
    if drawn and not (problem.module or contract.harness) and not ties.steady(
            contract, reference, args, [expected, *others]):
        raise NotPractised("a drawn example on a tie the copy's judge cannot judge as the "
                           "instructor's grade does")
    if drawn and rule == "filtering" and ties.judged_otherwise(contract, reference, args,
                                                               expected, taken):
        raise NotPractised("a drawn example whose filter may keep either of two tokens "
                           "equally likely in float32, which the copy's judge cannot take")
    right = [("value", expected), *(("value", other) for other in others)]
    # An answer right both within the tolerance every problem shares and by the practice
    # judge names nothing. One right by only one of them is stored: by the shared
    # tolerance only, the copy fails it and names it as the kata's own diagnosis does
    # (28's 1e-6 left out, on gradients of 1e-6); by the judge only, the kata's diagnosis
    # names it (32's angles in half precision), where a learner's answer near it fails.
    right_ways: set[str] = set()
    mistakes = mistakes_answers(problem, contract, contract.mistakes, args, lambda outcome: (
        same_outcome(("value", expected), outcome)
        and any(judge.same_outcome(outcome, want, rule, shown) for want in right)), right_ways)
    models.merge(met)  # only once the case is stored: a case left out needs no model
    case = {"args": encoded_args, "expected": encoded_expected, "mistakes": mistakes}
    if contract.describe is not describe_inputs or problem.module:
        # The lines the check writes of its inputs (clip-grad-norm's parameters by their
        # gradients, stream's calls of put()), in each language the copy speaks: the copy
        # holds no check module to write them. A module's known weights are said by where
        # they come from ("attention head number 0 of blocks.0.attn of the shipped
        # model"), which the tensors the copy stores no longer tell.
        named = dict(zip(contract.arg_names, args if problem.module else shown))
        lines = {}
        for language in LANGUAGES:
            with speaking(language):
                lines[language] = contract.describe(named)
        case["shown"] = lines
    if others:
        case["also_right"] = [codec.encode(other) for other in others]
    if right_ways:
        # Mistakes one of whose ways answers right here: a learner right here may make
        # them, so a right answer here refutes none of them (practice_grade's refuting).
        case["right_ways"] = sorted(right_ways)
    return case


def mistakes_answers(problem: Problem, contract: Any, mistakes: Any, args: tuple,
                     right: Callable[[tuple[str, Any]], bool],
                     right_ways: set[str] | None = None) -> list[dict[str, Any]]:
    """Each of `mistakes`' outcomes on `args`, as the copy stores it to name the mistake
    by: not the ways of making it that do not apply here (None), nor what `right` takes
    for a right outcome."""
    import torch

    from grader.grading.subject.diagnosis import nothing_but_nan
    from grader.grading.subject.reference import fresh_args
    from grader.grading.values.equality import outcome_of
    from grader.release.practice import codec

    found: list[dict[str, Any]] = []
    for mistake in mistakes:
        for run in mistake.runs:
            with torch.no_grad():
                outcome = outcome_of(run, *fresh_args(args))
            if outcome[0] == "value" and contract.iterate and outcome[1] is not None:
                outcome = ("value", list(outcome[1]))
            # nan is every broken computation's answer: no evidence of this mistake
            # (diagnosis.find_mistake passes it over too).
            if outcome[1] is None or nothing_but_nan(outcome):
                continue
            if right(outcome):
                if right_ways is not None:  # a learner right here may make it this way
                    right_ways.add(mistake.named(problem.slug).id)
                continue
            try:
                encoded = codec.encode((outcome[0], str(outcome[1])
                                        if outcome[0] == "error" else outcome[1]))
            except TypeError:
                continue  # an answer of a kind no right answer has: judged wrong anyway
            # Its id as the full grader's reports give it: <slug>/<name in kebab case>.
            entry = {"id": mistake.named(problem.slug).id, "name": mistake.name,
                     "hint": mistake.hint, "outcome": encoded}
            if entry not in found:  # two ways of making it can give one answer
                found.append(entry)
    return found


def stored_refusal(problem: Problem, contract: Any, method: Any, refusal: Any, rule: str,
                   models: Models) -> dict[str, Any]:
    """One refusal as the copy stores it: the arguments, the call as the message shows
    it, why it cannot return a value (in English: the copy's catalogs translate it) and
    each named way of returning a value instead."""
    from grader.release.practice import codec

    if live_answer(contract, method, refusal.args)[0][0] != "error":
        raise ReleaseError(f"the reference {contract.method}() of {problem.slug} accepts "
                           f"{refusal.what}, which its check expects it to refuse")
    met = Models()
    shown = resolve(problem, refusal.args, met)
    try:
        encoded = codec.encode(shown)
    except TypeError as why:
        raise ReleaseError(f"{problem.slug}: the refusal {refusal.what} cannot be stored "
                           f"({why})") from None
    # Raising is right here: only a value names a mistake.
    mistakes = mistakes_answers(problem, contract, refusal.mistakes, refusal.args,
                                lambda outcome: outcome[0] == "error")
    models.merge(met)
    return {"args": encoded, "what": refusal.what, "why": refusal.why, "mistakes": mistakes}


def resolve(problem: Problem, args: tuple, models: Models) -> tuple:
    """A case's arguments as the learner's code receives them: a module problem's
    weights, described by the check, become the tensors themselves; a model's spec
    is kept for its exported program."""
    from grader.model.spec import ModelSpec

    if not problem.module:
        shown = []
        for a in args:
            if isinstance(a, ModelSpec):
                if a.kind not in ("shipped", "random"):
                    raise NotPractised(NEEDS_MODEL)
                a = models.exported(a)
            shown.append(a)
        return tuple(shown)
    from grader.model.parts import state_dict

    config, weights, *inputs = args
    return (dict(config), state_dict(weights), *inputs)
