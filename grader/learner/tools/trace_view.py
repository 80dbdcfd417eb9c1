"""The trace as text: a table of steps no wider than 80 columns, then the first difference.

Every line is whole plain text; on a terminal the first differing row is also
highlighted. Without a terminal the `>` in front of the row marks it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from grader.learner.tools.trace_plan import joined
from grader.learner.tools.trace_steps import Distributions, Run, Step, misled
from grader.locale import tr
from grader.wording import a_kind, tokens

if TYPE_CHECKING:
    from rich.console import Console

    from grader.learner.tools.trace_plan import Plan

WINDOW_COLUMN = 18
ROWS_BEFORE, ROWS_AFTER = 12, 2  # rows around the first difference
ROWS_WHEN_SAME = 15
# Sampler settings that change the distribution a token is drawn from, with
# the value that leaves it as the model made it.
NEUTRAL_SETTINGS: dict[str, Any] = {"temperature": 1.0, "top_k": 0, "top_p": 1.0,
                                    "no_repeat_ngram_size": 0}


def header() -> str:
    """The table's header, its words in the language in use, in the rows' columns: the
    probabilities are the model's own after the window the traced run fed it."""
    return (f"{right(tr('step'), 4)}  {left(tr('the model saw'), WINDOW_COLUMN)}  "
            f"{left(tr('top probabilities after it'), 29)}  {left(tr('yours'), 9)}  "
            f"{tr('reference')}")


def left(text: str, width: int) -> str:
    """`text` padded to `width` columns of the console's cells (a Chinese character
    takes two), as f"{text:<width}" pads plain ASCII."""
    from rich.cells import cell_len

    return text + " " * max(0, width - cell_len(text))


def right(text: str, width: int) -> str:
    from rich.cells import cell_len

    return " " * max(0, width - cell_len(text)) + text


def char(token: int | None, int_to_char: dict[int, str]) -> str:
    if token is None:
        return "?"
    return repr(int_to_char.get(token, "?"))


def escaped(text: str) -> list[str]:
    """Each character as it is written inside quotes: a newline takes two columns."""
    return [repr(c)[1:-1] if c != "'" else "'" for c in text]


def tail(window: tuple[int, ...], int_to_char: dict[int, str], width: int) -> str:
    """The end of the window in quotes, at most `width` columns, '…' where it is cut."""
    pieces = escaped("".join(int_to_char.get(t, "?") for t in window))
    room = width - 2  # the quotes
    kept: list[str] = []
    used = 0
    for piece in reversed(pieces):
        if used + len(piece) > room:
            break
        kept.append(piece)
        used += len(piece)
    if len(kept) == len(pieces):
        return "'" + "".join(reversed(kept)) + "'"
    while kept and used + 1 > room:  # room for the ellipsis
        used -= len(kept.pop())
    return "…'" + "".join(reversed(kept)) + "'"


def prob(p: float | None) -> str:
    if p is None:
        return "  - "
    if p >= 0.9995:
        return "1.00"
    return f"{p:.3f}"[1:] if p >= 0.0005 else "<.001"


def pick(token: int | None, p: float | None, int_to_char: dict[int, str]) -> str:
    return f"{char(token, int_to_char):<4} {prob(p)}"


def row(i: int, yours: list[Step], reference: list[Step], probs: Distributions,
        int_to_char: dict[int, str], marked: bool) -> str:
    mine = yours[i] if i < len(yours) else None
    theirs = reference[i] if i < len(reference) else None
    window = mine.window if mine else theirs.window if theirs else ()
    top = " ".join(f"{char(t, int_to_char):<4} {prob(p):<4}" for t, p in probs.top(window, 3))
    your_pick = (pick(mine.pick, your_probability(mine, probs), int_to_char)
                 if mine else tr("(ended)"))
    their_pick = (pick(theirs.pick, probs.of(theirs.window, theirs.pick), int_to_char)
                  if theirs else tr("(ended)"))
    shown = tail(window, int_to_char, WINDOW_COLUMN) if mine else tr("(your run had ended)")
    return (f"{'>' if marked else ' '}{i + 1:>3}  {left(shown, WINDOW_COLUMN)}  {top:<29}  "
            f"{left(your_pick, 9)}  {their_pick}")


def your_probability(step: Step, probs: Distributions) -> float | None:
    """The pick's probability as the model gave it to the run (with a cache, that can
    differ from the window read afresh)."""
    if step.told is not None and step.pick is not None and 0 <= step.pick < len(step.told):
        return float(step.told[step.pick])
    return probs.of(step.window, step.pick)


