"""Classroom50 autograder for a gpt-kata assignment: a template.

Copy it into your Classroom50 config repository (the private `classroom50`
repository of your organization) as CLASSROOM/autograders/ASSIGNMENT/autograder.py
(with `gh teacher autograder`, or by hand), and set GRADER below to your own copy
of the grader at a tag or commit. Classroom50's runner starts it once per
submission, with the learner's checkout as the working directory, and reads
./result.json when it exits 0.

It installs the grader from GRADER into a virtual environment of its own outside
the checkout, never from the learner's files: their grader/ folder, pyproject.toml
or anything else in their repository is never installed, imported or run. Their
problems/NN-slug/solution.py files are graded as data in classroom mode (inside
the sandbox), every problem in the grader's registry, by
`python -m grader.classroom.classroom50`, which writes result.json: one test per
problem, worth its points, passed when every check passes; a missing problem
scores 0 out of its points. Exit 0 when it graded; anything else is an
infrastructure error, shown as such by Classroom50 (the learner keeps their last
grade).

Only the Python standard library is used here: it runs before the grader exists.
To try it without Classroom50, run it from a kata folder with GPT_KATA_PYTHON set
to a Python that has the grader installed (nothing is installed then) and
GPT_KATA_ALLOW_UNISOLATED=1 where there is no sandbox.
"""

import os
import subprocess
import sys
import tempfile
from pathlib import Path

# Your pinned grader: a tag or a commit of your repository, never a branch.
GRADER = "git+https://github.com/INSTRUCTOR/gpt-kata@TAG"
# The torch the grader's goldens were made with (data/manifest.json), CPU only.
TORCH = "torch==2.13.0"
TORCH_INDEX = "https://download.pytorch.org/whl/cpu"


def run(command: list[str], cwd: Path) -> None:
    print("+ " + " ".join(command), flush=True)
    subprocess.run(command, cwd=cwd, check=True)


def install(work: Path) -> Path:
    """A virtual environment with the instructor's grader, made outside the checkout."""
    venv = work / "venv"
    run([sys.executable, "-m", "venv", str(venv)], cwd=work)
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    run([str(python), "-m", "pip", "install", "--quiet", TORCH, "--index-url", TORCH_INDEX],
        cwd=work)
    run([str(python), "-m", "pip", "install", "--quiet", GRADER], cwd=work)
    return python


def allow_user_namespaces() -> None:
    """Ubuntu 24.04 keeps unprivileged user namespaces from programs without an
    AppArmor profile; the sandbox puts each worker in its own. On GitHub's runners,
    where Classroom50 grades, sudo allows them; elsewhere (an instructor trying the
    template on their own machine) nothing is changed, and the grader says what it
    lacks."""
    if os.environ.get("GITHUB_ACTIONS") != "true":
        return
    try:
        subprocess.run(["sudo", "-n", "sysctl", "-w",
                        "kernel.apparmor_restrict_unprivileged_userns=0"],
                       check=False, capture_output=True)
    except OSError:
        pass


def main() -> int:
    checkout = Path.cwd()
    temp = os.environ.get("RUNNER_TEMP") or None
    with tempfile.TemporaryDirectory(prefix="gpt-kata-", dir=temp) as folder:
        work = Path(folder)
        given = os.environ.get("GPT_KATA_PYTHON")
        python = Path(given) if given else install(work)
        allow_user_namespaces()
        # From a folder of its own, so that only the installed grader is imported.
        graded = subprocess.run([str(python), "-m", "grader.classroom.classroom50",
                                 "--submission", str(checkout),
                                 "--result", str(checkout / "result.json")], cwd=work)
        return graded.returncode


if __name__ == "__main__":
    sys.exit(main())
