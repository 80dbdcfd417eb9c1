"""`gpt-kata talk` in a learners' copy: the shipped weights write through the learner's code.

In the kata, talk runs the learner's answers in the sandbox, and the reference for
any that does not pass yet. A copy holds no reference, and nothing talk does there
is graded: the learner's own code runs in this process, and each answer talk uses
must have passed its last practice grade (it is graded first if the file changed).

- `talk`: the shipped GPT's exported program, through the learner's sample_text()
  (problem 16);
- `--yours`: the shipped weights through the learner's own GPT (problem 23) too;
- `--model modern --yours`: the shipped modern weights through the learner's Llama
  (problem 35); the copy holds no modern model to talk without it;
- `--model RUN --yours`: a run `train --yours` wrote, through the learner's GPT or
  Llama, as the run's config says;
- `--stream word` or `sentence`: the same text a word at a time through the
  learner's WordStreamer (problem 14), or a sentence at a time.

Before the learner's GPT talks it is held to the shipped model, as the kata holds
it: its logits on a probe must be the shipped model's (for the modern model, the
logits the copy stores on problem 35's prompt), within a module's rounding.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from grader.learner import status
from grader.learner.errors import EXIT_PASS, UsageError
from grader.learner.tools.talk_text import (
    SAMPLING_OPTIONS,
    check_options,
    fresh_seed,
    prompt_ids,
    sentences,
)
from grader.locale import tr
from grader.registry import Problem, find

MODERN = "modern"  # --model's name for the shipped modern model


def talk(args: argparse.Namespace) -> int:
    check_options(args)  # before torch is imported, as the kata's talk does
    import torch

    from grader.model import artifacts

    run = None
    if args.model not in ("shipped", MODERN):
        if not args.yours:
            raise UsageError(tr("--model {name}: this learners' copy talks with a run "
                                "through your own GPT: add --yours", name=args.model))
        from grader.model.runs import RunError, run_files

        try:
            run = run_files(Path(args.model))
        except RunError as exc:
            raise UsageError(f"--model {exc}") from None
    if args.model == MODERN and not args.yours:
        raise UsageError(tr("this learners' copy holds the shipped modern model's weights, "
                            "not its code (problem 35's answer): `--model modern --yours` "
                            "runs them through your Llama"))
    int_to_char = run[2] if run else artifacts.load_vocab()
    named = (tr("the model trained in {folder}", folder=run[0]) if run
             else tr("the shipped model"))
    context = prompt_ids(args.prompt, int_to_char, named)
    torch.set_num_threads(1)
    sampler = passing("sampler")
    modern = args.model == MODERN or (run is not None and hasattr(run[1], "n_kv_head"))
    model = (your_run(run) if run else your_model(modern, int_to_char) if args.yours
             else shipped())
    label = args.model if args.yours else ""
    # talk streams through the learner's WordStreamer: stream_generate() is not practised
    streamer = passing("stream", uses="WordStreamer") if args.stream == "word" else None
    sampling = any(getattr(args, name) is not None for name in SAMPLING_OPTIONS)
    seed = (args.seed or 0) if sampling else fresh_seed()
    notes = [tr("a sentence at a time")] if args.stream == "sentence" else []
    if not sampling:
        notes.append(tr("seed {seed}: `--seed {seed}` gives this text again", seed=seed))
    said = tr("your {what} from {folder}", what="sample_text()", folder=sampler.folder)
    if label:
        gpt = find("modern-gpt" if modern else "gpt")
        said += ", " + tr("your {what} from {folder}", what=gpt.class_name,
                          folder=gpt.folder)
        if run is not None:
            said = tr("{label} with {model}", label=said, model=named)
    if streamer is not None:
        said += ", " + tr("your {what} from {folder}", what="WordStreamer",
                          folder=streamer.folder)
    # One whole line before the prompt is written: the text that follows is never
    # split by it, on a terminal where both streams mix.
    print(f"[{'; '.join([said, *notes])}]", file=sys.stderr, flush=True)
    with torch.no_grad():
        text = learners(sampler, "sample_text", model, context, args.chars,
                        model.context_length, int_to_char,
                        1.0 if args.temperature is None else args.temperature,
                        args.top_k or 0, 1.0 if args.top_p is None else args.top_p,
                        args.no_repeat_ngram or 0, None, seed)
    if not isinstance(text, str):
        raise UsageError(tr("sample_text() returned {type}, not str",
                            type=type(text).__name__))
    sys.stdout.write(args.prompt)
    for chunk in pieces(text, args.stream, streamer, int_to_char):
        sys.stdout.write(chunk)
        sys.stdout.flush()
    sys.stdout.write("\n")
    return EXIT_PASS


def passing(slug: str, command: str = "talk", uses: str = "") -> Problem:
    """The problem, if the learner's file passes its practice grade (graded first if it
    changed since); else a UsageError that says what to do."""
    from grader.learner.practice import practice_report

    problem = find(slug)
    if status.learner_status(problem) == "not graded":
        print(tr("(grading your {folder} first...)", folder=problem.folder), file=sys.stderr)
        status.record(practice_report([problem]))
    if status.learner_status(problem) != "pass":
        raise UsageError(tr("{command} runs your {folder}'s {what}, which has not passed "
                            "its last grade: `gpt-kata grade {slug}` first", command=command,
                            folder=problem.folder, what=uses or (problem.methods[0] + "()"
                            if problem.methods else problem.class_name), slug=problem.slug))
    return problem


def learners(problem: Problem, method: str, *args: Any) -> Any:
    """The learner's `method` of the problem's Solution, called; whatever it raises is
    said in one line, never as a traceback."""
    from grader.reuse import solution_of

    try:
        return getattr(solution_of(problem.slug)(), method)(*args)
    except Exception as exc:  # noqa: BLE001 - the learner's code, said in one line
        raise failed(f"{method}()", problem, exc) from None


def failed(what: str, problem: Problem, exc: Exception) -> UsageError:
    """The learner's code raised `exc`: said in one line, never as a traceback."""
    return UsageError(tr("your {what} from {folder} failed: {error}", what=what,
                         folder=problem.folder, error=f"{type(exc).__name__}: {exc}"))


