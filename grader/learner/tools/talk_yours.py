"""`gpt-kata talk --yours`: the shipped weights through the learner's own GPT.

The learner's GPT (problems/23-gpt/solution.py of the same kata folder) is
built in the sandboxed worker that runs their generate, and loaded with
data/model.safetensors by parameter name (grader/model/yours.py). Before
anything talks, the grader makes sure that this GPT is the shipped model: it
runs it in a worker exactly as the gpt problem is graded (the module driver,
the same known weights) on a probe of the shipped corpus, and compares its
logits with the shipped model's within the grading tolerance; then, if this
version of the file has not been graded, it is graded, since `--yours` asks
that problem 23 pass. A GPT that is not there yet is refused in one line that
says why and what to do.

With the shipped modern model (`talk --model modern --yours`) it is the same for
the learner's modern GPT (problems/35-modern-gpt/solution.py, class Llama), loaded
with data/llama.safetensors and compared with the shipped modern model.

With a run `train` wrote (`talk --model RUN --yours`) it is the same for the GPT
or the modern GPT whose config the run holds, loaded with the run's weights,
which the grader reads and hands to the worker (grader/model/yours.py; the
worker cannot read the run's folder), and compared with the grader's model of
the run on a probe of token ids the run's vocabulary has.
"""

from __future__ import annotations

from typing import Any

from grader.learner.errors import UsageError
from grader.learner.status import current_status, learner_status
from grader.locale import tr
from grader.model.spec import ModelSpec
from grader.registry import Problem, find
from grader.sandbox.host.pool import WorkerPool
from grader.sandbox.host.process import SubmissionProcess

MODERN = "modern-gpt"  # problem 35, the learner's modern GPT


def refuse(problem: Problem, reason: str, details: str = "") -> UsageError:
    """The one line that says why the learner's GPT cannot talk yet, then any detail."""
    what = tr("modern GPT") if problem.slug == MODERN else "GPT"
    line = tr("--yours talks through your {what}, and your {folder} {reason}; finish problem "
              "{number:02d} first (gpt-kata grade {slug})", what=what, folder=problem.folder,
              reason=reason, number=problem.number, slug=problem.slug)
    return UsageError(line + (f"\n{details}" if details else ""))


def your_gpt(pool: WorkerPool, modern: bool = False, run: Any = None
             ) -> tuple[ModelSpec, dict[int, str], int, str, dict[str, Any] | None]:
    """The model, vocabulary, context length and label talk uses, with the learner's
    GPT in place of the grader's (their modern GPT with `modern`), and the weights the
    worker must be handed first (None: the shipped ones, which it has). With `run`
    (grader/model/runs.Run), the run's weights through the learner's GPT or modern
    GPT, as the run's config says.

    Raises UsageError (exit 2) when their GPT is not the shipped model (or the run's) yet.
    """
    from grader.model import artifacts
    from grader.model.yours import spec_of

    if run is not None:
        return your_run(pool, run)
    try:
        problem = find(MODERN if modern else "gpt")
    except LookupError:
        raise UsageError(tr("--model modern --yours talks through your modern GPT (problem "
                            "35), which this kata does not have yet")) from None
    check_your_gpt(problem, pool)
    if modern:
        config = artifacts.load_llama_config()
        label = tr("your modern GPT from {folder} and the shipped modern weights",
                   folder=problem.folder)
    else:
        config = artifacts.load_config()
        label = tr("your GPT from {folder} and the shipped weights", folder=problem.folder)
    return (spec_of(problem.starter, config.to_dict()), artifacts.shipped_vocab(),
            config.context_length, label, None)


def your_run(pool: WorkerPool, run: Any
             ) -> tuple[ModelSpec, dict[int, str], int, str, dict[str, Any]]:
    """your_gpt's answer for a run: the learner's GPT, or modern GPT for a modern run,
    with the run's weights."""
    from grader.model.llama import LlamaConfig
    from grader.model.yours import handle_of, spec_of

    modern = isinstance(run.config, LlamaConfig)
    try:
        problem = find(MODERN if modern else "gpt")
    except LookupError:
        raise UsageError(tr("this run is a modern GPT's, and --yours would talk through your "
                            "modern GPT (problem 35), which this kata does not have "
                            "yet")) from None
    check_your_gpt(problem, pool, run)
    tensors = {name: tensor.detach().clone() for name, tensor in run.model.state_dict().items()}
    try:
        spec = spec_of(problem.starter, run.config.to_dict(), handle_of(tensors))
    except ValueError as exc:
        raise UsageError(f"--model {run.folder} --yours: {exc}") from None
    label = (tr("your modern GPT from {folder} and the weights trained in {run}",
                folder=problem.folder, run=run.folder) if modern
             else tr("your GPT from {folder} and the weights trained in {run}",
                     folder=problem.folder, run=run.folder))
    return (spec, run.int_to_char, run.config.context_length, label, tensors)


