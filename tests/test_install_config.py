"""The README's installs take torch's CPU build on Linux and Windows, never a CUDA
package, with uv (`uv run gpt-kata grade`) and with pip (its one-line install).

PyTorch's CPU index cannot be reached from every test machine, so a stand-in
serves in its place on 127.0.0.1: a PEP 503 page for torch holding small wheels
named as PyTorch names its CPU builds (`torch-2.13.0+cpu-...`). The project's
own configuration is used with only the index's address changed; everything else
comes from the registry the machine has (PyPI). Nothing is installed: uv writes a
lock, pip a dry run's report, and each is read for where torch came from.
"""

from __future__ import annotations

import functools
import hashlib
import http.server
import json
import re
import shutil
import subprocess
import sys
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import ROOT

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

CPU_INDEX = "https://download.pytorch.org/whl/cpu"
STAND_IN_VERSION = "2.13.0+cpu"
# The wheels the stand-in offers: every Python the README names, Linux and Windows.
TAGS = [f"cp3{minor}-cp3{minor}-{platform}" for minor in (10, 11, 12, 13)
        for platform in ("manylinux_2_28_x86_64", "win_amd64")]
# What a CUDA build of torch brings with it on Linux.
CUDA_PACKAGES = re.compile(r"^(nvidia-|triton$|cuda-)")


def stand_in_wheel(folder: Path, tag: str) -> str:
    """A wheel named and described as PyTorch's CPU build of torch; its file name."""
    name = f"torch-{STAND_IN_VERSION}-{tag}.whl"
    info = f"torch-{STAND_IN_VERSION}.dist-info"
    with zipfile.ZipFile(folder / name, "w") as wheel:
        wheel.writestr("torch/__init__.py", f"__version__ = {STAND_IN_VERSION!r}\n")
        wheel.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: torch\n"
                                           f"Version: {STAND_IN_VERSION}\n")
        wheel.writestr(f"{info}/WHEEL", f"Wheel-Version: 1.0\nGenerator: stand-in\n"
                                        f"Root-Is-Purelib: false\nTag: {tag}\n")
        wheel.writestr(f"{info}/RECORD", "")
    return name


@pytest.fixture(scope="module")
def stand_in(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The stand-in index's address, served for the module's tests."""
    root = tmp_path_factory.mktemp("cpu-index")
    torch = root / "simple" / "torch"
    torch.mkdir(parents=True)
    links = []
    for tag in TAGS:
        name = stand_in_wheel(torch, tag)
        digest = hashlib.sha256((torch / name).read_bytes()).hexdigest()
        links.append(f'<a href="{name}#sha256={digest}">{name}</a>')
    (torch / "index.html").write_text("<html><body>\n" + "\n".join(links) + "\n</body></html>\n")
    (root / "simple" / "index.html").write_text('<a href="torch/">torch</a>\n')
    handler = functools.partial(QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/simple"
    finally:
        server.shutdown()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base's name
        pass


def project_copy(tmp_path: Path, index: str) -> Path:
    """The project's metadata with PyTorch's index replaced by `index`."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert CPU_INDEX in text, "pyproject.toml no longer names PyTorch's CPU index"
    (tmp_path / "pyproject.toml").write_text(text.replace(CPU_INDEX, index), encoding="utf-8")
    shutil.copy(ROOT / "README.md", tmp_path / "README.md")
    return tmp_path


def test_uv_takes_torch_from_the_cpu_index_on_linux_and_windows(
        tmp_path: Path, stand_in: str) -> None:
    uv = shutil.which("uv") or pytest.skip("uv is not installed (the dev extra has it)")
    project = project_copy(tmp_path, stand_in)
    done = subprocess.run([uv, "lock", "--no-cache"], cwd=project, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    lock = tomllib.loads((project / "uv.lock").read_text(encoding="utf-8"))
    torches = {p["version"]: p["source"].get("registry") for p in lock["package"]
               if p["name"] == "torch"}
    # Linux and Windows: the CPU build, from the CPU index; macOS: PyPI's (its CPU build).
    assert torches.get(STAND_IN_VERSION) == stand_in, torches
    assert set(torches.values()) <= {stand_in, "https://pypi.org/simple"}, torches
    cuda = sorted(p["name"] for p in lock["package"] if CUDA_PACKAGES.match(p["name"]))
    assert not cuda, f"the lock holds CUDA packages: {cuda}"
    # Nothing else comes from the CPU index: it is explicit, for torch alone.
    elsewhere = {p["name"] for p in lock["package"]
                 if p["source"].get("registry") == stand_in}
    assert elsewhere == {"torch"}


def readme_pip_install() -> str:
    """The README's one-line pip install, without the venv and the grade around it."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(r"pip install -e \. --extra-index-url (\S+)", text)
    assert match, "README.md no longer installs with pip and PyTorch's CPU index"
    assert match[1] == CPU_INDEX
    return match[0]


def newest_python() -> str:
    """Python 3.13 where one is at hand (PyPI's torch is the CUDA build there, with
    no CPU wheel to fall back on), else this one."""
    for name in ("python3.13", "python3.12"):
        found = shutil.which(name)
        # A version manager's shim may name a Python it will not run.
        if found and subprocess.run([found, "-c", "import venv"], capture_output=True,
                                    timeout=60).returncode == 0:
            return found
    return sys.executable


def test_the_readmes_pip_install_takes_the_cpu_build(tmp_path: Path, stand_in: str) -> None:
    command = readme_pip_install().replace(CPU_INDEX, stand_in).split()
    venv = tmp_path / "venv"
    subprocess.run([newest_python(), "-m", "venv", str(venv)], check=True, timeout=120)
    python = venv / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")
    report = tmp_path / "report.json"
    # From a copy of the checkout's metadata and package, so that no build files land here.
    project = project_copy(tmp_path / "project", stand_in)
    shutil.copytree(ROOT / "grader", project / "grader",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for folder in ("problems", "solutions", "data"):
        (project / folder).mkdir()
    done = subprocess.run(
        [str(python), "-m", *command[:2], "--dry-run", "--quiet", "--report", str(report),
         # PyPI's other packages are fetched live: a dropped connection is tried again.
         "--retries", "3", *command[2:]],
        cwd=project, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    installed = {item["metadata"]["name"].lower(): item for item in
                 json.loads(report.read_text())["install"]}
    torch = installed["torch"]
    assert torch["metadata"]["version"] == STAND_IN_VERSION
    assert torch["download_info"]["url"].startswith(stand_in)
    cuda = sorted(name for name in installed if CUDA_PACKAGES.match(name))
    assert not cuda, f"pip would install CUDA packages: {cuda}"


def test_the_copy_and_the_workflows_install_the_same_way() -> None:
    """The learners' copy takes torch from the same index by the same rule, and every
    workflow that installs torch takes its CPU build."""
    ours = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["uv"]
    templates = ROOT / "grader" / "release" / "templates"
    copy = tomllib.loads((templates / "pyproject.toml").read_text(encoding="utf-8"))
    assert copy["tool"]["uv"] == ours
    assert readme_pip_install() in (templates / "README.md").read_text(encoding="utf-8")
    for workflow in sorted((ROOT / ".github" / "workflows").glob("*.yml")):
        for line in workflow.read_text(encoding="utf-8").splitlines():
            if re.search(r"pip install (?!--no-deps)[^#]*(-e \.|\. |\.$|torch)", line):
                assert CPU_INDEX in line, f"{workflow.name}: {line.strip()}"
