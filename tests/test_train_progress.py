"""Training shows its progress as it happens, whatever the learner's loop returns.

A loop that returns its log (problem 30's reference does) runs every step before the
log comes out; the worker runs it in a thread and reports the optimizer's steps and
the model's evaluations as they happen (harnesses.train_loop_progress), so that
`train --yours` shows a line at every tenth of the steps, and loss_log.tsv holds the
time each evaluation ended. No wall-clock limit is tested: only how many reports
come, and that their times never go back and do grow.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
import torch
from conftest import ROOT, module_from
from test_train_yours import gpt_kata
from test_train_yours_loop import with_loop

from grader.learner.errors import UsageError
from grader.learner.training.command import TenthLines
from grader.learner.training.train_yours_loop import loop_arguments, read_progress
from grader.model.gpt import GPTConfig
from grader.model.training import TrainSettings
from grader.sandbox.worker import harnesses

STEPS = 40
LINE = re.compile(r"step (\d+)/(\d+)  (\d+):(\d\d) since the first step  ETA \d+:\d\d")


REFERENCE_LOOP = ROOT / "solutions" / "30-train-loop" / "solution.py"


def loop_module(tmp_path: Path, name: str, source: str):
    file = tmp_path / f"{name}.py"
    file.write_text(source)
    return module_from(file, f"progress_{name}")


def watched_run(loop, steps: int) -> tuple[list[dict], list[float]]:
    """The harness in this process, on the reference GPT and `loop`: every report until
    the loop is done, and when each was heard."""
    text = (ROOT / "data" / "corpus.txt").read_text(encoding="utf-8")[:20_000]
    chars = sorted(set(text))
    data = torch.tensor([chars.index(c) for c in text])
    config = GPTConfig(vocab_size=len(chars))
    arguments = loop_arguments(steps, TrainSettings(steps=steps), config.context_length)
    threads = torch.get_num_threads()
    reports, heard = [], []
    try:
        harnesses.train_loop_begin(loop, str(ROOT / "solutions" / "23-gpt" / "solution.py"),
                                   config.to_dict(), 0, data[:18_000], data[18_000:],
                                   arguments, 1)
        while not reports or not reports[-1]["done"]:
            reports.append(harnesses.train_loop_progress(loop))
            heard.append(time.perf_counter())
    finally:
        torch.set_num_threads(threads)
    return reports, heard


@pytest.mark.parametrize("kind", ["returns", "yields"])
def test_a_loop_reports_each_step_and_evaluation_as_it_runs(tmp_path, kind):
    """A report for every step of a short run (a stride is a fiftieth of the steps, at
    least one) and the two evaluations the loop makes (at 0 and at the end), whether
    the loop returns its log (the reference) or yields each entry (the reference with
    `yield` for `log.append`)."""
    steps = 12
    source = REFERENCE_LOOP.read_text()
    if kind == "yields":
        source = source.replace("log.append((step, *(self.evaluate(model, batches) for "
                                "batches in fixed)))",
                                "yield (step, *(self.evaluate(model, batches) for batches "
                                "in fixed))").replace("        return log\n", "")
        assert "yield" in source and "return log" not in source
    reports, heard = watched_run(loop_module(tmp_path, kind, source), steps)
    taken = [report["steps"] for report in reports]
    assert set(range(1, steps + 1)) <= set(taken), taken  # every step, none skipped
    last = 0
    for report in reports:  # each as the grader reads it: never fewer steps than before
        last = read_progress(report, last, steps)[0]
    assert [s for report in reports for s in report["evaluated"]] == [0, steps]
    assert [entry[0] for report in reports for entry in report["log"]] == [0, steps]
    first_entry = next(report["steps"] for report in reports if report["log"])
    if kind == "returns":  # its log comes once every step is taken
        assert first_entry == steps
    else:  # the entry of step 0 as it was yielded, before the second step
        assert first_entry <= 1
    assert heard == sorted(heard) and heard[-1] > heard[0]


def test_an_error_of_the_loop_while_it_runs_is_raised_by_the_report(tmp_path):
    source = REFERENCE_LOOP.read_text().replace(
        "            optimizer.step()\n",
        "            optimizer.step()\n"
        "            if step == 4:\n"
        "                raise ValueError('the fifth step went wrong')\n")
    assert "fifth step" in source
    with pytest.raises(ValueError, match="the fifth step went wrong"):
        watched_run(loop_module(tmp_path, "raises", source), 12)


@pytest.mark.parametrize("reply", [
    {"steps": 5, "evaluated": [], "log": [], "done": False},  # fewer steps than before
    {"steps": 7, "evaluated": [8], "log": [], "done": False},  # an evaluation not reached
    {"steps": 7, "evaluated": [7, 6], "log": [], "done": False},  # out of order
    {"steps": True, "evaluated": [], "log": [], "done": False},
    {"steps": 7, "evaluated": [], "log": [], "done": 1},
    {"steps": 7, "evaluated": [], "log": []},
    [7, [], [], False],
])
def test_a_progress_report_that_is_not_the_harnesss_is_refused(reply):
    with pytest.raises(UsageError, match="cannot be read as progress"):
        read_progress(reply, 6, 10)


def test_a_loop_that_steps_more_often_than_the_run_is_told_so():
    with pytest.raises(UsageError, match="took 11 optimizer steps, more than the run's 10"):
        read_progress({"steps": 11, "evaluated": [], "log": [], "done": False}, 6, 10)


def test_a_line_comes_at_each_tenth_with_the_time_left_at_the_pace_so_far(capsys):
    lines = TenthLines()
    for step in range(0, 21):
        lines(step, 20, 1.5 * step)  # 1.5 s a step
    shown = capsys.readouterr().out.splitlines()
    assert [int(LINE.match(line)[1]) for line in shown] == list(range(2, 21, 2))
    # At step 2: 3 s of steps, 18 left at 1.5 s a step.
    assert shown[0] == "step 2/20  0:03 since the first step  ETA 0:27"


def test_train_yours_with_a_loop_that_returns_its_log_shows_every_tenth_as_it_goes(tmp_path):
    folder = with_loop(tmp_path, ROOT / "solutions" / "30-train-loop" / "solution.py")
    run = tmp_path / "run"
    done = gpt_kata(folder, "train", "--yours", "--steps", str(STEPS), "--threads", "1",
                    "--out", str(run))
    assert done.returncode == 0, done.stderr
    lines = [LINE.match(line) for line in done.stdout.splitlines()]
    shown = [(int(m[1]), 60 * int(m[3]) + int(m[4])) for m in lines if m]
    # A line at each tenth of the steps, in order, the time since the first step
    # never going back.
    assert [step * 10 // STEPS for step, _ in shown] == list(range(1, 11)), done.stdout
    assert [seconds for _, seconds in shown] == sorted(seconds for _, seconds in shown)
    # The losses came only at the end, but each evaluation has the time it ended.
    rows = [row.split("\t") for row in (run / "loss_log.tsv").read_text().splitlines()[1:]]
    assert [int(row[0]) for row in rows] == [0, STEPS]
    assert float(rows[1][3]) > float(rows[0][3])
