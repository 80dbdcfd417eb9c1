"""A check module's contract is validated: each way it can disagree is named clearly."""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import sys
from types import ModuleType

import pytest
from conftest import module_from

from grader.grading.contracts.contract import Contract
from grader.grading.contracts.contract_derivation import ContractError
from grader.grading.contracts.contract_validation import validate
from grader.grading.contracts.declaring import DECLARING, _Declaring
from grader.registry import find, problems


def load(slug: str) -> ModuleType:
    """A fresh copy of a problem's check module, to change without touching the real one."""
    problem = find(slug)
    return declared(slug, problem.checks, f"contract_test_{problem.checks.stem}")


def declared(slug: str, path, name: str) -> ModuleType:
    """The file imported as module `name`, its top level run as a check module of
    `slug` is run (grader/grading/contracts/declaring.py)."""
    token = DECLARING.set(slug)
    try:
        return module_from(path, name)
    finally:
        DECLARING.reset(token)


def with_contract(module: ModuleType, **changes: object) -> ModuleType:
    """A copy of the module whose contract has these fields changed."""
    copy = ModuleType(module.__name__)
    copy.__dict__.update(vars(module))
    copy.CONTRACT = dataclasses.replace(module.CONTRACT, **changes)
    return copy


@pytest.fixture(scope="module")
def top_k() -> ModuleType:
    return load("top-k")


@pytest.mark.parametrize("problem", problems(), ids=lambda p: p.slug)
def test_every_check_module_is_valid(problem):
    contract = validate(load(problem.slug))
    assert isinstance(contract, Contract) and contract.problem == problem.slug


@pytest.mark.parametrize(("changes", "says"), [
    ({"problem": "top-kk"}, "problem 'top-kk' is not in problems/registry.toml"),
    ({"problem": "top-p"}, "declares problem 'top-p', whose checks are in check_top_p.py"),
    ({"method": "top_k"}, "method 'top_k' is not one of top-k's methods"),
    ({"arg_names": ("x", "k")}, "arg_names ('x', 'k') are not the parameters of the reference"),
    ({"iterate": True}, "iterate=True, but the reference's top_k_filter() returns"),
    ({"mistakes": ["keep k"]}, "'keep k' is not a Mistake"),
])
def test_a_contract_that_disagrees_is_named(top_k, changes, says):
    with pytest.raises(ContractError) as error:
        validate(with_contract(top_k, **changes))
    assert "grader/checks/top_k/check_top_k.py" in str(error.value)
    assert says in str(error.value)


def test_cases_must_match_the_goldens(top_k):
    more = {**top_k.CONTRACT.cases(), "new-case": top_k.CONTRACT.cases()["k-is-one"]}
    with pytest.raises(ContractError, match=r"cases without a golden: \['new-case'\]") as error:
        validate(with_contract(top_k, cases=lambda: more))
    assert "make_data goldens manifest` on the platform" in str(error.value)


def test_a_new_problems_missing_goldens_name_the_step_that_records_them(top_k, monkeypatch):
    # Its goldens are recorded on any machine: `goldens` would refuse off their platform.
    from grader.model import artifacts

    monkeypatch.setattr(artifacts, "load_goldens", lambda: {})
    with pytest.raises(ContractError, match="make_data starters new-goldens`"):
        validate(top_k)


def test_case_arguments_must_fit_the_method(top_k):
    with pytest.raises(ContractError, match="case 'bad' has 3 arguments; top_k_filter"):
        validate(with_contract(top_k, cases=lambda: {"bad": (1, 2, 3)}))


def test_a_module_without_a_contract_is_named(top_k):
    bare = ModuleType(top_k.__name__)
    bare.__file__ = top_k.__file__
    with pytest.raises(ContractError, match="declares no CONTRACT"):
        validate(bare)


def test_every_test_needs_a_docstring(top_k):
    module = with_contract(top_k)

    def test_nameless(kata):
        pass

    module.test_nameless = test_nameless
    with pytest.raises(ContractError, match="test_nameless has no docstring"):
        validate(module)


def test_a_contract_judged_live_has_no_goldens(top_k):
    with pytest.raises(ContractError, match="declares goldens=False, but data/goldens.json "
                                            "has goldens for top-k"):
        validate(with_contract(top_k, goldens=False))


MINIMAL = """
from grader.grading.contracts.contract import Contract

CONTRACT = Contract(cases=lambda: {}, judge=lambda got, expected, call: None<declared>)
"""


def minimal_check(tmp_path, slug: str, declared: str = "") -> ModuleType:
    """A check module of `slug` that declares only its cases and judge (and `declared`)."""
    path = tmp_path / find(slug).checks.name
    path.write_text(MINIMAL.replace("<declared>", declared), encoding="utf-8")
    return globals()["declared"](slug, path, f"minimal_{path.stem}")


