"""A failed check as data: its kind, what it says, its fixes and the mistake it names.

A failure's text is made from these parts only where it is shown: the report
shows what it says with the failing call's inputs, `gpt-kata hint` the fix, and
the JSON report carries the inputs, the answer and the named mistake as data.
Nothing downstream reads the text back.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from grader.locale import tr, translated

if TYPE_CHECKING:
    from grader.sandbox.wire.printed import Printed

# What kind of failure a check's result is (the JSON report's `kind`).
NOT_IMPLEMENTED = "not-implemented"  # the starter still raises NotImplementedError
UNAVAILABLE = "unavailable"  # the file cannot be graded at all: syntax error, crash on load
STUCK = "stuck"  # the learner's code crashed the worker or ran out of time
# It ran out of time on a busy machine that gave it too little CPU to tell slow code
# from an endless loop: a gradebook grades the learner once more at its next run.
BUSY = "busy"
WRONG = "wrong"  # an answer, an exception or a side effect that is not the right one
GRADER_ERROR = "grader-error"  # the grader's own fault, never the learner's
KINDS = (NOT_IMPLEMENTED, UNAVAILABLE, STUCK, BUSY, WRONG, GRADER_ERROR)

# A mistake's id: "<problem slug>/<kebab-case words>".
MISTAKE_ID = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*/[a-z0-9]+(?:-[a-z0-9]+)*")


def kebab(words: str) -> str:
    """`words` in lower case, each run of other characters one hyphen."""
    return re.sub(r"[^a-z0-9]+", "-", words.lower()).strip("-")


def without_asides(name: str) -> str:
    """A mistake's name without what it says in parentheses (which explains it, and
    may be reworded without renaming it)."""
    kept, depth = [], 0
    for char in name:
        if char == "(":
            depth += 1
        elif char == ")" and depth:
            depth -= 1
        elif not depth:
            kept.append(char)
    return "".join(kept)


@dataclass(init=False)
class Mistake:
    """A known wrong answer: if the learner's outcome equals this one's, say so.

    Each of `runs` makes the mistake in one way, on the check's arguments; a
    mistake that can be made in several ways has several. Its id within its
    problem is its name in kebab case, less what it says in parentheses, or
    `id` where the name changed and the id must not (expected.toml files and
    gradebooks refer to it).
    """

    name: str
    hint: str
    runs: tuple[Callable[..., Any], ...]
    key: str

    def __init__(self, name: str, hint: str, *runs: Callable[..., Any],
                 id: str | None = None) -> None:  # noqa: A002 - the word the reports use
        self.name, self.hint, self.runs = name, hint, runs
        self.key = id or kebab(without_asides(name))

    def named(self, slug: str) -> NamedMistake:
        return NamedMistake(f"{slug}/{self.key}", self.name, self.hint)


@dataclass(frozen=True)
class NamedMistake:
    """The mistake a failure names, as the report carries it."""

    id: str
    name: str
    hint: str  # its fix, shown only when the learner asks (`gpt-kata hint`)

    @property
    def said(self) -> str:
        """How a failure message names it."""
        return said_of(self.name)


def said_of(name: str) -> str:
    return tr("This is what happens when you {name}.", name=translated(name))


@dataclass(frozen=True)
class Piece:
    """One part of a failure's text, with the fix it offers and the mistake it names."""

    text: str
    hint: str = ""
    mistake: Mistake | None = None


@dataclass(frozen=True)
class Diagnosis:
    """What a failure says, piece by piece.

    A diagnosis is added to a failure's message, and diagnoses to each other,
    with `+`; plain text added is a piece without a fix.
    """

    pieces: tuple[Piece, ...] = ()

    @classmethod
    def of(cls, text: str, hint: str = "", mistake: Mistake | None = None) -> Diagnosis:
        return cls((Piece(text, hint, mistake),))

    def __bool__(self) -> bool:
        return any(p.text or p.hint for p in self.pieces)

    def __add__(self, other: Diagnosis | str) -> Diagnosis:
        return Diagnosis(self.pieces + as_diagnosis(other).pieces)

    def __radd__(self, other: str) -> Diagnosis:
        return as_diagnosis(other) + self

    @property
    def says(self) -> str:
        """The text without its fixes: what the report shows."""
        return "".join(p.text for p in self.pieces)

    @property
    def hints(self) -> list[str]:
        return [p.hint for p in self.pieces if p.hint]

    @property
    def mistake(self) -> Mistake | None:
        return next((p.mistake for p in self.pieces if p.mistake), None)

    @property
    def whole(self) -> str:
        """The text with each fix after its piece, as a traceback shows it."""
        return "".join(p.text + (" " + tr("Hint: {hint}", hint=translated(p.hint))
                                 if p.hint else "") for p in self.pieces)



