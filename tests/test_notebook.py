"""`from grader import check; check("decode", Solution)` grades a class from a notebook.

IPython keeps every cell's source where `inspect.getsource` finds it, as it does
for a module loaded from a file, so a module loaded from a temporary file stands
in for a notebook here; `python -c` stands in for a session that keeps none.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import psutil
import pytest
from test_reuse import TOP_K_TOP_P

from grader.learner.notebook import CheckError, solution_file
from grader.registry import find
from grader.sandbox.host.pool import SPAWN_VARIABLE
from tests.conftest import ROOT, messages, module_from

# A decode written the way a learner might in a notebook: a helper in another
# cell, torch under another name.
CELLS = '''\
import torch as T


def as_list(ids):
    if isinstance(ids, T.Tensor):
        return ids.reshape(-1).tolist()
    return list(ids)


class MyDecoder:
    def decode(self, ids, int_to_char):
        return "".join(int_to_char[int(i)] for i in as_list(ids))


class CharacterList:
    def decode(self, ids, int_to_char):
        return [int_to_char[int(i)] for i in as_list(ids)]


class FirstRowOnly:
    def decode(self, ids, int_to_char):
        if isinstance(ids, T.Tensor) and ids.dim() == 2:
            ids = ids[0][:1]
        return "".join(int_to_char[int(i)] for i in as_list(ids))
'''


def python(*args: str, cwd: Path = ROOT, spawn: bool = False) -> subprocess.CompletedProcess[str]:
    # This checkout first; whatever else the caller's path holds (IPython, say) after it.
    extra = [os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else []
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *extra])}
    if spawn:  # the path of macOS and Windows, taken on Linux
        env[SPAWN_VARIABLE] = "1"
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=cwd,
                          env=env)


def report_lines(stdout: str) -> list[str]:
    """The report itself: without the header line, which names the source graded."""
    return [line for line in stdout.splitlines()
            if not line.startswith(("gpt-kata grading", "RESULT"))]


def test_importing_grader_stays_light() -> None:
    done = python("-c", "import sys, grader\n"
                        "print(sorted(m for m in ('torch', 'pytest', 'grader.learner.notebook') "
                        "if m in sys.modules))\n"
                        "from grader import check\nprint(check.__module__)")
    assert done.stdout.split("\n")[:2] == ["[]", "grader.learner.notebook"], done.stderr


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> subprocess.CompletedProcess[str]:
    """One notebook session (SESSION below), as this system grades: its checks' reports
    in turn, each after a line `=== CHECK`."""
    cells = tmp_path_factory.mktemp("session") / "cells.py"
    cells.write_text(CELLS)
    return python("-c", SESSION, str(cells))


@pytest.mark.parametrize("name, passes, nth", [("MyDecoder", True, 0),
                                               ("FirstRowOnly", False, 1)])
def test_a_class_from_a_notebook_gets_the_report_grade_prints(
        session: subprocess.CompletedProcess[str], tmp_path: Path, name: str, passes: bool,
        nth: int) -> None:
    checked = session.stdout.split("=== CHECK\n")[1:][nth]

    # The same class saved as a solution file and graded by the command line.
    cells = tmp_path / "cells.py"
    cells.write_text(CELLS)
    problem = find("decode")
    file = tmp_path / "problems" / problem.folder / "solution.py"
    file.parent.mkdir(parents=True)
    module = module_from(cells, "cells_for_test")
    file.write_text(solution_file(problem, getattr(module, name), vars(module)))
    graded = python("-m", "grader", "grade", "decode", "--submission", str(file))
    assert graded.returncode == (0 if passes else 1), graded.stderr
    # The same report, but for how the hint is asked for where the class was graded.
    cli_asks, notebook_asks = "stuck? `gpt-kata hint decode`", "stuck? `hint('decode')`"
    assert (cli_asks in graded.stdout) is (notebook_asks in checked) is not passes
    assert report_lines(checked.replace(notebook_asks, cli_asks)) == \
        report_lines(graded.stdout), session.stderr[-3000:]
    assert ("7/7 checks pass" in checked) is passes


def test_hint_in_a_notebook_gives_the_fix_its_last_check_named_then_the_hints(
        session: subprocess.CompletedProcess[str]) -> None:
    """`gpt-kata hint` reads the last grades of the problems/ files, which know nothing
    of a notebook's: the notebook's own hint() reads its session's last check()."""
    asked = session.stdout.split("=== HINT\n")[1]
    report, hints = asked.split("next: problems/05-decode/README.md\n")
    assert "This is what happens when you return a list of characters." in report
    fix, first = hints.split("(`hint('decode')` again for a stronger hint)\n")[:2]
    assert fix.startswith("05-decode, the fix for the mistake your last grade named:")
    assert "Fix: join them into one str" in fix
    assert first.startswith("05-decode, hint 1 of 3:")