@pytest.mark.parametrize(("slug", "method", "arg_names", "iterate"), [
    ("top-k", "top_k_filter", ("logits", "k"), False),
    ("stream", "stream_generate",
     ("model", "new_chars", "context", "context_length", "int_to_char", "unit"), True),
    ("gpt", "forward", ("config", "weights", "context"), False),  # a module, driven
])
def test_a_contract_takes_what_the_registry_and_the_reference_say(tmp_path, slug, method,
                                                                  arg_names, iterate):
    contract = minimal_check(tmp_path, slug).CONTRACT
    assert (contract.problem, contract.method) == (slug, method)
    assert (contract.arg_names, contract.iterate) == (arg_names, iterate)


def test_a_check_module_is_handed_its_problem_under_either_name(monkeypatch):
    # As a tool imports it, and as a grade's pytest does: by its folder, as check_<slug>.
    from grader.checks.top_k import check_top_k

    assert check_top_k.CONTRACT.problem == "top-k"
    monkeypatch.syspath_prepend(str(find("top-p").grading_folder))
    monkeypatch.delitem(sys.modules, "check_top_p", raising=False)
    assert importlib.import_module("check_top_p").CONTRACT.problem == "top-p"
    monkeypatch.delitem(sys.modules, "check_top_p")


def test_a_check_module_importing_anothers_gives_each_its_own_problem(monkeypatch):
    # check_train_loop imports check_train_step's helpers as it loads.
    for name in ("grader.checks.train_loop.check_train_loop",
                 "grader.checks.train_step.check_train_step"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    loop = importlib.import_module("grader.checks.train_loop.check_train_loop")
    step = sys.modules["grader.checks.train_step.check_train_step"]
    assert (loop.CONTRACT.problem, step.CONTRACT.problem) == ("train-loop", "train-step")
    assert DECLARING.get() == ""  # nothing is left declared once they are loaded


def test_a_problem_registered_before_its_checks_is_told_which_file_to_write():
    # The check tier's tests and the maintainer's tools load every registered problem's
    # check module: the import alone would say only "no module grader.checks.double_it".
    from grader.grading.contracts.declaring import load_check_module

    unwritten = dataclasses.replace(find("top-k"), number=36, slug="double-it")
    with pytest.raises(ModuleNotFoundError) as raised:
        load_check_module(unwritten)
    said = str(raised.value).replace("\\", "/")
    assert "36-double-it" in said and "grader/checks/double_it/check_double_it.py" in said
    assert "adding-a-problem.md" in said


def test_a_contract_built_by_a_helper_is_its_check_modules(tmp_path, monkeypatch):
    helper = tmp_path / "contract_helper.py"
    helper.write_text("from grader.grading.contracts.contract import Contract\n\n\n"
                      "def build():\n"
                      "    return Contract(cases=lambda: {}, judge=lambda *a: None)\n",
                      encoding="utf-8")
    user = tmp_path / "user_of_the_helper.py"
    user.write_text("from contract_helper import build\n\nCONTRACT = build()\n",
                    encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = importlib.util.spec_from_file_location("user_of_the_helper", user)
    assert spec is not None and spec.loader is not None
    spec.loader = _Declaring(spec.loader, "top-k")  # as the finder loads a check module
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.CONTRACT.problem == "top-k"
    # The same file outside a check module's loading is no check module.
    monkeypatch.delitem(sys.modules, "contract_helper")
    assert module_from(user, "plain_user").CONTRACT.problem == ""


def test_what_a_contract_declares_is_kept(tmp_path):
    contract = minimal_check(tmp_path, "bpe", ', method="encode"').CONTRACT
    assert (contract.problem, contract.method, contract.arg_names) == (
        "bpe", "encode", ("text", "merges"))


def test_a_problem_of_several_methods_needs_one_named(tmp_path):
    module = minimal_check(tmp_path, "bpe")
    with pytest.raises(ContractError, match="names no method, and bpe has several in "
                                            "problems/registry.toml: declare one of "
                                            "train_bpe, encode, decode"):
        validate(module)


def test_a_contract_made_outside_a_check_module_names_no_problem(top_k):
    with pytest.raises(ContractError, match=r"names no problem: declare Contract\(problem"):
        validate(with_contract(top_k, problem=""))


def test_every_method_of_the_registry_is_graded():
    module = load("bpe")
    del module.ENCODE
    with pytest.raises(ContractError, match="no contract grades encode"):
        validate(module)


def test_only_the_main_contract_has_goldens():
    module = load("bpe")
    module.ENCODE = dataclasses.replace(module.ENCODE, goldens=True)
    with pytest.raises(ContractError, match="ENCODE: has goldens=True, but only CONTRACT's"):
        validate(module)


def test_a_harness_may_drive_what_is_no_method():
    streamer = load("stream").STREAMER  # WordStreamer, a class the harness builds
    assert streamer.method not in find("stream").methods
    module = with_contract(load("stream"))
    module.STREAMER = dataclasses.replace(streamer, harness="")
    with pytest.raises(ContractError, match="STREAMER: method 'WordStreamer' is not one of"):
        validate(module)


def test_recording_the_goldens_leaves_out_a_contract_judged_live():
    from grader.maintainer.make_data import goldens_of

    # what make_data records is what validate() then accepts: nothing for train-step,
    # one golden a case for a contract judged by goldens
    assert goldens_of(find("train-step")) == {}
    assert set(goldens_of(find("top-k"))) == set(load("top-k").CONTRACT.cases())
