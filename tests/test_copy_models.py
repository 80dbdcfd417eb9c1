"""The learners' copy's models as files (grader/release/practice/program.py): a GPT
traced by torch.export, written as its graph and weights and read back, computes what
the GPT computes, bit for bit, trains as it trains, and a file can make the copy run
nothing but torch's operations."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import torch
from safetensors.torch import save

from grader.model import artifacts
from grader.release.models import cached_programs, gpt_program, saved
from grader.release.practice.program import FORMAT, ModelFileError, read_graph

CONFIG = {"vocab_size": 11, "context_length": 8, "n_layer": 2, "n_head": 2, "n_embd": 8}


def read(tmp_path: Path, data: bytes, name: str = "model") -> torch.nn.Module:
    path = tmp_path / f"{name}.safetensors"
    path.write_bytes(data)
    return read_graph(path)


@pytest.fixture(scope="module")
def program() -> object:
    """A small random GPT traced once (a trace takes a second or more)."""
    return gpt_program(artifacts.random_model(CONFIG, seed=5))


def test_a_gpt_read_back_gives_the_gpts_logits_bit_for_bit(tmp_path: Path, program) -> None:
    model = artifacts.random_model(CONFIG, seed=5)
    loaded = read(tmp_path, saved(program))
    assert [name for name, _ in loaded.named_parameters()] == list(model.state_dict())
    # In memory of torch's own, aligned as it aligns: read in place, a weight lies at the
    # file's offset, and a matrix kernel may then sum in another order (seen on AVX-512,
    # a last bit of the copy's logits).
    assert all(p.data_ptr() % 64 == 0 for p in loaded.parameters())
    for shape in ((1, 1), (3, 5), (2, 8)):
        context = torch.randint(0, CONFIG["vocab_size"], shape,
                                generator=torch.Generator().manual_seed(sum(shape)))
        with torch.no_grad():
            assert torch.equal(loaded(context), model(context)), shape


def test_a_cached_pass_read_back_gives_the_gpts_logits_and_cache(tmp_path: Path) -> None:
    model = artifacts.random_model(CONFIG, seed=6)
    programs = cached_programs(model, "m")
    first = read(tmp_path, programs["m.cached-first-many"], "first")
    step = read(tmp_path, programs["m.cached-next-one"], "next")
    context = torch.tensor([[1, 4, 2]])
    with torch.no_grad():
        logits, cache = first(context)
        want_logits, want_cache = model.forward_with_cache(context)
        assert torch.equal(logits, want_logits)
        # A list of one (keys, values) pair per layer, as the model gives it.
        assert isinstance(cache, list) and all(isinstance(pair, tuple) for pair in cache)
        assert all(torch.equal(a, b) for pair, want in zip(cache, want_cache, strict=True)
                   for a, b in zip(pair, want, strict=True))
        logits, cache = step(torch.tensor([[7]]), cache)
        want_logits, want_cache = model.forward_with_cache(torch.tensor([[7]]), want_cache)
        assert torch.equal(logits, want_logits)
        assert torch.equal(cache[1][0], want_cache[1][0])


def test_a_window_of_three_has_programs_for_every_length_it_takes(tmp_path: Path) -> None:
    # Several new tokens after a cache of one fit a window of three only as two: torch
    # makes no Dim of one length (a drawn example of the KV cache met one such model).
    model = artifacts.random_model({**CONFIG, "context_length": 3}, seed=7)
    programs = cached_programs(model, "m")
    assert set(programs) == {f"m.cached-{v}" for v in ("first-one", "first-many", "next-one",
                                                        "next-many")}
    first = read(tmp_path, programs["m.cached-first-one"], "first")
    later = read(tmp_path, programs["m.cached-next-many"], "later")
    with torch.no_grad():
        _, cache = first(torch.tensor([[3]]))
        _, want_cache = model.forward_with_cache(torch.tensor([[3]]))
        logits, _ = later(torch.tensor([[1, 2]]), cache)
        want, _ = model.forward_with_cache(torch.tensor([[1, 2]]), want_cache)
        assert torch.equal(logits, want)


def test_a_trainable_gpt_read_back_takes_the_same_step(tmp_path: Path) -> None:
    model = artifacts.trainable_model(CONFIG, seed=7)
    loaded = copy.deepcopy(read(tmp_path, saved(gpt_program(model, trainable=True))))
    assert loaded.eval().training is False and loaded.train().training is True
    context = torch.randint(0, CONFIG["vocab_size"], (4, 6),
                            generator=torch.Generator().manual_seed(1))
    for gpt in (model, loaded):
        loss = torch.nn.functional.cross_entropy(gpt(context).flatten(0, 1),
                                                 context.roll(1, dims=1).flatten())
        loss.backward()
    grads = {name: p.grad for name, p in model.named_parameters()}
    assert {name: p.grad for name, p in loaded.named_parameters()}.keys() == grads.keys()
    for name, p in loaded.named_parameters():
        assert torch.equal(p.grad, grads[name]), name


def test_a_model_is_written_the_same_byte_for_byte(program) -> None:
    # safetensors writes its metadata in no fixed order: several writes must agree.
    assert len({saved(program) for _ in range(6)}) == 1


def forged(tmp_path: Path, graph: dict, weight: str = "w") -> Path:
    path = tmp_path / "forged.safetensors"
    path.write_bytes(save({weight: torch.zeros(2)}, metadata={"graph": json.dumps(graph)}))
    return path


@pytest.mark.parametrize("target", ["operator.attrgetter", "builtins.eval", "os.system",
                                    "torch.load", "aten.no_such_operation.default"])
def test_a_file_names_no_operation_but_torchs_own(tmp_path: Path, target: str) -> None:
    graph = {"format": FORMAT, "inputs": ["x"], "output": {"node": "call"},
             "nodes": [{"name": "call", "op": "call_function", "target": target,
                        "args": [{"node": "x"}], "kwargs": {}}]}
    with pytest.raises(ValueError, match=target.replace(".", r"\.")):
        read_graph(forged(tmp_path, graph))


def test_a_file_of_another_format_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not a model of this copy's format"):
        read_graph(forged(tmp_path, {"format": "other", "nodes": []}))


SAID = 'print("ran the file\'s code")'


@pytest.mark.parametrize("where", ["input", "keyword", "attribute", "operation"])
def test_a_file_runs_no_python_of_its_own(tmp_path: Path, capsys, where: str) -> None:
    # torch.fx writes a graph as Python source: an input's, a keyword's or an
    # attribute's name goes into it as it is. And torch.ops has attributes that are
    # not operations (import_module, load_library).
    name = f"x={SAID}" if where == "input" else "x"
    call = {"name": "call", "op": "call_function", "target": "aten.clone.default",
            "args": [{"node": name}], "kwargs": {}}
    if where == "keyword":
        call["kwargs"] = {f"memory_format={SAID},x": None}
    elif where == "operation":
        call.update(target="load_library.__self__.import_module", args=["this"])
    elif where == "attribute":
        name = f'w",{SAID}) and getattr(self,"w'
        call = {"name": "call", "op": "get_attr", "target": name, "parameter": True}
    graph = {"format": FORMAT, "inputs": [name if where == "input" else "x"],
             "output": {"node": "call"}, "nodes": [call]}
    path = forged(tmp_path, graph, name if where == "attribute" else "w")
    with pytest.raises(ValueError, match="not a name a graph holds|not an operation"):
        read_graph(path)(torch.zeros(2))
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize("damage", ["cut short", "unknown node", "missing weight"])
def test_a_damaged_file_is_said_in_one_line_naming_it(tmp_path: Path, damage: str) -> None:
    graph = {"format": FORMAT, "inputs": ["x"], "output": {"node": "call"},
             "nodes": [{"name": "call", "op": "call_function", "target": "aten.clone.default",
                        "args": [{"node": "y" if damage == "unknown node" else "x"}],
                        "kwargs": {}}]}
    if damage == "missing weight":
        graph["nodes"] = [{"name": "call", "op": "get_attr", "target": "v", "parameter": True}]
    path = forged(tmp_path, graph)
    if damage == "cut short":
        path.write_bytes(path.read_bytes()[:-3])
    # The grade shows it as the file's problem (practice_grade.py), not the learner's.
    with pytest.raises(ModelFileError, match=f"{path.name} is damaged"):
        read_graph(path)
