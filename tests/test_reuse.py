"""A later problem uses the learner's own earlier solutions: `grader.reuse.solution_of`.

It must work under the sandbox, which lets a submission read its own problems/
folder, and must never open a way to the references or the goldens.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import grade_in_folder, messages

from grader import paths
from grader.registry import find
from grader.reuse import ReuseError, earlier_files, solution_of
from grader.sandbox.worker import machine
from grader.sandbox.worker.layers.policy import Policy

HAS_LANDLOCK = machine.probe().landlock_abi >= 1
needs_landlock = pytest.mark.skipif(not HAS_LANDLOCK, reason="no Landlock on this kernel")

# 11 written out of the learner's own 09 and 10, as its statement suggests.
TOP_K_TOP_P = '''\
import torch
from torchtyping import TensorType

from grader.reuse import solution_of

TopK = solution_of("top-k")
TopP = solution_of(10)


class Solution:
    def top_k_top_p_filtering(
        self,
        logits: TensorType[..., "vocab_size", float],
        top_k: int = 0,
        top_p: float = 1.0,
        filter_value: float = float("-inf"),
        min_tokens_to_keep: int = 1,
    ) -> TensorType[..., "vocab_size", float]:
        result = logits.clone()
        if top_k > 0:
            k = min(max(top_k, min_tokens_to_keep), logits.shape[-1])
            removed = TopK().top_k_filter(result, k).isneginf() & ~result.isneginf()
            result = result.masked_fill(removed, filter_value)
        if top_p < 1.0:
            removed = TopP().top_p_filter(result, top_p, min_tokens_to_keep).isneginf()
            result = result.masked_fill(removed & ~result.isneginf(), filter_value)
        return result
'''


# 06 written out of the learner's own 01 to 05, as its statement suggests.
GENERATE = '''\
import torch
from torchtyping import TensorType

from grader.reuse import solution_of

Crop = solution_of("crop-context")
Last = solution_of("last-logits")
Softmax = solution_of(3)
Sample = solution_of("04-sample")
Decode = solution_of("decode")


class Solution:
    def generate(self, model, new_chars: int, context: TensorType[int], context_length: int,
                 int_to_char: dict) -> str:
        generator = torch.manual_seed(0)
        initial_state = generator.get_state()
        new = []
        for _ in range(new_chars):
            window = Crop().crop_context(context, context_length)
            probs = Softmax().softmax(Last().last_logits(model, window))
            token = Sample().sample(probs, generator, initial_state)
            context = torch.cat([context, token], dim=1)
            new.append(token.item())
        return Decode().decode(new, int_to_char)
'''


def kata(root: Path, solved: tuple[str, ...] = ("top-k", "top-p")) -> Path:
    """A learner's problems/ folder: `solved` hold the references' code, 11 uses them."""
    problems = root / "problems"
    for slug in solved:
        problem = find(slug)
        (problems / problem.folder).mkdir(parents=True)
        shutil.copy(problem.reference, problems / problem.folder / "solution.py")
    (problems / "11-top-k-top-p").mkdir(parents=True)
    (problems / "11-top-k-top-p" / "solution.py").write_text(TOP_K_TOP_P)
    return problems


def test_a_solution_finds_its_neighbours_in_its_own_problems_folder(tmp_path: Path) -> None:
    problems = kata(tmp_path)
    namespace = {"__file__": str(problems / "11-top-k-top-p" / "solution.py")}
    exec("from grader.reuse import solution_of\nTopK = solution_of('09-top-k')", namespace)
    assert namespace["TopK"].__module__ == "kata_solution_09_top_k"
    assert Path(namespace["TopK"].top_k_filter.__code__.co_filename) == \
        problems / "09-top-k" / "solution.py"


def test_a_module_problems_class_is_taken_by_its_name(tmp_path: Path) -> None:
    problems = kata(tmp_path, solved=("multi-head-attention",))
    namespace = {"__file__": str(problems / "22-transformer-block" / "solution.py")}
    exec("from grader.reuse import solution_of\n"
         "Attention = solution_of('multi-head-attention', name='CausalSelfAttention')", namespace)
    assert namespace["Attention"].__name__ == "CausalSelfAttention"
    with pytest.raises(ReuseError, match="multi-head-attention/solution.py has no class Solution"):
        exec("from grader.reuse import solution_of\nsolution_of('multi-head-attention')",
             namespace)


def test_an_unfinished_earlier_solution_names_the_problem_to_finish(tmp_path: Path) -> None:
    problems = kata(tmp_path, solved=("top-k",))
    starter = paths.STARTERS / "10-top-p" / "solution.py"
    (problems / "10-top-p").mkdir()
    shutil.copy(starter, problems / "10-top-p" / "solution.py")
    namespace = {"__file__": str(problems / "11-top-k-top-p" / "solution.py")}
    with pytest.raises(ReuseError) as caught:
        exec("from grader.reuse import solution_of\nsolution_of('top-p')", namespace)
    text = str(caught.value)
    assert "problem 10 (top-p) is not finished" in text and "top_p_filter()" in text
    assert "gpt-kata grade top-p" in text


def test_an_unknown_problem_lists_the_ones_there(tmp_path: Path) -> None:
    problems = kata(tmp_path)
    namespace = {"__file__": str(problems / "11-top-k-top-p" / "solution.py")}
    with pytest.raises(ReuseError, match="no such problem .* top-k, top-p"):
        exec("from grader.reuse import solution_of\nsolution_of('top-q')", namespace)


def test_a_problems_folder_out_of_reach_is_said_so(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A file graded on its own reads only itself under the sandbox; solution_of then
    said "no such problem in .../problems", of a folder that holds it."""
    problems = kata(tmp_path)
    real = Path.iterdir

    def refused(self: Path):  # noqa: ANN202 - as Landlock refuses a folder out of reach
        if self == problems:
            raise PermissionError(13, "Permission denied", str(self))
        return real(self)

    monkeypatch.setattr(Path, "iterdir", refused)
    namespace = {"__file__": str(problems / "11-top-k-top-p" / "solution.py")}
    with pytest.raises(ReuseError) as caught:
        exec("from grader.reuse import solution_of\nsolution_of('top-k')", namespace)
    said = str(caught.value)
    assert "cannot be read from this grade" in said and "--submission FOLDER" in said
    assert "no such problem" not in said


