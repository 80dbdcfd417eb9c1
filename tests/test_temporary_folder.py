"""A grade leaves the temporary folder as it found it: the workers' scratch folders
and the cache folder torch makes on its first optimizer (`torchinductor_<user>`) go
with the grade, on every path a grade takes."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from conftest import ROOT

from grader.learner.grade import CACHE_VARIABLE, torch_cache_removed_after
from grader.sandbox.host.handles import worker_environment


# train-step: its reference and the worker both build torch's AdamW.
@pytest.mark.parametrize("path", ["fork", "spawned", "unsandboxed"])
def test_a_grade_that_trains_leaves_the_temporary_folder_empty(path: str,
                                                              tmp_path: Path) -> None:
    env = {**os.environ, "TMPDIR": str(tmp_path), "GPT_KATA_SPAWN_WORKERS": "0"}
    env.pop(CACHE_VARIABLE, None)
    if path == "spawned":
        env["GPT_KATA_SPAWN_WORKERS"] = "1"
    options = ["--no-sandbox"] if path == "unsandboxed" else []
    done = subprocess.run([sys.executable, "-m", "grader", "grade", "train-step",
                           "--reference", "-q", *options],
                          capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert [p.name for p in tmp_path.iterdir()] == []


def test_torch_gets_a_cache_folder_of_the_grades_own_removed_after(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(CACHE_VARIABLE, raising=False)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with torch_cache_removed_after():
        cache = Path(os.environ[CACHE_VARIABLE])
        assert cache.parent.parent == tmp_path
        cache.mkdir()  # as torch does
        (cache / "dynamo").mkdir()
    assert CACHE_VARIABLE not in os.environ
    assert list(tmp_path.iterdir()) == []


def test_a_cache_folder_already_chosen_is_kept(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    chosen = tmp_path / "mine"
    monkeypatch.setenv(CACHE_VARIABLE, str(chosen))
    with torch_cache_removed_after():
        assert os.environ[CACHE_VARIABLE] == str(chosen)
        chosen.mkdir()
    assert os.environ[CACHE_VARIABLE] == str(chosen)
    assert chosen.is_dir()


def test_a_worker_without_the_sandbox_writes_its_temporary_files_in_its_scratch(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPT_KATA_EXAMPLES_SEED", "secret")
    env = worker_environment("/scratch/worker-1")
    assert [env[name] for name in ("TMPDIR", "TEMP", "TMP")] == ["/scratch/worker-1"] * 3
    assert "GPT_KATA_EXAMPLES_SEED" not in env
