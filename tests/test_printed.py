"""What a submission printed, cut three times on its way to a report, keeps the count of
every line it printed: each cut is a number among the lines, never text read back."""

from __future__ import annotations

import re
from pathlib import Path

from grader.reports.report import cut_output
from grader.sandbox.wire.printed import CALL_OUTPUT_LIMIT, Printed, clip, joined
from grader.sandbox.worker.serve import WorkerLoop

LOOKALIKE = "… (1000 more lines; output truncated)\n"


def loaded_worker(tmp_path: Path, source: str) -> WorkerLoop:
    """A worker that has loaded `source` as its Solution, with a method `noisy`."""
    solution = tmp_path / "solution.py"
    solution.write_text(source)
    worker = WorkerLoop()
    assert worker.load(str(solution), "Solution", ["noisy"]) == {"ok": True}
    return worker


def said(text: str) -> int:
    return int(re.search(r"\((\d+) more lines?", text).group(1))


def test_a_printed_line_that_reads_like_a_marker_is_one_line() -> None:
    printed = ("".join(f"line {i}\n" for i in range(20)) + LOOKALIKE
               + "".join(f"line {i}\n" for i in range(20, 30)))
    cut = cut_output(clip(Printed.of(printed), 200), 500, max_lines=10)
    shown = cut.splitlines()
    assert shown[:10] == [f"line {i}" for i in range(10)]
    assert len(shown) - 1 + said(shown[-1]) == 31


def test_the_count_adds_up_over_the_worker_the_check_and_the_report() -> None:
    calls = [Printed.of("".join(f"call {c} line {i}\n" for i in range(800)))
             for c in range(3)]
    worker_cut = [clip(call, CALL_OUTPUT_LIMIT) for call in calls]
    assert all(isinstance(cut.items[-1], int) for cut in worker_cut)
    check = clip(joined(worker_cut), 6000)
    shown = cut_output(check, 500, whole=True)
    kept = shown.splitlines()
    counted = sum(said(line) if line.startswith("… (") else 1 for line in kept)
    assert counted == 2400


def test_calls_that_print_part_of_a_line_join_it(tmp_path: Path) -> None:
    assert joined([Printed.of("a"), Printed.of("b\n")]).items == ("ab\n",)
    assert joined([Printed.of("a\r"), Printed.of("\nb")]).items == ("a\r\n", "b")


def test_the_worker_sends_what_it_kept_and_a_count_of_what_it_left_out(tmp_path: Path) -> None:
    worker = loaded_worker(tmp_path, "class Solution:\n"
                                     "    def noisy(self, n):\n"
                                     "        for i in range(n):\n"
                                     "            print(f'debugging {i}')\n"
                                     "        return n\n")
    reply = worker.call("noisy", [5000], {}, [])
    assert "output truncated" not in reply["output"]
    kept = reply["output"].splitlines()
    assert kept[0] == "debugging 0"
    assert len(kept) + reply["output_cut"] == 5000
    quiet = worker.call("noisy", [2], {}, [])
    assert (quiet["output"], quiet["output_cut"]) == ("debugging 0\ndebugging 1\n", 0)


def test_a_call_that_prints_megabytes_costs_the_worker_none_of_them(tmp_path: Path) -> None:
    # Held whole, a call's output took the worker to its memory limit, and holding it
    # twice (to send it) ended the worker: the report then blamed sys.exit.
    import tracemalloc

    solution = tmp_path / "solution.py"
    solution.write_text("class Solution:\n"
                        "    def loud(self, n):\n"
                        "        line = 'A' * 1_000_000\n"
                        "        for i in range(n):\n"
                        "            print(line)\n"
                        "        print('end', end='')\n"
                        "        return n\n")
    worker = WorkerLoop()
    assert worker.load(str(solution), "Solution", ["loud"]) == {"ok": True}
    tracemalloc.start()
    try:
        reply = worker.call("loud", [40], {}, [])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert reply["result"] == 40
    assert peak < 10_000_000
    assert reply["output"].startswith("A" * 100) and reply["output"].endswith("…\n")
    assert reply["output_cut"] == 40  # 39 more lines of A and the last, unended


def test_the_worker_cuts_what_it_counted_as_it_would_cut_the_whole_text() -> None:
    import random

    from grader.sandbox.wire.printed import Capture

    pieces = ["a", "b", "\n", "\r", "\r\n", "\u2028", "xyz" * 5, "\x0c", "é", "\n\n\n"]
    draw = random.Random(7)
    for _ in range(3000):
        parts = ["".join(draw.choice(pieces) for _ in range(draw.randrange(7)))
                 for _ in range(draw.randrange(9))]
        keep = draw.randrange(2, 40)
        captured = Capture(keep)
        for part in parts:
            assert captured.write(part) == len(part)
        for limit in range(1, keep):
            assert clip(captured.printed(), limit) == clip(Printed.of("".join(parts)), limit)


def test_what_a_call_writes_as_bytes_is_printed_text(tmp_path: Path) -> None:
    """sys.stdout.buffer was missing in the worker: a file that wrote its debugging as
    bytes failed every check with "'Capture' object has no attribute 'buffer'"."""
    worker = loaded_worker(tmp_path, "import sys\n\nclass Solution:\n"
                                     "    def noisy(self, n):\n"
                                     "        sys.stdout.buffer.write(b'raw \\xff bytes\\n')\n"
                                     "        sys.stdout.buffer.flush()\n"
                                     "        return n\n")
    reply = worker.call("noisy", [3], {}, [])
    assert reply.get("ok"), reply
    assert reply["output"] == "raw \ufffd bytes\n", reply
