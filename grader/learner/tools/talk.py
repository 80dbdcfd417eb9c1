"""`gpt-kata talk`: a model continues a prompt, through the learner's code.

The model is the shipped one, the shipped modern one (`--model modern`, the
Llama-style decoder of grader/model/llama.py) or, with `--model RUN`, one that
`gpt-kata train` wrote. The text comes from problem 16's sample_text(), seeded once (with a
fresh seed that the label names, unless --seed is given). `--stream` shows that
same text in pieces: a word at a time through problem 14's WordStreamer, or a
sentence at a time, cut where problem 14's stream_generate() cuts its sentences.
stream_generate() itself is built on generate(), whose generator is put back after
every draw, so its text goes round in circles; it streams only when the learner's
sampler cannot (`--yours` before 16 passes). The learner's answer is used when its
last grade passed (for the file as it is now); otherwise the reference is, and the
output says which.

A run's weights are read by the grader only: the learner's code runs sandboxed,
out of the run's folder, and is handed a model whose forward passes the grader
serves (grader/sandbox/host/witness.py).

With `--yours` the shipped weights talk through the learner's own GPT
(problem 23) as well as their own generate, both in the sandbox
(grader/learner/tools/talk_yours.py); with `--model modern --yours`, the shipped modern
weights through the learner's modern GPT (problem 35). With a run (`--model RUN
--yours`) the run's weights talk through the learner's GPT or modern GPT, as the
run's config says: the worker cannot read the run's folder, so the grader reads
the weights and hands them to each worker that builds the learner's model before
its first call (the harness `take_weights`, grader/model/yours.py).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grader.learner.errors import EXIT_FAIL, EXIT_PASS, UsageError
from grader.learner.status import current_status
from grader.learner.tools.talk_text import (
    SAMPLING_OPTIONS,
    check_options,
    fresh_seed,
    prompt_ids,
    sentences,
)
from grader.locale import tr
from grader.model.spec import ModelSpec
from grader.registry import Problem, find
from grader.sandbox.host.channel import WorkerDied
from grader.sandbox.host.pool import WorkerPool
from grader.sandbox.host.process import SubmissionProcess
from grader.sandbox.wire.limits import DEFAULT_CALL_TIMEOUT, DEFAULT_PROBLEM_BUDGET, Limits
from grader.sandbox.worker.harness_ref import harness_name, harness_ref, run_harness

# Seconds a character: talk generates as many as it is asked for, each a forward pass of
# the model (served from another process for a run), so its time limits grow with them.
# A trained run's 6,000 characters through the learner's sampler took over 20 s on a
# slow machine beside a training run: a long text must not be taken for a hang.
SECONDS_A_CHARACTER = 0.01


def talk_limits(chars: int) -> Limits:
    """The limits on the learner's code while it talks: a grade's, and time for `chars`."""
    more = max(chars, 0) * SECONDS_A_CHARACTER
    return Limits(call_timeout=DEFAULT_CALL_TIMEOUT + more,
                  problem_budget=DEFAULT_PROBLEM_BUDGET + more)


@dataclass(frozen=True)
class Talker:
    """The model talk uses: its description, its vocabulary and its context length."""

    spec: ModelSpec
    int_to_char: dict[int, str]
    context_length: int
    name: str  # how messages name it
    # A run's weights, which a worker building the learner's GPT is handed first.
    weights: dict[str, Any] | None = None

    @property
    def served(self) -> bool:
        """Whether the grader must serve its forward passes (a trained run)."""
        return self.spec.kind == "run"


def choose_model(name: str) -> Talker:
    """`shipped`, `modern` or a run folder, checked before anything starts; UsageError
    if unusable."""
    from grader.grading.subject.cases import SHIPPED
    from grader.model import artifacts

    if name == "shipped":
        return Talker(SHIPPED, artifacts.shipped_vocab(),
                      artifacts.load_config().context_length, tr("the shipped model"))
    if name == MODERN:
        try:
            config = artifacts.load_llama_config()
        except artifacts.MissingDataError as exc:
            raise UsageError(f"--model modern: {exc}") from None
        return Talker(ModelSpec("modern"), artifacts.shipped_vocab(), config.context_length,
                      tr("the shipped modern model"))
    from grader.model.runs import RunError, open_run

    try:
        run = open_run(Path(name))
    except RunError as exc:
        raise UsageError(f"--model {exc}") from None
    return Talker(run.spec(), run.int_to_char, run.config.context_length,
                  tr("the model trained in {folder}", folder=run.folder))


MODERN = "modern"  # --model's name for the shipped modern model


class Implementation:
    """A problem's answer, the learner's (run in a worker) or the reference (run here)."""

    def __init__(self, problem: Problem, use_learner: bool, pool: WorkerPool,
                 witnessed: bool = False, path: Path | None = None,
                 weights: dict[str, Any] | None = None, limits: Limits | None = None) -> None:
        self.problem = problem
        self.limits = limits or Limits()
        self.use_learner = use_learner
        self.pool = pool
        # A trained run's forward passes are served by the grader (see the module).
        self.witnessed = witnessed
        self.path = path or problem.starter
        self.weights = weights  # handed to the worker before its first call
        self._process: Any = None
        self._reference: Any = None

    what: str = ""

    @property
    def label(self) -> str:
        what = self.what or f"{self.problem.methods[0]}()"
        if self.use_learner:
            return tr("your {what} from {folder}", what=what, folder=self.problem.folder)
        return tr("the reference {what} from {folder}", what=what, folder=self.problem.folder)

    def iterate(self, method: str, *args: Any):
        """The learner's generator method, item by item, live from the worker."""
        try:
            yield from self.process.iterate(method, args)
        except WorkerDied as exc:
            raise RuntimeError(tr("{label} failed: {error}", label=self.label,
                                  error=exc)) from None

    @property
    def process(self) -> SubmissionProcess:
        if self._process is None:
            self._process = SubmissionProcess(str(self.path), "Solution",
                                              list(self.problem.methods), self.pool,
                                              self.limits, witnessed=self.witnessed)
        return self._process

    def start(self) -> None:
        """Start and load the learner's worker now, before the prompt is written: the
        line that says how it is sandboxed (grader/learner/sandbox_notice.py) comes with its
        first message, and must not land between the prompt and its continuation."""
        if self.use_learner:
            self.process.load()  # a load error is reported by the first call
            if self.weights is not None:
                self.hand_weights()

    def hand_weights(self) -> None:
        """Hand the run's weights to the worker, which makes their handle: it must be
        the grader's, which the model's description names."""
        from grader.grading.values.worker_errors import one_line
        from grader.model.yours import handle_of

        outcome = self.process.call(harness_ref("take_weights"), (self.weights,))
        if outcome.error:
            raise RuntimeError(tr("handing the run's weights to {label} failed: {error}",
                                  label=self.label, error=one_line(outcome.error)))
        if outcome.result != handle_of(self.weights):
            raise RuntimeError(tr("the worker of {label} did not keep the run's weights "
                                  "as they were handed", label=self.label))

    def call(self, method: str, *args: Any, iterate: bool = False) -> Any:
        if self.use_learner:
            from grader.grading.values.worker_errors import one_line

            outcome = self.process.call(method, args, iterate=iterate)
            if outcome.error:
                raise RuntimeError(tr("{label} failed: {error}", label=self.label,
                                      error=one_line(outcome.error)))
            return outcome.result
        if self._reference is None:
            from grader.grading.subject.reference import load_reference

            self._reference = load_reference(self.problem)
        from grader.grading.subject.reference import fresh

        if (harness := harness_name(method)) is not None:
            module = sys.modules[type(self._reference).__module__]
            return run_harness(harness, module, *args)
        result = getattr(self._reference, method)(*[fresh(a) for a in args])
        return list(result) if iterate else result

    def close(self) -> None:
        if self._process is not None:
            self._process.close()