def test_from_a_prompt_it_looks_in_the_kata_folder() -> None:
    # Typed at a prompt there is no file to start from: the kata folder's problems/.
    with pytest.raises(ReuseError, match="no such problem") as caught:
        solution_of("no-such-problem-here")
    assert str(paths.PROBLEMS) in str(caught.value)


# -- what the sandbox lets a submission read -----------------------------------------------

def test_the_sandbox_grants_a_learners_problems_folder(tmp_path: Path) -> None:
    problems = kata(tmp_path)
    policy = Policy.for_submission(problems / "11-top-k-top-p" / "solution.py", tmp_path / "s")
    assert str(problems.resolve()) in policy.readable


@pytest.mark.parametrize("where", ["references", "starter snapshot"])
def test_the_sandbox_never_grants_the_graders_own_folders(where: str) -> None:
    folder = paths.SOLUTIONS if where == "references" else paths.STARTERS
    policy = Policy.for_submission(folder / "11-top-k-top-p" / "solution.py", "/nonexistent")
    # Its own folder, as before, but never the folder of every reference or starter.
    assert str(folder.resolve()) not in policy.readable


def test_a_folder_that_is_not_laid_out_like_problems_is_not_granted(tmp_path: Path) -> None:
    (tmp_path / "11-top-k-top-p").mkdir()
    (tmp_path / "photos").mkdir()
    policy = Policy.for_submission(tmp_path / "11-top-k-top-p" / "solution.py", tmp_path / "s")
    assert str(tmp_path.resolve()) not in policy.readable
    assert str((tmp_path / "11-top-k-top-p").resolve()) in policy.readable


def passes_under_landlock(problems: Path, problem: str, tmp_path: Path) -> None:
    report = grade_in_folder(problems, problem, tmp_path)
    assert report["status"] == "pass", messages(report)


@needs_landlock
def test_a_solution_built_on_earlier_ones_passes_in_the_sandbox(tmp_path: Path) -> None:
    passes_under_landlock(kata(tmp_path / "learner"), "top-k-top-p", tmp_path)


@needs_landlock
def test_generate_built_on_the_first_five_passes_in_the_sandbox(tmp_path: Path) -> None:
    problems = kata(tmp_path / "learner",
                    solved=("crop-context", "last-logits", "softmax", "sample", "decode"))
    (problems / "06-generate").mkdir()
    (problems / "06-generate" / "solution.py").write_text(GENERATE)
    passes_under_landlock(problems, "generate", tmp_path)