# Side effects the kata and the learners' copy both fail, in the same words.
def changed_its_input(method: str, name: str) -> Piece:
    return Piece(tr("{method}() changed its input `{name}` in place, and the caller still "
                    "needs it as it was.", method=method, name=name),
                 tr("work on a copy (.clone()) or build a new tensor"))


def gave_two_outputs(case: str) -> str:
    return tr("called twice on case {case} with the same weights and input, the module "
              "gave two different outputs: is a dropout left active? The grader calls it "
              "in evaluation mode (module.eval()), where nn.Dropout does nothing, but "
              "F.dropout(x, p) drops unless given training=self.training; use nn.Dropout, "
              "or leave dropout out", case=case)


def returned_its_input(method: str, name: str) -> Piece:
    return Piece(tr("{method}() returned its input `{name}` itself (or a view of it), not a "
                    "new tensor: a caller that changes the result in place would change its "
                    "`{name}` too.", method=method, name=name),
                 tr("return a new tensor even where nothing changes: `{name}.clone()`",
                    name=name))


def as_diagnosis(value: Diagnosis | str | None) -> Diagnosis:
    if isinstance(value, Diagnosis):
        return value
    return Diagnosis.of(value) if value else Diagnosis()


def naming(mistake: Mistake) -> Diagnosis:
    """The diagnosis that names `mistake`, its fix aside."""
    return Diagnosis.of("\n" + said_of(mistake.name), mistake.hint, mistake)


class GradeFailure(AssertionError):
    """A check failed; the message is for the learner, not a traceback.

    `hint` is the fix the message offers, kept apart from it (`gpt-kata hint`
    shows it). `explain`, if given, adds the diagnosis of a known mistake (a
    Diagnosis, or plain text). It runs only when the failure is read:
    hypothesis raises many failures while it shrinks an example, and only the
    last one is shown. `kind` says what kind of failure it is.
    """

    kind = WRONG

    def __init__(self, message: str,
                 explain: Callable[[], Diagnosis | str] | None = None, *,
                 hint: str = "", kind: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.explain = explain
        self.hint = hint
        if kind is not None:
            self.kind = kind
        self._diagnosis: Diagnosis | None = None
        # Set by the contract for the call that failed: its arguments as data, each by
        # name with what it was (grader/grading/subject/inputs.py), and the learner's answer
        # described alike, for the JSON report; the same arguments as the report shows
        # them under the message, in the learner's terms (so hypothesis' own notes are
        # not needed), and the fixed case they are of (None for a drawn example); and
        # what the call printed.
        self.arguments: dict[str, str] | None = None
        self.got: str | None = None
        self.inputs: str | None = None
        self.case_id: str | None = None
        self.output: Printed | None = None

    @property
    def diagnosis(self) -> Diagnosis:
        """The message, its fix and what `explain` adds, piece by piece."""
        if self._diagnosis is None:
            self._diagnosis = Diagnosis.of(self.message, self.hint) + self._explained()
        return self._diagnosis

    def _explained(self) -> Diagnosis:
        """What `explain` adds. It reads the learner's answer, which may be any value a
        worker can send: where naming the mistake fails on it, the failure keeps its own
        message and says so. Raised, the error would come out of pytest's report of the
        check and end the whole grade, every problem after this one lost."""
        if not self.explain:
            return Diagnosis()
        try:
            return as_diagnosis(self.explain())
        except Exception as exc:  # noqa: BLE001 - any error: the verdict stands without it
            return Diagnosis.of("\n" + tr("(the grader could not name the mistake: {error})",
                                          error=f"{type(exc).__name__}: {exc}"))

    def __str__(self) -> str:
        return self.diagnosis.whole


class SubmissionUnavailable(GradeFailure):
    """The submission cannot be graded at all (syntax error, starter, crash on load)."""

    kind = UNAVAILABLE


class GraderIntegrityError(Exception):
    """The grader's own inputs are broken: an error, never a learner's failure."""