def rows_to_show(total: int, difference: int | None) -> range:
    if difference is None:
        return range(min(total, ROWS_WHEN_SAME))
    return range(max(0, difference - ROWS_BEFORE), min(total, difference + ROWS_AFTER + 1))


def settings(the_plan: Plan) -> str:
    """The arguments of the run in the learner's terms: prompt, count, the rest."""
    int_to_char = the_plan.args["int_to_char"]
    prompt = "".join(int_to_char.get(int(t), "?") for t in the_plan.args["context"][0].tolist())
    parts = [tr("prompt {prompt} ({tokens})", prompt=shorten(prompt),
                tokens=tokens(len(prompt)))]
    for name in the_plan.names:
        value = the_plan.args[name]
        if name in ("model", "context", "int_to_char"):
            continue
        if name == "eos_id" and isinstance(value, int):
            parts.append(f"eos_id {value} ({char(value, int_to_char)})")
        else:
            parts.append(f"{name} {value!r}")
    return ", ".join(parts)


def shorten(text: str, limit: int = 60) -> str:
    return repr(text) if len(text) <= limit else repr("…" + text[-limit:])


def which_case(the_plan: Plan, difference: int | None, traced_cases: int,
               texts_differ: bool = False) -> str:
    """Which fixed case is shown, by the id grade prints for it, and why that one."""
    case = tr("case [{case}] ({number} of {total})", case=the_plan.case_id,
              number=the_plan.number, total=the_plan.total)
    if the_plan.picked:
        return tr("{case}, picked with --case", case=case)
    if difference is not None or texts_differ:
        return tr("{case}: the first fixed case where the runs differ", case=case)
    skipped = the_plan.total - traced_cases
    if the_plan.changed:
        # Run with the learner's own arguments, the cases say nothing of the grade's.
        left_out = (" " + tr("({skipped} left out: their model cannot spell your prompt)",
                             skipped=skipped)) if skipped else ""
        return tr("{case}, with your {changed}: no case differs when run with them{left_out}; "
                  "`gpt-kata trace {slug}` alone traces the cases as the grade runs them",
                  case=case, changed=joined(the_plan.changed), left_out=left_out,
                  slug=the_plan.problem.slug)
    if skipped:  # cases on a model whose vocabulary cannot spell the prompt given
        return tr("{case}: no fixed case differs ({skipped} left out: their model "
                  "cannot spell your prompt)", case=case, skipped=skipped)
    return tr("{case}: no fixed case differs, so here is the first", case=case)


def render(out: Console, the_plan: Plan, yours: Run, reference: Run,
           probs: Distributions, difference: int | None, traced_cases: int = 1) -> None:
    """Print the trace of one case, whose first differing step is `difference`;
    `traced_cases` cases were run to find it."""
    from rich.markup import escape

    int_to_char = the_plan.args["int_to_char"]
    whose = "the reference" if the_plan.submission == the_plan.problem.reference else "your"
    say = lambda line="": out.print(escape(line))  # noqa: E731 - learner text is never markup
    say(tr("trace of your {method}() from {submission}", method=the_plan.method,
           submission=the_plan.submission) if whose == "your" else
        tr("trace of the reference {method}() from {submission}", method=the_plan.method,
           submission=the_plan.submission))
    say(which_case(the_plan, difference, traced_cases, yours.text != reference.text))
    given = (" " + tr("(with your {changed})", changed=joined(the_plan.changed))
             if the_plan.changed else "")
    say(f"{settings(the_plan)}{given}")
    filtered = [n for n, neutral in NEUTRAL_SETTINGS.items()
                if n in the_plan.args and the_plan.args[n] != neutral]
    if filtered:
        say(tr("probabilities are the model's own, before {settings} change them",
               settings=", ".join(filtered)))
    total = max(len(yours.steps), len(reference.steps))
    say()
    say(header())
    shown = rows_to_show(total, difference)
    if shown.start > 0:
        say("     " + tr("(steps 1 to {start}: the same in both runs)", start=shown.start))
    for i in shown:
        line = escape(row(i, yours.steps, reference.steps, probs, int_to_char, i == difference))
        out.print(f"[bold red]{line}[/]" if i == difference else line)
    if shown.stop < total:
        rest = total - shown.stop
        more = tr("the same in both runs") if difference is None else tr("not shown")
        say("     " + (tr("({rest} more step, {more})", rest=rest, more=more) if rest == 1
                       else tr("({rest} more steps, {more})", rest=rest, more=more)))
    say()
    for line in explain(difference, yours, reference, probs, int_to_char, whose):
        say(line)
    say(tr("your text:      {text}", text=shorten(yours.text, 200)) if whose == "your"
        else tr("traced text:    {text}", text=shorten(yours.text, 200)))
    say(tr("reference text: {text}", text=shorten(reference.text, 200)))


