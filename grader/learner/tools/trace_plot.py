"""`gpt-kata trace --plot`: the distributions at one step, as a bar chart.

matplotlib is imported here only, as `train` does: tracing without a picture
neither pays for it nor needs it (the command checks it is installed first).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from grader.learner.tools.trace_steps import Distributions, Run, misled
from grader.locale import tr
from grader.locale.fonts import picture_language

if TYPE_CHECKING:
    from grader.learner.tools.trace_plan import Plan

BARS = 20  # the most likely tokens shown; the rest of 40 or more would be unreadable


def label(token: int, int_to_char: dict[int, str]) -> str:
    """A token as an axis label: whitespace is named, since a bar labelled ' ' says nothing."""
    names = {" ": tr("space"), "\n": "\\n", "\t": "\\t"}
    c = int_to_char.get(token, "?")
    return names.get(c, c)


def plot(path: Path, the_plan: Plan, yours: Run, reference: Run, probs: Distributions,
         step: int, differs: bool) -> bool:
    """Draw step `step` (an index): the reference's probabilities after your window
    and, where it differs, after the reference's, with both picks marked. True when
    the picture is in English for want of a font that draws the language in use."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with picture_language(plt) as in_english:
        draw(plt, path, the_plan, yours, reference, probs, step, differs)
    return in_english


def draw(plt: Any, path: Path, the_plan: Plan, yours: Run, reference: Run,
         probs: Distributions, step: int, differs: bool) -> None:
    int_to_char = the_plan.args["int_to_char"]
    mine = yours.steps[step] if step < len(yours.steps) else None
    theirs = reference.steps[step] if step < len(reference.steps) else None
    series = []
    if mine is not None and mine.told is not None and misled(mine, probs) is not None:
        series.append((tr("as the model told your run"), mine.told, "tab:orange"))
    if mine is not None and probs(mine.window) is not None:
        series.append((tr("after your window, read afresh"), probs(mine.window), "tab:red"))
    if theirs is not None and (mine is None or theirs.window != mine.window):
        series.append((tr("after the reference's window"), probs(theirs.window), "tab:blue"))
    elif series:
        series[-1] = (tr("after the window (the same in both runs)"), series[-1][1],
                      "tab:gray")
    shown = leading_tokens(series, {s.pick for s in (mine, theirs) if s is not None})

    fig, ax = plt.subplots(figsize=(9, 4.5), dpi=100)
    width = 0.8 / max(len(series), 1)
    for n, (name, values, colour) in enumerate(series):
        xs = [i + (n - (len(series) - 1) / 2) * width for i in range(len(shown))]
        ax.bar(xs, [float(values[t]) for t in shown], width, label=name, color=colour,
               alpha=0.75)
    for step_of, whose, marker, colour in ((mine, tr("your pick"), "v", "darkred"),
                                           (theirs, tr("the reference's pick"), "^", "navy")):
        if step_of is not None and step_of.pick in shown:
            x = shown.index(step_of.pick)
            top = max(float(values[step_of.pick]) for _, values, _ in series) if series else 0
            ax.plot([x], [top + 0.02], marker=marker, color=colour, markersize=11,
                    linestyle="none", label=f"{whose}: {label(step_of.pick, int_to_char)}")
    ax.set_xticks(range(len(shown)), [label(t, int_to_char) for t in shown])
    ax.set_xlabel(tr("next character, the most likely first {series}", series=series[0][0])
                  if series else tr("next character"))
    highest = max((float(values[t]) for _, values, _ in series for t in shown), default=1.0)
    ax.set_ylim(0, highest * 1.4 + 0.03)  # room above the bars for the markers and legend
    ax.set_yticks([t for t in ax.get_yticks() if 0 <= t <= 1])  # no probability above 1
    ax.set_ylabel(tr("probability"))
    state = tr("the first step that differs") if differs else tr("no step differs")
    ax.set_title(tr("{folder} [{case}], step {step}: {state}", folder=the_plan.problem.folder,
                    case=the_plan.case_id, step=step + 1, state=state))
    ax.grid(axis="y", alpha=0.3)
    ax.legend(loc="upper right")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def leading_tokens(series: list, picks: set[int | None]) -> list[int]:
    """The most likely tokens of the first series, and the picks wherever they rank."""
    if not series:
        return sorted(p for p in picks if p is not None)
    values = series[0][1]
    order = [int(t) for t in values.argsort(descending=True)[:BARS]]
    extra = [p for p in picks if p is not None and p not in order and 0 <= p < len(values)]
    return order + sorted(extra)
