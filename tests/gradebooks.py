"""Finished gradebooks written by hand, and a merge run as the workflow's merge job runs it.

The tests of `gradebook --merge` need gradebook folders as a run leaves them, without
grading anyone first, and a merge that may import no third-party package: the merge
job of .github/workflows/grade-class.yml installs the grader with --no-deps.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

# Run with `python -c`: every third-party package the grader may use is unimportable.
WITHOUT_DEPENDENCIES = (
    "import sys\n"
    "class Block:\n"
    "    def find_spec(self, name, path=None, target=None):\n"
    "        if name.split('.')[0] in {'torch', 'numpy', 'pytest', 'hypothesis',\n"
    "                                  'rich', 'safetensors', 'matplotlib'}:\n"
    "            raise ImportError(name)\n"
    "sys.meta_path.insert(0, Block())\n"
    "from grader.cli.main import main\n"
    "sys.exit(main(sys.argv[1:]))\n")


def finished_gradebook(folder: Path, table: str, shard: str | None = None,
                       reports: Iterable[str] = ()) -> Path:
    """A gradebook folder holding gradebook.csv as `table`, the shard record "K/N" of
    `gradebook --shard` if one is given, and a passing report for each of `reports`."""
    folder.mkdir(parents=True)
    (folder / "gradebook.csv").write_text(table, encoding="utf-8")
    if shard is not None:
        (folder / ".gradebook-shard.json").write_text(json.dumps({"shard": shard}))
    for name in reports:
        (folder / f"{name}.json").write_text(json.dumps({"status": "pass", "tests": []}))
    return folder


def merge_without_dependencies(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`gpt-kata gradebook --merge ARGS...`, with no third-party package importable."""
    return subprocess.run([sys.executable, "-c", WITHOUT_DEPENDENCIES, "gradebook", "--merge",
                           *map(str, args)], capture_output=True, text=True, cwd=cwd,
                          timeout=600)  # against a hang only: a merge takes a second