def test_a_class_without_source_gets_a_message_not_a_traceback() -> None:
    # Compiled from a text no file or line cache holds: Python 3.13 keeps the source
    # of `python -c` itself, so a class written there has a source to find.
    done = python("-c", textwrap.dedent('''\
        source = "class Solution:\\n    def decode(self, ids, int_to_char):\\n        return ''\\n"
        exec(compile(source, "<typed somewhere>", "exec"))
        from grader import check
        print("RESULT", check("decode", Solution))
        '''))
    assert "RESULT False" in done.stdout, done.stderr
    assert "cannot find the source of Solution" in done.stdout
    assert "problems/05-decode/solution.py" in done.stdout
    assert "Traceback" not in done.stdout + done.stderr


def test_a_name_from_the_notebook_that_cannot_travel_is_named(tmp_path: Path) -> None:
    cells = tmp_path / "scaled.py"
    cells.write_text("import torch\nSCALE = torch.tensor(2.0)\nODD = float('nan')\n\n"
                     "class Solution:\n    def softmax(self, logits):\n"
                     "        return logits * SCALE * ODD\n")
    module = module_from(cells, "cells_for_test")
    with pytest.raises(CheckError, match="uses ODD, SCALE") as refused:
        solution_file(find("softmax"), module.Solution, vars(module))
    assert "same cell" not in str(refused.value)  # the same cell did not help


def test_a_notebooks_constants_travel_as_they_are(tmp_path: Path) -> None:
    """EPS = 1e-9 in a cell: the message said to define it "in the same cell", where it
    was already; a number, string or tuple of them is written into the file."""
    cells = tmp_path / "constants.py"
    cells.write_text("EPS = 1e-9\nDIM = -1\nLABEL = 'p'\nSHAPE = (2, (3, None))\n\n"
                     "class Solution:\n    def softmax(self, logits):\n"
                     "        assert LABEL == 'p' and SHAPE[1][0] == 3\n"
                     "        e = (logits - logits.max(dim=DIM, keepdim=True).values).exp()\n"
                     "        return e / (e.sum(dim=DIM, keepdim=True) + EPS)\n")
    module = module_from(cells, "constants_for_test")
    text = solution_file(find("softmax"), module.Solution, vars(module))
    for line in ("EPS = 1e-09", "DIM = -1", "LABEL = 'p'", "SHAPE = (2, (3, None))"):
        assert line in text, text
    scope: dict = {}
    exec(compile(text, "solution.py", "exec"), scope)
    import torch

    assert torch.allclose(scope["Solution"]().softmax(torch.zeros(1, 2)), torch.full((1, 2), 0.5))