def check_your_gpt(problem: Problem, pool: WorkerPool, run: Any = None) -> None:
    """UsageError unless the learner's GPT, loaded with the shipped weights (or `run`'s),
    is the shipped model (or the run's) on the probe, and problem 23 passes."""
    from grader.reuse import unfinished_methods

    status = learner_status(problem)
    if status == "missing":
        raise refuse(problem, tr("has no solution.py ({starter})", starter=problem.starter))
    try:
        unwritten = unfinished_methods(problem.starter.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        unwritten = []  # the worker reports what is wrong with the file
    if status == "todo" or unwritten:
        methods = ", ".join(f"{m}()" for m in dict.fromkeys(unwritten)) or tr("the starter")
        raise refuse(problem, tr("is not finished ({methods} still raising "
                                 "NotImplementedError)", methods=methods))
    if status == "fail":
        raise refuse(problem, tr("failed its last grade"))
    # The probe first: it says exactly what stops the GPT from talking (the
    # names message, the logits that differ) where a grade would only fail.
    reason, details = probe(problem, pool, run)
    if reason:
        raise refuse(problem, reason, details)
    # Then the whole grade, once per version of the file, as talk does for
    # generate: a GPT right on the shipped sizes only does not pass yet.
    if status == "not graded" and current_status(problem, pool) != "pass":
        raise refuse(problem, tr("gives the shipped model's logits but fails its grade "
                                 "on other sizes"))


def probe(problem: Problem, pool: WorkerPool, run: Any = None) -> tuple[str, str]:
    """Why the learner's GPT is not the shipped model (or `run`'s) on the probe ("" if
    it is), and the loading code's own message where it has one of several lines."""
    import torch

    from grader.grading.judging.any_result import expect_activations
    from grader.grading.subject.cases import SHIPPED, context_length, corpus_prefix, prompt_ids
    from grader.grading.values.failures import GradeFailure
    from grader.grading.values.worker_errors import one_line
    from grader.model import artifacts
    from grader.model.parts import given, weights

    # Two full windows of the corpus: every position, and a batch of two rows.
    length = context_length()
    text = corpus_prefix(2 * length)
    context = torch.cat([prompt_ids(text[:length]), prompt_ids(text[length:])])
    process = SubmissionProcess(str(problem.starter), problem.class_name,
                                list(problem.methods), pool, module=True)
    if run is not None:
        # A run may have its own vocabulary and window: ids it has, drawn once.
        shipped, config = run.model, run.config.to_dict()
        known = given(run.model.state_dict())
        context = torch.randint(run.config.vocab_size, (2, run.config.context_length),
                                generator=torch.Generator().manual_seed(0))
    elif problem.slug == MODERN:
        shipped = artifacts.shipped_llama()
        config, known = shipped.config.to_dict(), given(shipped.state_dict())
    else:
        shipped = artifacts.shipped_model()
        config, known = artifacts.load_config().to_dict(), weights(SHIPPED)
    try:
        outcome = process.call("forward", (config, known, context))
    finally:
        process.close()
    error = outcome.error
    if error:
        message = str(error.get("message", ""))
        if error.get("type") in ("ParameterNamesError", "KnownWeightsError"):
            # Shown whole: the names message lists expected and found names, a line each.
            return (tr("cannot be loaded with the shipped weights") if run is None
                    else tr("cannot be loaded with the run's weights")), message
        return tr("fails: {error}", error=one_line(error)), ""
    with torch.no_grad():
        expected = shipped(context)
    try:
        expect_activations(outcome.result, expected, "the logits tensor")
    except GradeFailure as exc:
        return (tr("does not give the shipped model's logits") if run is None
                else tr("does not give the run's logits")), f"  {exc}"
    return "", ""
