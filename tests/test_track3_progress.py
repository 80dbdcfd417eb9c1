"""`train --yours`'s time-left column: known from the first chunk of steps on.

Rich's own estimate reads only the updates of its last 30 seconds, so with a
chunk of slow steps between updates it showed `-:--:--` most of the time.
"""

from __future__ import annotations

import io
import time

from rich.console import Console
from rich.progress import Progress

from grader.learner.training.train_worker import time_left, time_left_column


def test_the_time_left_counts_down_from_the_pace_so_far() -> None:
    assert time_left(None, 0.0, 100, 5.0) == "?"
    # 2 s a step, 100 steps left, measured 10 s ago: 190 s.
    assert time_left(2.0, 100.0, 100, 110.0) == "3:10"
    assert time_left(2.0, 100.0, 1, 500.0) == "0:00"  # late, never negative


def test_the_column_shows_a_time_after_one_chunk_of_slow_steps() -> None:
    """One update after a chunk of steps that took a minute: rich's own
    TimeRemainingColumn has only one sample in its window and shows -:--:--."""
    clock = [0.0]
    out = io.StringIO()
    console = Console(file=out, width=100, force_terminal=False)
    with Progress(time_left_column(), console=console, get_time=lambda: clock[0],
                  auto_refresh=False) as progress:
        task = progress.add_task("train", total=3000, per_step=None)
        assert "?" in str(progress.columns[0].render(progress.tasks[task]))
        clock[0] = 60.0
        now = time.perf_counter()
        progress.update(task, completed=25, per_step=60.0 / 25, at=now)
        shown = str(progress.columns[0].render(progress.tasks[task]))
    assert shown != "-:--:--"
    # 2975 steps left at 2.4 s a step: 7140 s, less the moment since it was measured.
    hours, minutes, _ = shown.split(":")
    assert (int(hours), int(minutes)) in ((1, 58), (1, 59))