def test_a_module_class_of_another_name_is_graded_under_the_problems_name(
        tmp_path: Path, grade_here) -> None:
    """A notebook's attention head called AttentionHead: the grader looks for Head, and
    finds it (it once found only a `Solution` alias, and said there was no Head). The
    file is graded as `gpt-kata grade` grades it, in the test process's grading process:
    what the command prints of a notebook's class is the test above's."""
    reference = (ROOT / "solutions" / "20-attention-head" / "solution.py").read_text()
    cells = tmp_path / "cells.py"
    cells.write_text(reference.replace("class Head(", "class AttentionHead("))
    module = module_from(cells, "cells_for_test")
    problem = find("attention-head")
    file = tmp_path / "problems" / problem.folder / "solution.py"
    file.parent.mkdir(parents=True)
    file.write_text(solution_file(problem, module.AttentionHead, vars(module)))
    report = grade_here("attention-head", file)
    assert report["status"] == "pass", messages(report)
    [summary] = report["problems"]
    assert (summary["passed"], summary["total"]) == (8, 8), summary


def test_an_unknown_problem_is_a_message(tmp_path: Path) -> None:
    done = python("-c", "from grader import check\nprint('RESULT', check('decoed', int))")
    assert "RESULT False" in done.stdout and "did you mean decode" in done.stdout


def run_like_a_notebook_cell(cell: str, module_name: str) -> dict:
    """Run `cell` as IPython runs one: its text kept in linecache under the name
    it was compiled with, in a main module that has no file."""
    import linecache
    import types

    filename = f"<ipython-input-{module_name}>"
    linecache.cache[filename] = (len(cell), None, cell.splitlines(keepends=True), filename)
    module = types.ModuleType(module_name)
    sys.modules[module_name] = module
    exec(compile(cell, filename, "exec"), module.__dict__)
    return module.__dict__


def test_a_class_from_a_cell_is_found_through_its_methods() -> None:
    import inspect

    names = run_like_a_notebook_cell(CELLS, "cell_main")
    with pytest.raises((OSError, TypeError)):
        inspect.getsource(names["MyDecoder"])  # what Python alone manages in a notebook
    text = solution_file(find("decode"), names["MyDecoder"], names)
    assert "class MyDecoder:" in text and "def as_list(ids):" in text
    assert "import torch as T" in text and text.endswith("Solution = MyDecoder\n")
    scope: dict = {}
    exec(compile(text, "solution.py", "exec"), scope)
    assert scope["Solution"]().decode([9, 23, 26, 39], {9: "L", 23: "i", 26: "l", 39: "y"}) \
        == "Lily"


def test_a_class_that_only_inherits_is_found_in_its_cell() -> None:
    older = "class Renamed:\n    pass\n"
    run_like_a_notebook_cell(older, "cell_older")
    cell = ("class Decoder:\n"
            "    def decode(self, ids, int_to_char):\n"
            "        return ''.join(int_to_char[i] for i in ids)\n\n\n"
            "class Renamed(Decoder):\n"
            "    pass\n")
    names = run_like_a_notebook_cell(cell, "cell_inherits")
    text = solution_file(find("decode"), names["Renamed"], names)
    assert "class Renamed(Decoder):" in text and "class Decoder:" in text
    scope: dict = {}
    exec(compile(text, "solution.py", "exec"), scope)
    assert scope["Solution"]().decode([9, 23], {9: "L", 23: "i"}) == "Li"


def test_in_an_ipython_shell(tmp_path: Path) -> None:
    pytest.importorskip("IPython")
    script = textwrap.dedent(f'''\
        from IPython.core.interactiveshell import InteractiveShell
        shell = InteractiveShell.instance()
        shell.run_cell({CELLS!r})
        shell.run_cell("from grader import check\\nresult = check('decode', MyDecoder)")
        print("RESULT", shell.user_ns["result"])
        ''')
    done = python("-c", script, cwd=tmp_path)
    assert "RESULT True" in done.stdout, done.stdout + done.stderr


def with_solved(kata: Path, *folders: str) -> None:
    """These problems solved (by the references) in the kata folder `kata`."""
    for folder in folders:
        (kata / "problems" / folder).mkdir(parents=True)
        (kata / "problems" / folder / "solution.py").write_text(
            (ROOT / "solutions" / folder / "solution.py").read_text())