@needs_landlock
def test_links_to_the_references_or_the_goldens_stay_closed(tmp_path: Path) -> None:
    problems = kata(tmp_path / "learner", solved=("top-p",))
    # The learner's 09 is a link to the reference; a file beside it links to the goldens.
    (problems / "09-top-k").symlink_to(paths.SOLUTIONS / "09-top-k")
    (problems / "goldens.json").symlink_to(paths.DATA / "goldens.json")
    report = grade_in_folder(problems, "top-k-top-p", tmp_path)
    # The file cannot import what it links to, so every check errored: the run is an error.
    assert report["status"] == "error"
    assert "cannot read" in messages(report) and "Permission denied" in messages(report)

    spy = problems / "11-top-k-top-p" / "solution.py"
    spy.write_text(TOP_K_TOP_P.replace(
        'TopK = solution_of("top-k")',
        'TopK = None\nfrom pathlib import Path\n'
        'Path(__file__).parents[1].joinpath("goldens.json").read_text()'))
    report = grade_in_folder(problems, "top-k-top-p", tmp_path)
    assert report["status"] == "error"  # it cannot even import: every check errored
    assert "PermissionError" in messages(report) or "Permission denied" in messages(report)


def test_the_gradebook_stages_and_watches_the_earlier_solutions(tmp_path: Path) -> None:
    from grader.classroom.gradebook.roster import collect
    from grader.classroom.gradebook.state import inputs_key

    kata(tmp_path / "ada")
    chosen = [find("top-k-top-p")]
    learner = collect("ada", tmp_path / "ada", chosen)
    assert set(learner.files) == {"11-top-k-top-p"}
    assert set(learner.others) == {"09-top-k", "10-top-p"}
    before = inputs_key(learner, "grader", {})
    # A change to 09 changes what 11 does: the learner is graded again.
    (tmp_path / "ada" / "problems" / "09-top-k" / "solution.py").write_text("# changed\n")
    assert inputs_key(collect("ada", tmp_path / "ada", chosen), "grader", {}) != before


def test_earlier_files_are_read_from_the_solution_of_calls_and_theirs(tmp_path: Path) -> None:
    problems = tmp_path / "problems"
    for folder in ("09-top-k", "10-top-p", "11-top-k-top-p", "12-no-repeat-ngram"):
        (problems / folder).mkdir(parents=True)
        (problems / folder / "solution.py").write_text("class Solution:\n    pass\n")
    (problems / "11-top-k-top-p" / "solution.py").write_text(TOP_K_TOP_P)
    # 10 takes 12 by its folder's name, through the module, and names an unknown one.
    (problems / "10-top-p" / "solution.py").write_text(
        "from grader import reuse\nA = reuse.solution_of('12-no-repeat-ngram')\n"
        "B = reuse.solution_of('no-such-problem')\n")
    found = earlier_files(problems / "11-top-k-top-p" / "solution.py")
    assert [f.relative_to(problems).as_posix() for f in found] == [
        "09-top-k/solution.py", "10-top-p/solution.py", "12-no-repeat-ngram/solution.py"]
    assert earlier_files(problems / "09-top-k" / "solution.py") == []
    assert earlier_files(tmp_path / "elsewhere.py") == []


def test_a_status_is_kept_for_the_file_and_the_earlier_solutions_it_uses(tmp_path: Path) -> None:
    import hashlib

    from grader.learner.status import solution_hash

    problems = tmp_path / "problems"
    for folder in ("09-top-k", "10-top-p", "11-top-k-top-p"):
        (problems / folder).mkdir(parents=True)
        (problems / folder / "solution.py").write_text("class Solution:\n    pass\n")
    later = problems / "11-top-k-top-p" / "solution.py"
    later.write_text(TOP_K_TOP_P)
    top_k = problems / "09-top-k" / "solution.py"
    # A file that uses no earlier solution keeps the plain hash it was recorded with.
    assert solution_hash(top_k) == hashlib.sha256(top_k.read_bytes()).hexdigest()
    before = solution_hash(later)
    top_k.write_text("class Solution:\n    pass  # saved again, changed\n")
    assert solution_hash(later) != before  # graded with the old 09: not this 11's grade
