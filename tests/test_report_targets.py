"""Where --json and --junit write: a file whole, through a link the file it leads to,
a pipe or a device written through and never replaced, and never a learner's code;
and limits past what a kernel takes refused or taken as none."""

from __future__ import annotations

import argparse
import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from grader.learner.errors import UsageError
from grader.learner.options import MAX_MEGABYTES, check_report_target, positive_megabytes
from grader.reports.written import write_whole


def test_a_file_is_replaced_whole_and_a_link_to_one_is_kept(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    report.write_text("old", encoding="utf-8")
    write_whole(report, "new")
    assert report.read_text(encoding="utf-8") == "new"
    link = tmp_path / "latest.json"
    link.symlink_to(report)
    write_whole(link, "newer")
    assert link.is_symlink() and report.read_text(encoding="utf-8") == "newer"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["latest.json", "report.json"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_pipe_is_written_through_not_replaced(tmp_path: Path) -> None:
    fifo = tmp_path / "stream"
    os.mkfifo(fifo)
    read: list[str] = []
    reader = threading.Thread(target=lambda: read.append(fifo.read_text(encoding="utf-8")))
    reader.start()
    write_whole(fifo, "through")
    reader.join(timeout=30)
    assert read == ["through"]
    assert stat.S_ISFIFO(fifo.stat().st_mode)


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="no /proc/self/fd here")
def test_a_processs_own_stream_is_written_through(tmp_path: Path) -> None:
    """`--json /dev/stdout` with stdout a file: the report goes down the stream, and the
    file the stream is stays the one the shell opened."""
    out = tmp_path / "out.txt"
    code = ("import sys; from pathlib import Path; from grader.reports.written import "
            "write_whole; print('first', flush=True); write_whole(Path('/dev/stdout'), "
            "'report\\n')")
    for stdout in ("/dev/stdout", "/proc/self/fd/1", "a link to it"):
        if stdout == "a link to it":
            (tmp_path / "mine").symlink_to("/proc/self/fd/1")
            stdout = str(tmp_path / "mine")
        with out.open("w", encoding="utf-8") as stream:
            subprocess.run([sys.executable, "-c", code.replace("/dev/stdout", stdout)],
                           stdout=stream, check=True, timeout=60)
        assert out.read_text(encoding="utf-8") == "first\nreport\n", stdout


def test_code_is_no_report_target(tmp_path: Path) -> None:
    solution = tmp_path / "solution.py"
    solution.write_text("class Solution: ...\n", encoding="utf-8")
    with pytest.raises(UsageError, match="is code, not a report"):
        check_report_target("--json", str(solution))
    graded = tmp_path / "graded.txt"  # a submission of any name is the learner's code
    graded.write_text("class Solution: ...\n", encoding="utf-8")
    with pytest.raises(UsageError, match="is code, not a report"):
        check_report_target("--junit", str(graded), [graded])
    check_report_target("--json", str(tmp_path / "report.json"), [graded])


@pytest.mark.parametrize("text", ["5e12", "1e30", str(MAX_MEGABYTES + 1)])
def test_memory_past_a_terabyte_is_refused(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="from 1 to"):
        positive_megabytes(text)
    assert positive_megabytes(str(MAX_MEGABYTES)) == MAX_MEGABYTES


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="rlimits as Linux sets them")
def test_a_limit_past_the_kernels_is_no_limit() -> None:
    code = ("import resource; from grader.sandbox.worker.layers.rlimits import _set_limit; "
            "_set_limit(resource.RLIMIT_DATA, 10**19); "
            "print(resource.getrlimit(resource.RLIMIT_DATA)[0] == resource.RLIM_INFINITY)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert done.stdout.strip() == "True", done.stderr