def cell_then(cell: str, then: str) -> str:
    """A script that runs `cell` as a notebook's cell (module `cell_main`), then `then`."""
    return textwrap.dedent(f'''\
        import linecache, sys, types
        cell = {cell!r}
        linecache.cache["<cell>"] = (len(cell), None, cell.splitlines(True), "<cell>")
        main = types.ModuleType("cell_main")
        sys.modules["cell_main"] = main
        exec(compile(cell, "<cell>", "exec"), main.__dict__)
        ''') + textwrap.dedent(then)


def test_a_notebook_class_may_use_earlier_solutions(tmp_path: Path) -> None:
    # A kata folder where 09 and 10 are solved; the notebook's cell loads them.
    with_solved(tmp_path, "09-top-k", "10-top-p")
    # The learner's 11, written with their 09 and 10.
    script = cell_then(TOP_K_TOP_P, """\
        from grader import check
        print("RESULT", check("top-k-top-p", main.Solution))
        """)
    done = python("-c", script, cwd=tmp_path)
    assert "RESULT True" in done.stdout, done.stdout + done.stderr


def test_a_class_from_examples_that_uses_its_files_other_classes_is_graded(
        tmp_path: Path) -> None:
    """examples("gpt") hands the notebook the learner's GPT, whose file also holds the
    Block it builds; check("gpt", GPT) brings that Block as its source. It once brought
    it as solution_of("23-gpt", name="Block"): the file being graded loading itself,
    which ended in a RecursionError for a file that passes `gpt-kata grade`."""
    with_solved(tmp_path, "23-gpt")
    done = python("-c", textwrap.dedent("""\
        from grader.play import examples
        from grader import check
        print("RESULT", check("gpt", examples("gpt")["GPT"]))
        """), cwd=tmp_path)
    assert "RESULT True" in done.stdout, done.stdout + done.stderr
    assert "RecursionError" not in done.stdout


REUSED_CELL = """\
from __future__ import annotations

from grader.reuse import solution_of

Block = solution_of("transformer-block", name="Block")
apply_rope = solution_of("rope")().apply_rope
loss_fn = solution_of("loss")()
bare = solution_of("rope").apply_rope


class Solution:
    def uses(self, x: LlamaConfig) -> NotDefinedAnywhere:
        return Block, apply_rope(x), loss_fn, bare
"""


