"""The hypothesis strategies every check draws from, and the settings they run with."""

from __future__ import annotations

import contextlib
import hashlib
import os
import string
from collections.abc import Iterator

import torch
from hypothesis import HealthCheck, Phase, reject, seed, settings
from hypothesis import strategies as st
from hypothesis.control import current_build_context
from hypothesis.errors import InvalidArgument

from grader.grading.subject.examples_seed import SEED_VARIABLE
from grader.model.spec import ModelSpec


def seeded(test, identity: str):  # noqa: ANN001, ANN201 - a hypothesis test, as given
    """`test`, drawing its examples from a seed of its own: `identity` (its problem and
    description: two tests built by one function share a name and a source), mixed
    with the instructor's seed where one is set.

    Without the instructor's seed hypothesis would derandomise from a digest of the
    test's source, which every check's drawn test shares (Contract.example_test): any
    edit of it changed the examples of every problem, and a submission's grade could
    change from one version of the grader to the next with no check changed."""
    chosen = os.environ.get(SEED_VARIABLE, "")
    digest = hashlib.sha256(f"{chosen}\0{identity}".encode()).digest()
    return seed(int.from_bytes(digest[:8], "big"))(test)


def without_local_constants() -> None:
    """Keep hypothesis from drawing constants found in the loaded modules' source.

    Hypothesis (6.131 on) now and then draws, instead of a random value, a constant
    read from the source of the loaded modules that are not installed: the grader's
    own modules when it runs from a checkout, none when it is installed from a wheel,
    and any other module the process loaded. The same check then drew other examples
    in a checkout than in a wheel (five problems of five tried), or beside another
    module; and the parse is cached in `.hypothesis/` of the folder graded from,
    which a learner's repository can hold. With no such constant, hypothesis draws
    its random values and its own fixed list of constants, the same everywhere."""
    try:
        from hypothesis.internal.conjecture import providers
        from hypothesis.internal.constants_ast import Constants
    except ImportError:  # a hypothesis from before local constants
        return
    if hasattr(providers, "_get_local_constants"):
        providers._get_local_constants = lambda *_args: Constants()
        # What it cached holds the constants found by draws made before this ran.
        with contextlib.suppress(AttributeError):
            providers.CONSTANTS_CACHE.cache.clear()


without_local_constants()


@contextlib.contextmanager
def hypothesis_home_in(folder: str) -> Iterator[None]:
    """Hypothesis' caches (its table of unicode characters) in `folder` meanwhile, not
    in `.hypothesis/` of the folder the grade started in.

    A classroom grade starts in the installed package's folder, site-packages
    (grader/sandbox/host/launch.py's neutral_folder). Hypothesis made its cache there
    in the middle of a grade; the folder's change made the workers forked before it
    list the folder again, which their Landlock rules (entry by entry) refuse, and
    every package they had not imported yet (torchtyping) was missing: right files
    failed on the fresh installs of Gradescope and Classroom50 (60 of 350 points for
    the references of 17-35). A learner's repository, where a grade starts otherwise,
    could hold caches of the learner's making too. The session gives the grade's
    scratch root, which goes with the grade however it ends."""
    from hypothesis import configuration

    before = getattr(configuration, "__hypothesis_home_directory", None)
    configuration.set_hypothesis_home_dir(folder)
    try:
        yield
    finally:
        configuration.set_hypothesis_home_dir(before)


# Grading must be deterministic: the same submission gets the same examples and
# the same grade on every run (given the same seed), and nothing is remembered
# between runs. Each test is seeded too (`seeded`); derandomize covers any that is not.
GRADING = settings(
    derandomize=True,
    # No explain phase: its notes never reach the report, and it replays each
    # failure many times over (most of a failing grade's time, when it ran).
    phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],
    database=None,
    deadline=None,
    max_examples=20,
    print_blob=False,
    suppress_health_check=list(HealthCheck),
)


# A failing drawn test shrinks its example, so that the report shows a small one,
# and each attempt calls the submission and the reference once more: a failing
# train-loop grade made 365 such calls, 13 s of its 19 s. Past this many calls
# after the first failure, the test refuses hypothesis' further attempts before
# calling anything, and the report shows the smallest failing example found by then.
# A count of calls, not of seconds, keeps the grade the same on every machine.
SHRINK_CALLS = 60


class ShrinkBudget:
    """The calls one drawn test may still make to shrink its failing example."""

    def __init__(self) -> None:
        self.start()

    def start(self, limited: bool = True) -> None:
        """A new run of the test: nothing has failed yet; without `limited`, a run
        that shrinks as far as hypothesis goes (see `rejected`)."""
        self.made = 0
        self.failed_at: int | None = None
        self.limited = limited
        # Whether an example was refused. Hypothesis may run an example it ran before
        # (it did on the spawned path, shrinking kv-cache's drop_oldest mistake): if
        # the budget refuses it then, hypothesis sees one example two ways and fails
        # the test as flaky. The test is then run again without a budget: slower,
        # and as deterministic.
        self.rejected = False

    def spend(self) -> None:
        """Count one call, or reject the example drawn for it once the budget is spent.

        Hypothesis replays the failing example it reports as a last step, to see it
        fail again: that replay always runs."""
        self.made += 1
        if (self.limited and self.failed_at is not None
                and self.made - self.failed_at > SHRINK_CALLS and not final_replay()):
            self.rejected = True
            reject()

    def failed(self) -> None:
        if self.failed_at is None:
            self.failed_at = self.made