def choose(slug: str, pool: WorkerPool, talker: Talker, chars: int,
           calls_model: bool = True) -> Implementation:
    """The learner's answer if its last grade (of the file as it is now) passed, given
    time to generate `chars` characters.

    `calls_model` is False for WordStreamer, which is handed text, not the model.
    """
    problem = find(slug)
    status = current_status(problem, pool)
    use_learner = status == "pass"
    if not use_learner and calls_model and talker.spec.kind == "yours":
        # The reference runs in the grader, which never imports the learner's GPT.
        if status == "missing":
            raise UsageError(tr("--yours talks through your own code end to end, and your "
                                "{folder} has no solution.py; finish it first "
                                "(gpt-kata grade {slug}), or talk without --yours",
                                folder=problem.folder, slug=problem.slug))
        raise UsageError(tr("--yours talks through your own code end to end, and your "
                            "{folder} does not pass yet; finish it first "
                            "(gpt-kata grade {slug}), or talk without --yours",
                            folder=problem.folder, slug=problem.slug))
    if status in ("fail", "error"):
        # Its label names the reference; without this a learner who wrote it took the
        # text for their own code's.
        print(tr("(your {folder} does not pass yet, so the reference's talks instead; "
                 "`gpt-kata grade {slug}` says why)", folder=problem.folder, slug=problem.slug),
              file=sys.stderr)
    if use_learner and talker.served and pool.server is None:
        # Only forked workers have a witness to serve a run's model calls; a
        # worker started on its own would have to read the run's weights itself.
        print(tr("(your {folder} can talk with a trained run only where the grader "
                 "forks its workers, on Linux; the reference talks instead)",
                 folder=problem.folder), file=sys.stderr)
        use_learner = False
    return Implementation(problem, use_learner, pool, witnessed=talker.served,
                          weights=talker.weights if calls_model else None,
                          limits=talk_limits(chars))