def named(whose: str) -> dict[str, str]:
    """The traced run, its window and its pick, as the messages name them: "your run",
    or "the reference run" where the reference is traced against itself."""
    if whose == "your":
        return {"run": tr("your run"), "window": tr("your window"), "pick": tr("your pick")}
    return {"run": tr("the reference run"), "window": tr("the reference window"),
            "pick": tr("the reference pick")}


def explain(difference: int | None, yours: Run, reference: Run, probs: Distributions,
            int_to_char: dict[int, str], whose: str) -> list[str]:
    """The first differing step in words: both windows, both picks, the probabilities."""
    if yours.not_text:
        # No text to read the picks from: the steps cannot be told apart by it, and the
        # grade fails the answer whatever they were.
        return [tr("{run} returns {kind}, not text: the grade fails it for that, whatever "
                   "its steps (return a str)", run=named(whose)["run"],
                   kind=a_kind(yours.not_text))]
    if difference is None:
        if whose != "your":
            return [tr("no step differs: the reference traced against itself")]
        if yours.text != reference.text:
            # The same picks, another text: what the loop returns is made otherwise (a
            # stop string cut at the wrong place, the prompt left in, a character lost).
            return [tr("no step differs: your run fed the model the same {count} windows as "
                       "the reference and picked the same tokens, but it returns another "
                       "text: the difference is in how the text is made from the picks "
                       "(where it ends, or what it keeps), not in any step",
                       count=len(yours.steps))]
        return [tr("no step differs: your run fed the model the same {count} windows as the "
                   "reference and picked the same tokens", count=len(yours.steps))]
    n = difference + 1
    run, run_window, run_pick = named(whose).values()
    if difference >= len(yours.steps):
        return [tr("step {n} differs: {run} made {yours} model calls and stopped; the "
                   "reference made {reference}", n=n, run=run, yours=len(yours.steps),
                   reference=len(reference.steps))]
    if difference >= len(reference.steps):
        return [tr("step {n} differs: the reference stopped after {reference} model calls; "
                   "{run} went on to {yours}", n=n, run=run, yours=len(yours.steps),
                   reference=len(reference.steps))]
    mine, theirs = yours.steps[difference], reference.steps[difference]

    def top(window: tuple[int, ...]) -> str:
        return ", ".join(f"{char(t, int_to_char)} {p:.3f}" for t, p in probs.top(window, 5))

    lines = [tr("step {n} is the first that differs (it makes new character {n}):", n=n)]
    if mine.window != theirs.window:
        lines += ["  " + tr("the model saw    {window} ({tokens}) in {run}",
                            window=tail(mine.window, int_to_char, 50),
                            tokens=tokens(len(mine.window)), run=run),
                  "  " + tr("where it should  {window} ({tokens}), as in the reference",
                            window=tail(theirs.window, int_to_char, 50),
                            tokens=tokens(len(theirs.window))),
                  "  " + tr("top probabilities after {window}: {top}", window=run_window,
                            top=top(mine.window) or "-"),
                  "  " + tr("after the reference's window: {top}",
                            top=top(theirs.window) or "-")]
    else:
        lines += ["  " + tr("both saw {window} ({tokens})",
                            window=tail(mine.window, int_to_char, 50),
                            tokens=tokens(len(mine.window))),
                  "  " + tr("top reference probabilities: {top}", top=top(mine.window))]
    strayed = misled(mine, probs)
    if strayed is not None and mine.told is not None:
        token, gap = strayed
        told = ", ".join(f"{char(int(t), int_to_char)} {float(p):.3f}"
                         for p, t in zip(*mine.told.topk(min(5, mine.told.numel()))))
        lines += ["  " + tr("but the model told {run} otherwise: {told}", run=run,
                            told=told),
                  "  " + tr("({token} off by {gap:.3f}): the cache it was given does not hold "
                            "the keys and values a fresh pass over this window makes",
                            token=char(token, int_to_char), gap=gap)]
    mine_p, theirs_p = your_probability(mine, probs), probs.of(theirs.window, theirs.pick)
    def picked(step: Step, p: float | None) -> str:
        if step.pick is None:
            return tr("? (its text does not show it: the end token, or cut at a stop string)")
        return f"{char(step.pick, int_to_char)} (p={prob_long(p)})"

    lines.append("  " + tr("{pick} {mine}, the reference's {theirs}", pick=run_pick,
                           mine=picked(mine, mine_p), theirs=picked(theirs, theirs_p)))
    return lines


def prob_long(p: float | None) -> str:
    return "?" if p is None else f"{p:.4f}"