def final_replay() -> bool:
    """Whether hypothesis is replaying the example it will report (or, where its build
    context cannot be read, whether it may be: then nothing is rejected)."""
    try:
        return getattr(current_build_context(), "is_final", True)
    except InvalidArgument:  # no example being built
        return True


ALPHABET = string.ascii_lowercase + string.ascii_uppercase + " .,!?"


def vocab(size: int) -> dict[int, str]:
    return {i: ALPHABET[i] for i in range(size)}


@st.composite
def random_models(draw: st.DrawFn, max_context: int = 12) -> ModelSpec:
    """Small untrained GPTs of other sizes than the shipped one."""
    n_head = draw(st.sampled_from([1, 2, 4]))
    config = {
        "vocab_size": draw(st.integers(3, 24)),
        "context_length": draw(st.integers(1, max_context)),
        "n_layer": draw(st.integers(1, 2)),
        "n_head": n_head,
        "n_embd": n_head * draw(st.sampled_from([4, 8])),
    }
    return ModelSpec("random", config, draw(st.integers(0, 2**16)))


@st.composite
def token_contexts(draw: st.DrawFn, vocab_size: int, min_length: int = 1,
                   max_length: int = 40) -> torch.Tensor:
    ids = draw(st.lists(st.integers(0, vocab_size - 1), min_size=min_length,
                        max_size=max_length))
    return torch.tensor([ids], dtype=torch.long)


@st.composite
def logits(draw: st.DrawFn, rows: int | None = None, max_vocab: int = 20,
           dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """Logit rows with the awkward cases in reach: huge values, -inf, ties."""
    vocab_size = draw(st.integers(1, max_vocab))
    n_rows = rows if rows is not None else draw(st.integers(1, 3))
    scale = draw(st.sampled_from([1.0, 10.0, 1e4]))
    values = draw(st.lists(
        st.one_of(st.floats(-1, 1, width=32), st.sampled_from([0.0, 0.5, float("-inf")])),
        min_size=n_rows * vocab_size, max_size=n_rows * vocab_size,
    ))
    tensor = torch.tensor(values, dtype=dtype).reshape(n_rows, vocab_size) * scale
    # A row of only -inf has no probabilities at all; keep one finite entry per row.
    for row in tensor:
        if bool(row.isinf().all()):
            row[draw(st.integers(0, vocab_size - 1))] = 0.0
    return tensor


@st.composite
def exact_nucleus_rows(draw: st.DrawFn) -> tuple[torch.Tensor, float]:
    """Logit rows whose probabilities and running totals are exact in float32 and
    float64, and a top_p that lands exactly on one of those totals.

    Each row holds 1, 2, 4 or 16 equal logits (probability 1/n each, exactly),
    the rest being -inf or logits 1e4 below them (probability exactly 0).
    """
    n_rows = draw(st.integers(1, 3), label="rows")
    widths = [draw(st.sampled_from([1, 2, 4, 4, 16]), label="equal logits")
              for _ in range(n_rows)]
    size = max(widths) + draw(st.integers(0, 4), label="other entries")
    rows = []
    for width in widths:
        value = draw(st.sampled_from([0.0, 2.5, -7.25, 1e4]), label="equal value")
        others = [draw(st.sampled_from([float("-inf"), value - 1e4]), label="other")
                  for _ in range(size - width)]
        rows.append(draw(st.permutations([value] * width + others), label="row"))
    steps = max(widths)
    top_p = draw(st.integers(0, steps - 1), label="top_p * steps") / steps
    return torch.tensor(rows), top_p


# -- the arguments of one example, drawn part by part ---------------------------------------
# Each part is drawn with a label: the labels name the parts of the smallest
# failing input in the learner's report.

def model_and_context(data: st.DataObject, windows: int = 3) -> tuple[ModelSpec, torch.Tensor]:
    """A small random model and a context of up to `windows` times its context length."""
    spec = data.draw(random_models(), label="model")
    n = spec.config["context_length"]
    # Half the contexts fit the window (a generation then fills it step by step, from
    # the cache) and half are longer (cropped before the first step). Drawn as a list's
    # own length, contexts were mostly short, and one longer than the window was rare.
    longer = windows > 1 and data.draw(st.booleans(), label="longer than the window")
    length = data.draw(st.integers(n + 1, windows * n) if longer else st.integers(1, n),
                       label="context's length")
    context = data.draw(token_contexts(spec.config["vocab_size"], length, length),
                        label="context")
    return spec, context


def generation_example(data: st.DataObject) -> tuple:
    """(model, new_chars, context, context_length, int_to_char) for a generate()-style
    method, on a small random model; new_chars may slide the window several times."""
    spec, context = model_and_context(data)
    n = spec.config["context_length"]
    new_chars = data.draw(st.integers(0, 3 * n), label="new_chars")
    return spec, new_chars, context, n, vocab(spec.config["vocab_size"])


def logits_example(data: st.DataObject) -> torch.Tensor:
    """Logits of one to three rows, or one row as a 1-D tensor."""
    x = data.draw(logits(), label="logits")
    return x[0] if data.draw(st.booleans(), label="one row as a 1-D tensor") else x