def loaded(problem: Problem, config: Any, weights: dict[str, Any]) -> Any:
    """The learner's class of the problem (GPT or Llama) built from `config`, with
    `weights` loaded by name, in evaluation mode and without gradients."""
    from grader.model import parts
    from grader.reuse import solution_of

    try:
        made = solution_of(problem.slug, name=problem.class_name)(config)
        parts.load_known_weights(made, dict(weights), problem.class_name)
    except Exception as exc:  # noqa: BLE001 - the learner's code, said in one line
        raise failed(problem.class_name, problem, exc) from None
    made.eval().requires_grad_(False)
    made.context_length = config.context_length  # what talk hands sample_text()
    return made


def shipped() -> Any:
    from gpt_kata_practice.codec import stored_model

    return stored_model("shipped")


def your_model(modern: bool, int_to_char: dict[int, str]) -> Any:
    """The learner's GPT (or Llama) with the shipped weights, once it gives the shipped
    model's logits on a probe."""
    import torch
    from gpt_kata_practice import judge

    from grader.model import artifacts

    problem = passing("modern-gpt" if modern else "gpt")
    if modern:
        from gpt_kata_practice.shipped import modern_gpt

        stand_in = modern_gpt()
        config, weights = stand_in.config, artifacts.shipped_weights()[1] or {}
        probe = stand_in.known[0][0]
        expected = stand_in.known[0][1]
    else:
        config, weights = artifacts.load_config(), artifacts.shipped_weights()[0]
        probe = artifacts.encode(artifacts.corpus_text()[:config.context_length], int_to_char)
        with torch.no_grad():
            expected = shipped()(probe)
    made = loaded(problem, config, weights)
    try:
        with torch.no_grad():
            got = made(probe)
    except Exception as exc:  # noqa: BLE001 - the learner's code, said in one line
        raise failed(problem.class_name, problem, exc) from None
    if not judge.same(got, expected, activations=True):
        raise UsageError(tr("--yours talks through your {what} from {folder}, whose logits "
                            "on a probe of {tokens} tokens are not the shipped model's; "
                            "`gpt-kata grade {slug}` says where they differ",
                            what=problem.class_name, folder=problem.folder,
                            tokens=probe.shape[1], slug=problem.slug))
    return made


def your_run(run: tuple[Any, Any, dict[int, str]]) -> Any:
    """The learner's GPT (or Llama, as the run's config says) with the run's weights: a
    run `train --yours` wrote here, whose model is theirs."""
    from grader.model.runs import RunError, read_weights

    folder, config, _ = run
    problem = passing("modern-gpt" if hasattr(config, "n_kv_head") else "gpt")
    try:
        weights = read_weights(folder / "model.safetensors")
    except RunError as exc:
        raise UsageError(f"--model {exc}") from None
    return loaded(problem, config, weights)


def pieces(text: str, stream: str | None, streamer: Problem | None,
           int_to_char: dict[int, str]) -> list[str]:
    """The text as talk shows it: whole, a sentence at a time, or a word at a time as
    the learner's WordStreamer passes it on."""
    if stream == "sentence":
        return sentences(text)
    if streamer is None:
        return [text]
    from gpt_kata_practice import harnesses

    from grader.model.artifacts import char_to_int
    from grader.reuse import solution_of

    lookup = char_to_int(int_to_char)
    # Driven as the grade drives it: each character put(), then end().
    yours = SimpleNamespace(WordStreamer=solution_of(streamer.slug, name="WordStreamer"))
    try:
        passed_on = harnesses.word_streamer(yours, int_to_char, [[lookup[c]] for c in text])
    except Exception as exc:  # noqa: BLE001 - the learner's code, said in one line
        raise failed("WordStreamer", streamer, exc) from None
    return [chunk for _when, chunk in passed_on]
