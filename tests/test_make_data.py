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
