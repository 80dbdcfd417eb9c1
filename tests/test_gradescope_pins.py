"""The Gradescope bundle's pins (data/gradescope-pins.txt): every one exact, inside
pyproject.toml's ranges, torch at the goldens' version, and nothing the grader needs
at run time left out."""

from __future__ import annotations

import json
import sys
from importlib import metadata
from pathlib import Path

import pytest
from conftest import ROOT
from packaging.utils import canonicalize_name

from grader.classroom.gradescope_pins import PINS, needed, read_pins, target_environment

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

PYTHON, PINNED = read_pins(ROOT / PINS)
ENV = target_environment(PYTHON)


def test_pyprojects_dependencies_are_pinned_inside_their_ranges() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = needed(project["dependencies"], ENV)
    assert wanted, "pyproject.toml names no dependency for Gradescope's platform"
    for requirement in wanted:
        name = canonicalize_name(requirement.name)
        assert name in PINNED, f"{requirement} is not pinned"
        assert requirement.specifier.contains(PINNED[name], prereleases=True), (
            f"{name}=={PINNED[name]} is outside pyproject.toml's {requirement}")


def test_every_install_draws_the_examples_with_the_bundles_hypothesis() -> None:
    """Another version of hypothesis draws other examples from the same seed: the
    learner's install, the gradebook's and the classroom workflows' take the bundle's."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    (hypothesis,) = [r for r in needed(project["dependencies"], ENV) if r.name == "hypothesis"]
    (exact,) = list(hypothesis.specifier)
    assert (exact.operator, exact.version) == ("==", PINNED["hypothesis"]), hypothesis


def test_torch_is_the_goldens_version() -> None:
    manifest = json.loads((ROOT / "data" / "manifest.json").read_text())
    assert PINNED["torch"] == manifest["platform"]["torch"].split("+")[0]


def torch_is_a_cuda_build() -> bool:
    # PyPI's Linux torch is the CUDA build under the plain version number.
    import torch

    return torch.version.cuda is not None


def test_what_the_pinned_packages_need_is_pinned_too() -> None:
    # Each pinned package installed here at its pinned version says what it needs;
    # one installed at another version cannot say, and is left out. So is another
    # build of it: the bundle installs torch's CPU build from its index, and a CUDA
    # build of the same version needs CUDA's packages, which the bundle never gets.
    checked = 0
    for name, version in PINNED.items():
        try:
            if metadata.version(name).split("+")[0] != version:
                continue
            if name == "torch" and torch_is_a_cuda_build():
                continue
        except metadata.PackageNotFoundError:
            continue
        checked += 1
        for requirement in needed(metadata.requires(name) or [], ENV):
            dependency = canonicalize_name(requirement.name)
            assert dependency in PINNED, f"{name} needs {requirement}, which is not pinned"
            assert requirement.specifier.contains(PINNED[dependency], prereleases=True), (
                f"{name} needs {requirement}, not the pinned {PINNED[dependency]}")
    assert checked, "none of the pinned versions is installed here to check"


@pytest.mark.parametrize("line", ["rich>=13", "rich", "rich==13.*", "rich==13; os_name == 'nt'",
                                  "rich==13\nrich==14 ; python_version < '3'"])
def test_a_pin_that_is_not_exact_is_refused(line: str, tmp_path: Path) -> None:
    pins = tmp_path / "pins.txt"
    pins.write_text(f"# python: 3.11\n{line}\n")
    with pytest.raises(ValueError, match="pinned with ==|marker"):
        read_pins(pins)


def test_pins_say_their_python(tmp_path: Path) -> None:
    pins = tmp_path / "pins.txt"
    pins.write_text("rich==13.0\n")
    with pytest.raises(ValueError, match="python"):
        read_pins(pins)
    pins.write_text("# python: 3.12\nRich==13.0\n")
    assert read_pins(pins) == ("3.12", {"rich": "13.0"})
