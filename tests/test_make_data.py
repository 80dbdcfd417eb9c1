"""The maintainer's data steps keep the goldens where they were made: on another
platform, the steps that would record this one refuse unless forced."""

from __future__ import annotations

import pytest

from grader.maintainer import make_data


@pytest.mark.parametrize("steps", [["goldens"], ["starters", "manifest"]])
def test_goldens_are_not_moved_to_another_platform_unasked(steps, monkeypatch, capsys) -> None:
    ran: list[str] = []
    monkeypatch.setattr(make_data, "STEPS", {name: (lambda n=name: ran.append(n))
                                             for name in make_data.STEPS})
    monkeypatch.setattr(make_data.artifacts, "goldens_platform_matches", lambda: False)
    assert make_data.main(steps) == 2
    assert ran == []
    said = capsys.readouterr().err
    assert "rewrite every problem's goldens" in said and "new-goldens" in said
    assert make_data.main([*steps, "--force"]) == 0
    assert ran == steps
    ran.clear()
    assert make_data.main(["starters", "new-goldens"]) == 0  # the new problem's only


def test_new_goldens_records_a_new_case_and_keeps_every_other(monkeypatch, tmp_path) -> None:
    """A fixed case added to a problem that has goldens gets its golden; every recorded
    one is kept as it is, even where this machine would record other last bits."""
    import json
    import shutil

    goldens, manifest = tmp_path / "goldens.json", tmp_path / "manifest.json"
    shutil.copy(make_data.artifacts.GOLDENS, goldens)
    shutil.copy(make_data.artifacts.MANIFEST, manifest)
    recorded = json.loads(goldens.read_text("utf-8"))
    added = recorded["decode"].pop("one-id-flat")
    recorded["softmax"] = {case: "as recorded elsewhere" for case in recorded["softmax"]}
    goldens.write_text(json.dumps(recorded, indent=1) + "\n", encoding="utf-8")
    monkeypatch.setattr(make_data.artifacts, "GOLDENS", goldens)
    monkeypatch.setattr(make_data.artifacts, "MANIFEST", manifest)
    make_data.make_new_goldens()
    made = json.loads(goldens.read_text("utf-8"))
    assert made["decode"]["one-id-flat"] == added
    assert made["softmax"] == recorded["softmax"]
    assert {k: v for k, v in made.items() if k != "decode"} == {
        k: v for k, v in recorded.items() if k != "decode"}
    assert json.loads(manifest.read_text("utf-8"))["files"]["goldens.json"] == (
        make_data.artifacts.sha256(goldens))
