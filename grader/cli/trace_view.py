"""The trace as text: a table of steps no wider than 80 columns, then the first difference.

Every line is whole plain text; on a terminal the first differing row is also
highlighted. Without a terminal the `>` in front of the row marks it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from grader.cli.trace_steps import Distributions, Run, Step, misled
from grader.wording import count

if TYPE_CHECKING:
    from rich.console import Console

    from grader.cli.trace_plan import Plan

WINDOW_COLUMN = 18
ROWS_BEFORE, ROWS_AFTER = 12, 2  # rows around the first difference
ROWS_WHEN_SAME = 15
# Sampler settings that change the distribution a token is drawn from, with
# the value that leaves it as the model made it.
NEUTRAL_SETTINGS: dict[str, Any] = {"temperature": 1.0, "top_k": 0, "top_p": 1.0,
                                    "no_repeat_ngram_size": 0}
HEADER = (f"{'step':>4}  {'the model saw':<{WINDOW_COLUMN}}  "
          f"{'top reference probabilities':<29}  {'yours':<9}  reference")


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
                 if mine else "(ended)")
    their_pick = (pick(theirs.pick, probs.of(theirs.window, theirs.pick), int_to_char)
                  if theirs else "(ended)")
    shown = tail(window, int_to_char, WINDOW_COLUMN) if mine else "(your run had ended)"
    return (f"{'>' if marked else ' '}{i + 1:>3}  {shown:<{WINDOW_COLUMN}}  {top:<29}  "
            f"{your_pick:<9}  {their_pick}")


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
    parts = [f"prompt {shorten(prompt)} ({count(len(prompt), 'token')})"]
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


def which_case(the_plan: Plan, difference: int | None, traced_cases: int) -> str:
    """Which fixed case is shown, by the id grade prints for it, and why that one."""
    case = f"case [{the_plan.case_id}] ({the_plan.number} of {the_plan.total})"
    if the_plan.picked:
        return f"{case}, picked with --case"
    if difference is not None:
        return f"{case}: the first fixed case where the runs differ"
    skipped = the_plan.total - traced_cases
    if skipped:  # cases on a model whose vocabulary cannot spell the prompt given
        return (f"{case}: no fixed case differs ({skipped} left out: their model "
                "cannot spell your prompt)")
    return f"{case}: no fixed case differs, so here is the first"


def render(out: Console, the_plan: Plan, yours: Run, reference: Run,
           probs: Distributions, difference: int | None, traced_cases: int = 1) -> None:
    """Print the trace of one case, whose first differing step is `difference`;
    `traced_cases` cases were run to find it."""
    from rich.markup import escape

    int_to_char = the_plan.args["int_to_char"]
    whose = "the reference" if the_plan.submission == the_plan.problem.reference else "your"
    say = lambda line="": out.print(escape(line))  # noqa: E731 - learner text is never markup
    say(f"trace of {whose} {the_plan.method}() from {the_plan.submission}")
    say(which_case(the_plan, difference, traced_cases))
    given = f" (with your {' and '.join(the_plan.changed)})" if the_plan.changed else ""
    say(f"{settings(the_plan)}{given}")
    filtered = [n for n, neutral in NEUTRAL_SETTINGS.items()
                if n in the_plan.args and the_plan.args[n] != neutral]
    if filtered:
        say(f"probabilities are the model's own, before {', '.join(filtered)} change them")
    total = max(len(yours.steps), len(reference.steps))
    say()
    say(HEADER)
    shown = rows_to_show(total, difference)
    if shown.start > 0:
        say(f"     (steps 1 to {shown.start}: the same in both runs)")
    for i in shown:
        line = escape(row(i, yours.steps, reference.steps, probs, int_to_char, i == difference))
        out.print(f"[bold red]{line}[/]" if i == difference else line)
    if shown.stop < total:
        rest = total - shown.stop
        more = "the same in both runs" if difference is None else "not shown"
        say(f"     ({rest} more step{'s' * (rest != 1)}, {more})")
    say()
    for line in explain(difference, yours, reference, probs, int_to_char, whose):
        say(line)
    say(f"your text:      {shorten(yours.text, 200)}" if whose == "your"
        else f"traced text:    {shorten(yours.text, 200)}")
    say(f"reference text: {shorten(reference.text, 200)}")


def explain(difference: int | None, yours: Run, reference: Run, probs: Distributions,
            int_to_char: dict[int, str], whose: str) -> list[str]:
    """The first differing step in words: both windows, both picks, the probabilities."""
    if difference is None:
        if whose != "your":
            return ["no step differs: the reference traced against itself"]
        return [f"no step differs: your run fed the model the same {len(yours.steps)} "
                "windows as the reference and picked the same tokens"]
    n = difference + 1
    if difference >= len(yours.steps):
        return [f"step {n} differs: {whose} run made {len(yours.steps)} model calls and "
                f"stopped; the reference made {len(reference.steps)}"]
    if difference >= len(reference.steps):
        return [f"step {n} differs: the reference stopped after {len(reference.steps)} model "
                f"calls; {whose} run went on to {len(yours.steps)}"]
    mine, theirs = yours.steps[difference], reference.steps[difference]

    def top(window: tuple[int, ...]) -> str:
        return ", ".join(f"{char(t, int_to_char)} {p:.3f}" for t, p in probs.top(window, 5))

    lines = [f"step {n} is the first that differs (it makes new character {n}):"]
    if mine.window != theirs.window:
        lines += [f"  the model saw    {tail(mine.window, int_to_char, 50)} "
                  f"({count(len(mine.window), 'token')}) in {whose} run",
                  f"  where it should  {tail(theirs.window, int_to_char, 50)} "
                  f"({count(len(theirs.window), 'token')}), as in the reference",
                  f"  top probabilities after {whose} window: {top(mine.window) or '-'}",
                  f"  after the reference's window: {top(theirs.window) or '-'}"]
    else:
        lines += [f"  both saw {tail(mine.window, int_to_char, 50)} "
                  f"({count(len(mine.window), 'token')})",
                  f"  top reference probabilities: {top(mine.window)}"]
    strayed = misled(mine, probs)
    if strayed is not None and mine.told is not None:
        token, gap = strayed
        told = ", ".join(f"{char(int(t), int_to_char)} {float(p):.3f}"
                         for p, t in zip(*mine.told.topk(min(5, mine.told.numel()))))
        lines += [f"  but the model told {whose} run otherwise: {told}",
                  f"  ({char(token, int_to_char)} off by {gap:.3f}): the cache it was given "
                  "does not hold the keys and values a fresh pass over this window makes"]
    mine_p, theirs_p = your_probability(mine, probs), probs.of(theirs.window, theirs.pick)
    def said(step: Step, p: float | None) -> str:
        if step.pick is None:
            return "? (its text does not show it: the end token, or cut at a stop string)"
        return f"{char(step.pick, int_to_char)} (p={prob_long(p)})"

    lines.append(f"  {whose} pick {said(mine, mine_p)}, the reference's {said(theirs, theirs_p)}")
    return lines


def prob_long(p: float | None) -> str:
    return "?" if p is None else f"{p:.4f}"