def talk(args: argparse.Namespace) -> int:
    # A mistyped option is refused before torch is imported: at once, not seconds later.
    check_options(args)
    import torch

    torch.set_num_threads(1)
    yours = getattr(args, "yours", False)
    talker = choose_model(args.model)
    context = prompt_ids(args.prompt, talker.int_to_char, talker.name)
    sampling = any(getattr(args, name) is not None for name in SAMPLING_OPTIONS)
    try:
        from grader.learner.sandbox_notice import NoticedPool

        with NoticedPool(sandbox=Limits()) as pool:
            if yours:
                from grader.learner.tools.talk_yours import your_gpt

                run = None
                if talker.served:  # a run: its weights through the learner's model
                    from grader.model.runs import open_run

                    run = open_run(Path(talker.spec.path))
                talker = Talker(*your_gpt(pool, modern=args.model == MODERN, run=run))
            # Whose code runs is said before the prompt is shown: on a terminal a label
            # printed later would land between the prompt and its continuation.
            # Without options talk samples too, with a fresh seed it names, streamed or
            # not: generate() draws every character with the same seed, so its text (and
            # stream_generate()'s, built on it) goes round in circles.
            plain = not sampling
            if plain and yours and current_status(find("sampler"), pool) != "pass":
                used = "stream_generate()" if args.stream else "generate()"
                print(tr("(your 16-sampler does not pass yet, so your {used} talks; it "
                         "draws every character with the same seed, so its text repeats)",
                         used=used), file=sys.stderr)
                plain = False
            if sampling or plain:
                seed = fresh_seed() if plain else args.seed or 0
                sampler = choose("sampler", pool, talker, args.chars)
                # The seed's note last: what it says is the text, however it is shown.
                notes = [tr("a sentence at a time")] if args.stream == "sentence" else []
                if plain:
                    notes.append(tr("seed {seed}: `--seed {seed}` gives this text again",
                                    seed=seed))
                announce(sampler, talker, "; ".join(notes))
                started = [sampler]
                streamer = None
                if args.stream == "word":
                    streamer = choose("stream", pool, talker, args.chars, calls_model=False)
                    streamer.what = "WordStreamer"
                    announce(streamer, talker)
                    started.append(streamer)
                chunks = sampled(args, context, talker, sampler, streamer, seed)
            else:
                implementation = choose("stream" if args.stream else "generate", pool, talker,
                                        args.chars)
                announce(implementation, talker)
                started = [implementation]
                run = streamed if args.stream else char_by_char
                chunks = run(args, context, talker, implementation)
            for implementation in started:
                implementation.start()
            sys.stdout.write(args.prompt)
            sys.stdout.flush()
            written = 0
            for chunk in chunks:
                sys.stdout.write(chunk)
                sys.stdout.flush()
                written += len(chunk)
    except (RuntimeError, OSError, WorkerDied) as exc:
        print(f"\n{exc}", file=sys.stderr)
        return EXIT_FAIL
    sys.stdout.write("\n")
    if written < args.chars and args.no_repeat_ngram and args.stream != "word":
        # The sampler ends the text where every token would repeat an n-gram: said,
        # so a short text is not taken for a fault. (A WordStreamer passes on what it
        # was given, or loses some: its text is not the sampler's to explain.)
        print(tr("(the text stopped after {written} of {chars} characters: with "
                 "--no-repeat-ngram {n}, every next character would repeat an n-gram (n = {n}))",
                 written=written, chars=args.chars, n=args.no_repeat_ngram), file=sys.stderr)
    return EXIT_PASS


