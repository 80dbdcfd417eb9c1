"""The forward passes a practice grade keeps between grades (grader/model/forward_store.py):
what is kept is what the model computes, looked up by the window; a file of another
platform, weights or format is never read; a forked worker looks windows up in it."""

from __future__ import annotations

import sys

import pytest
import torch

from grader.model import artifacts, forward_store
from grader.model.forward_store import ForwardStore, store_path
from grader.model.memo import copy_without_memo, remember_outputs
from grader.model.spec import ModelSpec
from grader.sandbox.host.pool import WorkerPool
from grader.sandbox.host.process import SubmissionProcess

SMALL = ModelSpec("random", {"vocab_size": 5, "context_length": 6, "n_layer": 1, "n_head": 1,
                             "n_embd": 4}, 3)
WINDOWS = [torch.tensor([[1, 2, 3]]), torch.tensor([[4, 0]]), torch.tensor([[2, 2, 2, 2]])]


def kept_in(folder, spec: ModelSpec = SMALL) -> ForwardStore:
    """A store in `folder` holding the passes of `spec`'s model on WINDOWS."""
    store = ForwardStore(store_path(folder))
    model = remember_outputs(copy_without_memo(artifacts.build_model(spec)))
    store.keep(spec, model)
    with torch.no_grad():
        for window in WINDOWS:
            model(window)
    store.save()
    return ForwardStore(store_path(folder))


def key_of(window: torch.Tensor) -> tuple:
    return (tuple(window.shape), window.contiguous().numpy().tobytes())


def test_a_kept_pass_is_the_models_own_and_others_are_not_kept(tmp_path) -> None:
    lookup = kept_in(tmp_path).lookup(SMALL)
    assert lookup is not None
    model = artifacts.build_model(SMALL)
    for window in WINDOWS:
        with torch.no_grad():
            assert torch.equal(lookup(key_of(window)), model(window))
    assert lookup(key_of(torch.tensor([[3, 3]]))) is None
    # Another seed is another model, with passes of its own.
    other = ModelSpec("random", SMALL.config, SMALL.seed + 1)
    assert kept_in(tmp_path).lookup(other)(key_of(WINDOWS[0])) is None


def test_only_models_built_alike_on_both_sides_are_looked_up(tmp_path) -> None:
    store = kept_in(tmp_path)
    for kind in ("yours", "hidden", "run"):
        assert store.lookup(ModelSpec(kind, SMALL.config, 1, "x")) is None


def test_a_file_that_is_not_a_store_is_an_empty_one(tmp_path) -> None:
    path = store_path(tmp_path)
    path.write_bytes(b"not a safetensors file")
    assert ForwardStore(path).lookup(SMALL) is None
    from safetensors.torch import save_file

    save_file({"x": torch.zeros(1)}, str(path), metadata={"format": "0"})
    assert ForwardStore(path).lookup(SMALL) is None


def test_the_files_name_changes_with_the_platform_and_the_weights(tmp_path, monkeypatch) -> None:
    here = store_path(tmp_path)
    monkeypatch.setattr(artifacts, "this_platform",
                        lambda: {"torch": "2.13.0", "cpu_capability": "AVX2"})
    elsewhere = store_path(tmp_path)
    assert elsewhere != here
    weights = tmp_path / "model.safetensors"
    weights.write_bytes(artifacts.CHECKPOINT.read_bytes() + b" ")
    monkeypatch.setattr(artifacts, "CHECKPOINT", weights)
    assert store_path(tmp_path) not in (here, elsewhere)


def test_a_save_keeps_the_newest_within_the_bound_and_drops_stale_files(
        tmp_path, monkeypatch) -> None:
    stale = tmp_path / "forwards-0123456789abcdef0123.safetensors"
    stale.write_bytes(b"another torch's")
    kept_in(tmp_path)
    assert not stale.exists()
    # Room for one pass of three windows (1 x T x 5 logits each): the last one computed.
    monkeypatch.setattr(forward_store, "STORE_ELEMENTS", 20)
    (tmp_path / store_path(tmp_path).name).unlink()
    lookup = kept_in(tmp_path).lookup(SMALL)
    assert [lookup(key_of(w)) is not None for w in WINDOWS] == [False, False, True]


def test_a_save_with_nothing_new_writes_nothing(tmp_path) -> None:
    kept_in(tmp_path)
    before = store_path(tmp_path).stat().st_mtime_ns
    store = ForwardStore(store_path(tmp_path))
    model = remember_outputs(copy_without_memo(artifacts.build_model(SMALL)),
                             also=store.lookup(SMALL))
    store.keep(SMALL, model)
    with torch.no_grad():
        model(WINDOWS[0])
    store.save()
    assert store_path(tmp_path).stat().st_mtime_ns == before


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forked workers: Linux")
def test_a_forked_worker_looks_its_windows_up_in_the_store(tmp_path) -> None:
    """The logits a worker's model gives are the store's: altered there, they come back
    altered, which no pass of the model would give."""
    shipped = ModelSpec()
    window = torch.tensor([[1, 2, 3]])
    store = ForwardStore(store_path(tmp_path))
    model = remember_outputs(copy_without_memo(artifacts.shipped_model()))
    with torch.no_grad():
        true = model(window)
    altered = true + 1.0
    model.remembered_entries = lambda: {key_of(window): altered}  # what the store keeps
    store.keep(shipped, model)
    store.save()
    solution = tmp_path / "solution.py"
    solution.write_text("class Solution:\n"
                        "    def get_last_logits(self, model, context):\n"
                        "        return model(context)\n")
    for forwards, expected in ((str(tmp_path), altered), (None, true)):
        with WorkerPool(forwards=forwards) as pool:
            process = SubmissionProcess(str(solution), "Solution", ["get_last_logits"], pool)
            outcome = process.call("get_last_logits", (shipped, window))
            assert outcome.error is None, outcome.error
            assert torch.equal(outcome.result, expected)


def test_a_practice_grade_keeps_its_passes_and_a_classroom_grade_none(
        tmp_path, monkeypatch) -> None:
    from grader import paths
    from grader.cli.main import build_parser
    from grader.learner.grade import grade

    monkeypatch.setattr(paths, "STATE", tmp_path)
    monkeypatch.setattr(forward_store, "_IN_USE", None)
    parser = build_parser("grade")
    practice = parser.parse_args(["grade", "last-logits", "--reference", "-q", "--jobs", "1"])
    assert grade(practice) == 0
    kept = ForwardStore(store_path(tmp_path))
    assert kept.lookup(ModelSpec()) is not None and len(kept) > 0
    store_path(tmp_path).unlink()
    classroom = parser.parse_args(["grade", "last-logits", "--reference", "-q", "--jobs", "1",
                                   "--classroom", "--allow-unisolated"])
    assert grade(classroom) == 0
    assert not list(tmp_path.glob("forwards-*"))
    assert forward_store.in_use() is None
