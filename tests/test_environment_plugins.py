"""Plugins installed in the learner's environment take no part in a grade.

pytest and hypothesis both run, when they start, the plugins that any installed
distribution names in its entry points (`pytest11`, `hypothesis`). A plugin that
reorders, reruns or times tests, or registers strategies, could change a grade; the
grader turns both off. The distribution below names one of each: each writes a
marker file when it runs.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import ROOT

PLUGIN = '''
import os
from pathlib import Path

def mark(kind):
    Path(os.environ["PLUGIN_MARKERS"], kind).write_text("ran")

def hypothesis_hook():
    mark("hypothesis")

mark("pytest")  # pytest imports a pytest11 plugin's module: running it is the import
'''

ENTRY_POINTS = """[pytest11]
some_plugin = some_plugin

[hypothesis]
some_plugin = some_plugin:hypothesis_hook
"""


def environment_with_plugins(tmp_path: Path) -> tuple[dict[str, str], Path]:
    site = tmp_path / "site"
    info = site / "some_plugin-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: some-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    (site / "some_plugin.py").write_text(PLUGIN)
    markers = tmp_path / "markers"
    markers.mkdir()
    env = {**os.environ, "PYTHONPATH": str(site), "PLUGIN_MARKERS": str(markers)}
    env.pop("HYPOTHESIS_NO_PLUGINS", None)
    env.pop("PYTEST_DISABLE_PLUGIN_AUTOLOAD", None)
    return env, markers


def test_a_grade_runs_no_plugin_of_the_environment(tmp_path):
    env, markers = environment_with_plugins(tmp_path)
    # Without the grader, both plugins run: the distribution is seen.
    empty = tmp_path / "empty"
    empty.mkdir()
    collect = f"pytest.main(['--collect-only', '-q', '-p', 'no:cacheprovider', {str(empty)!r}])"
    subprocess.run([sys.executable, "-c", f"import hypothesis, pytest; {collect}"],
                   env=env, cwd=tmp_path, capture_output=True, timeout=120, check=False)
    assert sorted(p.name for p in markers.iterdir()) == ["hypothesis", "pytest"]
    for marker in markers.iterdir():
        marker.unlink()

    done = subprocess.run([sys.executable, "-m", "grader", "grade", "generate", "--reference",
                           "-q"], env=env, cwd=ROOT, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert list(markers.iterdir()) == []