def test_what_a_cell_took_with_solution_of_travels_as_it_was_taken(tmp_path: Path) -> None:
    """A class by its name, a method of an instance, an instance, a class's function:
    each is brought into the checked file as the cell took it, and means the same there.
    Names read only in annotations need not be brought where the starter, as problem
    34's does, defers annotations (its LlamaConfig is imported for type checkers)."""
    with_solved(tmp_path, "22-transformer-block", "32-rope", "24-loss")
    script = cell_then(REUSED_CELL, """\
        from grader.learner import notebook
        from grader.registry import find
        print(notebook.solution_file(find("grouped-query-attention"), main.Solution,
                                     vars(main)))
        """)
    done = python("-c", script, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    text = done.stdout
    for line in ('Block = solution_of(\'22-transformer-block\', name=\'Block\')',
                 "apply_rope = solution_of('32-rope')().apply_rope",
                 "loss_fn = solution_of('24-loss')()",
                 "bare = solution_of('32-rope').apply_rope"):
        assert line in text.splitlines(), text


SESSION = '''\
import importlib.util, os, sys
spec = importlib.util.spec_from_file_location("cells", sys.argv[1])
cells = importlib.util.module_from_spec(spec)
sys.modules["cells"] = cells
spec.loader.exec_module(cells)
from grader import check
from grader.learner import notebook

def checked(solution):
    print("=== CHECK", flush=True)
    return check("decode", solution)

first = checked(cells.MyDecoder)
pool = notebook.kernel_pool()
server = pool.server.process if pool.server else None
second = checked(cells.FirstRowOnly)
kept = notebook.kernel_pool() is pool and not pool.workers
if server is not None:
    server.kill()  # the fork server dies between two cells
    server.wait()
third = checked(cells.MyDecoder)
again = server is None or notebook.kernel_pool().server.process.pid != server.pid
print("RESULT", first, second, kept, third, again)
print("SERVER", server.pid if server else notebook.kernel_pool().server)
print("=== HINT", flush=True)  # after a check that names a mistake
check("decode", cells.CharacterList)
notebook.hint("decode")
notebook.hint("decode")
'''


def test_a_session_grades_each_check_with_one_pool(
        session: subprocess.CompletedProcess[str]) -> None:
    # A check after the first forks its worker from the server the first one started
    # (seconds sooner), grades its own class, and leaves no worker behind; a server
    # that died between cells is started again. Where workers are spawned (macOS,
    # Windows) each check spawns one from the same pool.
    assert_one_pool(session, spawned=not sys.platform.startswith("linux"))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forcing a path is Linux's")
def test_a_session_on_the_spawned_path_grades_each_check(tmp_path: Path) -> None:
    cells = tmp_path / "cells.py"
    cells.write_text(CELLS)
    assert_one_pool(python("-c", SESSION, str(cells), spawn=True), spawned=True)


def assert_one_pool(done: subprocess.CompletedProcess[str], spawned: bool) -> None:
    assert "RESULT True False True True True" in done.stdout, done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    server = done.stdout.split("SERVER ")[1].split()[0]
    if spawned:
        assert server == "None"
        return
    # The session's end ends its server: nothing of the grader outlives the kernel.
    pid = int(server)
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


def test_check_speaks_chinese(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """check()'s own words read in the learner's language: why a class cannot be graded,
    and the line that starts its grade."""
    import io

    from rich.console import Console

    from grader.learner import notebook

    monkeypatch.setenv("GPT_KATA_LANG", "zh")
    cells = tmp_path / "scaled.py"
    cells.write_text("SCALE = object()\n\nclass Solution:\n"
                     "    def softmax(self, logits):\n        return logits * SCALE\n")
    module = module_from(cells, "cells_for_chinese")
    with pytest.raises(CheckError, match="Solution 用到了 SCALE"):
        solution_file(find("softmax"), module.Solution, vars(module))
    typed: dict = {}
    exec(compile("class Solution:\n    def decode(self, ids, int_to_char):\n"  # noqa: S102
                 "        return ''\n", "<typed somewhere>", "exec"), typed)
    with pytest.raises(CheckError, match="Python 找不到 Solution 的源代码") as raised:
        solution_file(find("decode"), typed["Solution"], typed)
    assert "problems/05-decode/solution.py" in str(raised.value)
    monkeypatch.setattr(notebook, "_grade_in_the_sandbox", lambda *args: True)
    monkeypatch.setattr(notebook.paths, "in_a_copy", lambda: False)
    out = Console(file=io.StringIO(), width=200)
    assert notebook._grade(find("decode"), "x = 1\n", False, out)
    assert out.file.getvalue().startswith("gpt-kata 正在为 05-decode 评分你的类")


def test_an_interrupted_check_says_so_from_check_itself(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Interrupting the cell showed a traceback through the grader's engine, down to
    ctrl_c.py; the KeyboardInterrupt now comes from check()'s own call, with a sentence."""
    from grader.grading.engine import session
    from grader.learner import notebook, sandbox_notice

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(session, "grade_problems", interrupted)
    monkeypatch.setattr(notebook, "kernel_pool", lambda: None)
    monkeypatch.setattr(sandbox_notice, "unsandboxed", lambda pool: None)
    with pytest.raises(KeyboardInterrupt, match="the grade was interrupted") as stopped:
        notebook._grade_in_the_sandbox(find("softmax"), tmp_path / "solution.py", False, None)
    assert stopped.value.__suppress_context__
    assert stopped.traceback[-1].name == "_grade_in_the_sandbox"
