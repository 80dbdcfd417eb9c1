"""The forward passes a practice grade keeps between grades (grader/model/forward_store.py):
what is kept is what the model computes, looked up by the window; a file of another
platform, weights or format is never read; a forked worker looks windows up in it."""

from __future__ import annotations

import os
import sys

import pytest
import torch

from grader.model import artifacts, forward_store
from grader.model.forward_store import ForwardStore, store_path
from grader.model.memo import KnownWeights, copy_without_memo, remember_outputs
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


@pytest.mark.parametrize("fork", [
    pytest.param(True, marks=pytest.mark.skipif(not sys.platform.startswith("linux"),
                                                reason="forked workers: Linux")),
    False], ids=["forked", "spawned"])
def test_a_worker_looks_its_windows_up_in_the_store(tmp_path, fork: bool) -> None:
    """The logits a worker's model gives are the store's: altered there, they come back
    altered, which no pass of the model would give. A spawned worker (macOS's and
    Windows's) opens the store itself, a forked one before its sandbox closes."""
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
    solution.write_text("import torch\n\n\n"
                        "class Solution:\n"
                        "    def get_last_logits(self, model, context):\n"
                        "        return model(context)\n\n"
                        "    def negated(self, model, context):\n"
                        "        with torch.no_grad():\n"
                        "            saved = model.head.weight.clone()\n"
                        "            model.head.weight.neg_()\n"
                        "            logits = model(context)\n"
                        "            model.head.weight.copy_(saved)\n"
                        "        return logits\n")
    negated = remember_outputs(copy_without_memo(artifacts.shipped_model()))
    with torch.no_grad():
        negated.head.weight.neg_()
        negated = negated(window)
    for forwards, expected in ((str(tmp_path), altered), (None, true)):
        with WorkerPool(fork=fork, forwards=forwards) as pool:
            process = SubmissionProcess(str(solution), "Solution",
                                        ["get_last_logits", "negated"], pool)
            outcome = process.call("get_last_logits", (shipped, window))
            assert outcome.error is None, outcome.error
            assert torch.equal(outcome.result, expected)
            # Weights changed for a pass and put back: that pass is computed.
            outcome = process.call("negated", (shipped, window))
            assert outcome.error is None, outcome.error
            assert torch.equal(outcome.result, negated)


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


def test_a_guarded_memo_looks_nothing_up_while_the_weights_differ(tmp_path) -> None:
    """A learner's code that changes the weights in place for a pass, even to put them
    back after it, gets the pass of the weights as they are, never a remembered one."""
    model = copy_without_memo(artifacts.build_model(SMALL)).requires_grad_(False)
    planted = torch.full((1, 3, 5), 7.0)
    memo = remember_outputs(model, also=lambda key: planted, guarded=True)
    window = WINDOWS[0]
    with torch.no_grad():
        assert torch.equal(memo(window), planted)  # the weights are as built
        saved = model.head.weight.clone()
        model.head.weight.neg_()
        negated = memo(window)
        model.head.weight.copy_(saved)
        restored = memo(window)
        memo.weights_known()
        known_again = memo(window)
    other = copy_without_memo(artifacts.build_model(SMALL)).requires_grad_(False)
    with torch.no_grad():
        other.head.weight.neg_()
        assert torch.equal(negated, other(window))
    assert torch.equal(restored, planted)  # put back as they were: looked up again
    assert torch.equal(known_again, planted)


@pytest.mark.parametrize("change", ["data", "assigned", "transposed", "double", "hook"])
def test_a_guarded_memo_sees_every_way_to_change_a_pass(change) -> None:
    """Writes through .data move no version counter, a transposed view holds the same
    bytes in its storage, a new dtype or a hook changes a pass too: a guarded memo
    computes the pass while any of them holds."""
    model = copy_without_memo(artifacts.build_model(SMALL)).requires_grad_(False)
    planted = torch.full((1, 3, 5), 7.0)
    memo = remember_outputs(model, also=lambda key: planted, guarded=True)
    with torch.no_grad():
        if change == "data":
            model.head.weight.data.zero_()
        elif change == "assigned":
            model.head.weight.data = torch.zeros_like(model.head.weight)
        elif change == "transposed":
            square = next(p for p in model.parameters() if p.dim() == 2
                          and p.shape[0] == p.shape[1] and not torch.equal(p, p.t()))
            square.data = square.data.t()
        elif change == "double":
            model.double()
        else:
            model.head.register_forward_hook(lambda module, args, out: out * 0)
        assert not torch.equal(memo(WINDOWS[0]), planted), change


@pytest.mark.parametrize("weights", ["bfloat16", "requiring grad"])
def test_weights_numpy_cannot_read_are_known_and_a_write_is_seen(weights) -> None:
    """Weights numpy reads no bytes of (bfloat16, or parameters that require grad) are
    compared another way: unchanged, they are held; written through .data, not."""
    model = copy_without_memo(artifacts.build_model(SMALL))
    if weights == "bfloat16":
        model = model.to(torch.bfloat16).requires_grad_(False)
    known = KnownWeights(model)
    assert known.held()
    model.head.weight.data[0, 0] += 1
    assert not known.held()


def test_a_damaged_entry_is_never_handed_out_and_the_next_save_drops_it(tmp_path) -> None:
    kept_in(tmp_path)
    path = store_path(tmp_path)
    data = bytearray(path.read_bytes())
    data[-8:] = b"\xff" * 8  # the last entry's last floats: the file still opens
    path.write_bytes(bytes(data))
    store = ForwardStore(path)
    lookup = store.lookup(SMALL)
    found = [lookup(key_of(w)) is not None for w in WINDOWS]
    assert found.count(False) == 1, found
    damaged = WINDOWS[found.index(False)]
    model = remember_outputs(copy_without_memo(artifacts.build_model(SMALL)), also=lookup)
    store.keep(SMALL, model)
    with torch.no_grad():
        model(damaged)
    store.save()
    with torch.no_grad():
        assert torch.equal(ForwardStore(path).lookup(SMALL)(key_of(damaged)),
                           copy_without_memo(artifacts.build_model(SMALL))(damaged))


def test_a_save_that_fails_leaves_the_file_and_the_grade_alone(tmp_path, monkeypatch) -> None:
    kept_in(tmp_path)
    before = store_path(tmp_path).read_bytes()

    def disk_full(path, entries):
        raise RuntimeError("No space left on device (os error 28)")  # as safetensors says

    monkeypatch.setattr(forward_store, "_write", disk_full)
    store = ForwardStore(store_path(tmp_path))
    model = remember_outputs(copy_without_memo(artifacts.build_model(SMALL)))
    store.keep(SMALL, model)
    with torch.no_grad():
        model(torch.tensor([[0, 1, 0, 1]]))
    store.save()  # raises nothing
    assert store_path(tmp_path).read_bytes() == before


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_in_the_files_place_is_an_empty_store(tmp_path) -> None:
    os.mkfifo(store_path(tmp_path))  # opened for reading, it would block until a writer
    assert len(ForwardStore(store_path(tmp_path))) == 0