def announce(implementation: Implementation, talker: Talker, note: str = "") -> None:
    # One whole line, flushed, before the prompt is written: the text that follows
    # is then never split by it, on a terminal where both streams mix.
    said = (implementation.label if talker.spec.kind == "shipped"
            else tr("{label} with {model}", label=implementation.label, model=talker.name))
    if note:
        said = f"{said}; {note}"
    print(f"[{said}]", file=sys.stderr, flush=True)


def char_by_char(args: argparse.Namespace, context: Any, talker: Talker,
                 implementation: Implementation):
    """Track 1's generate, one character per call, shown as it comes."""
    import torch

    from grader.model import artifacts

    model, int_to_char, context_length = talker.spec, talker.int_to_char, talker.context_length
    try:
        # generate() resets its generator every step, so one character at a time
        # gives exactly the text a single long call would.
        for _ in range(args.chars):
            char = implementation.call("generate", model, 1, context, context_length,
                                       int_to_char)
            if not isinstance(char, str) or len(char) != 1:
                raise RuntimeError(tr("generate(new_chars=1) returned {char!r}, not one "
                                      "character", char=char))
            yield char
            context = torch.cat([context, artifacts.encode(char, int_to_char)], dim=1)
            context = context[:, -context_length:]
    finally:
        implementation.close()


def streamed(args: argparse.Namespace, context: Any, talker: Talker,
             implementation: Implementation):
    """stream_generate's words or sentences, each as soon as the worker yields it."""
    call = (talker.spec, args.chars, context, talker.context_length, talker.int_to_char,
            args.stream)
    try:
        if implementation.use_learner:
            yield from implementation.iterate("stream_generate", *call)
        else:
            yield from implementation.call("stream_generate", *call, iterate=True)
    finally:
        implementation.close()


def sampled(args: argparse.Namespace, context: Any, talker: Talker,
            sampler: Implementation, streamer: Implementation | None, seed: int):
    """sample_text with the options given and `seed`; then, if asked, its words through
    WordStreamer (`streamer`) or its sentences."""
    int_to_char = talker.int_to_char
    try:
        text = sampler.call(
            "sample_text", talker.spec, context, args.chars, talker.context_length,
            int_to_char,
            1.0 if args.temperature is None else args.temperature,
            args.top_k or 0, 1.0 if args.top_p is None else args.top_p,
            args.no_repeat_ngram or 0, None, seed)
    finally:
        sampler.close()
    if not isinstance(text, str):
        raise RuntimeError(tr("sample_text() returned {type}, not str",
                              type=type(text).__name__))
    if args.stream == "sentence":
        yield from sentences(text)
        return
    if streamer is None:
        yield text
        return
    from grader.model.artifacts import char_to_int

    lookup = char_to_int(int_to_char)
    try:
        pieces = [[lookup[c]] for c in text]
        calls = streamer.call(harness_ref("word_streamer"), int_to_char, pieces)
        for _when, chunk in calls:
            yield chunk
    finally:
        streamer.close()
