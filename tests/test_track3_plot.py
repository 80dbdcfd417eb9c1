"""The loss curve of `train` and `train --yours`: a log loss axis and ln(vocab_size).

The first steps fall from about ln(vocab_size) and the last ones slowly: on a
linear axis those look flat; the dashed line says where a uniform guess is.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from grader.model.training import plot_losses

matplotlib = pytest.importorskip("matplotlib")


def drawn(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, vocab_size: int | None):
    """The figure plot_losses saves, kept for a look at its axes."""
    from matplotlib.figure import Figure

    saved = []
    original = Figure.savefig

    def keep(self, *args, **kwargs):
        saved.append(self)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", keep)
    log = [(step, 3.7 * math.exp(-step / 300) + 0.4, 3.7 * math.exp(-step / 300) + 0.45)
           for step in range(0, 3001, 100)]
    assert plot_losses(log, tmp_path / "loss_curve.png", vocab_size)
    assert (tmp_path / "loss_curve.png").read_bytes()[:4] == b"\x89PNG"
    [figure] = saved
    return figure.axes[0]


def test_the_loss_axis_is_logarithmic_with_a_line_at_ln_vocab(monkeypatch, tmp_path):
    axes = drawn(monkeypatch, tmp_path, 40)
    assert axes.get_yscale() == "log"
    flat = [line for line in axes.get_lines() if len(set(line.get_ydata())) == 1]
    assert [line.get_ydata()[0] for line in flat] == [pytest.approx(math.log(40))]
    assert "ln(40) = 3.69" in flat[0].get_label()
    labels = [text.get_text() for text in axes.get_legend().get_texts()]
    assert labels == ["train", "validation", flat[0].get_label()]


def test_without_a_vocabulary_size_there_is_no_line(monkeypatch, tmp_path):
    axes = drawn(monkeypatch, tmp_path, None)
    assert len(axes.get_lines()) == 2


# The font named below need not be installed here: matplotlib, not finding it, warns
# of the Chinese characters it then cannot draw.
@pytest.mark.filterwarnings("ignore:Glyph .* missing from font")
def test_in_chinese_the_curve_is_labelled_in_chinese(monkeypatch, tmp_path, capsys):
    """`gpt-kata --lang zh train` draws its curve in Chinese, as it prints, where a font
    with Chinese characters is installed, and draws it in that font, for this picture
    only; it says nothing of fonts."""
    import re

    from grader.locale import fonts

    monkeypatch.setenv("GPT_KATA_LANG", "zh")
    monkeypatch.setattr(fonts, "cjk_font", lambda: "WenQuanYi Micro Hei")
    axes = drawn(monkeypatch, tmp_path, 40)
    shown = [axes.get_title(), axes.get_xlabel(), axes.get_ylabel(),
             *(text.get_text() for text in axes.get_legend().get_texts())]
    assert all(re.search(r"[\u4e00-\u9fff]", text) for text in shown), shown
    assert "ln(40) = 3.69" in shown[-1]
    assert "WenQuanYi Micro Hei" in axes.title.get_fontfamily()
    assert "WenQuanYi Micro Hei" not in matplotlib.rcParams["font.family"]
    assert capsys.readouterr().err == ""


def test_a_chinese_plot_draws_latin_in_matplotlibs_font_and_chinese_in_a_cjk_one(monkeypatch):
    """Latin text and "␣" keep matplotlib's own font, which has them (a CJK font first
    would draw "␣" as an empty box); Chinese falls back to the installed CJK font."""
    from types import SimpleNamespace

    from grader.locale import fonts

    monkeypatch.setattr(fonts, "cjk_font", lambda: "WenQuanYi Micro Hei")
    plt = SimpleNamespace(rcParams={"font.family": ["sans-serif"],
                                    "font.sans-serif": ["DejaVu Sans"]})
    fonts.use_cjk_fonts(plt)
    assert plt.rcParams["font.family"] == ["sans-serif", "WenQuanYi Micro Hei"]
    assert plt.rcParams["font.sans-serif"][0] == "DejaVu Sans"


def test_a_cjk_font_installed_after_matplotlibs_cache_is_found(monkeypatch):
    """matplotlib's cached font list predates a font a learner installs to end the
    empty boxes: the system's font files are read again, and the font is used."""
    from types import SimpleNamespace

    from matplotlib import font_manager

    from grader.locale import fonts

    listed = [SimpleNamespace(name="DejaVu Sans")]
    added = []

    def addfont(path: str) -> None:
        added.append(path)
        listed.append(SimpleNamespace(name="Noto Sans CJK JP"))

    monkeypatch.setattr(font_manager, "fontManager",
                        SimpleNamespace(ttflist=listed, addfont=addfont))
    monkeypatch.setattr(font_manager, "findSystemFonts",
                        lambda: ["/fonts/DejaVuSans.ttf", "/fonts/NotoSansCJK-Regular.ttc"])
    # As matplotlib reads Debian's and Ubuntu's fonts-noto-cjk: by its first face.
    names = {"/fonts/DejaVuSans.ttf": "DejaVu Sans",
             "/fonts/NotoSansCJK-Regular.ttc": "Noto Sans CJK JP"}
    monkeypatch.setattr(font_manager, "get_font",
                        lambda path: SimpleNamespace(family_name=names[path]))
    assert fonts.cjk_font() == "Noto Sans CJK JP"
    assert added == ["/fonts/NotoSansCJK-Regular.ttc"]


NOTO_CJK = Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc")


@pytest.mark.skipif(not NOTO_CJK.is_file(), reason="fonts-noto-cjk is not installed here")
def test_the_font_the_messages_name_draws_chinese_once_installed():
    """The note of a picture drawn in English names fonts-noto-cjk; installed, it was
    not found, since matplotlib names the file by its Japanese face."""
    from matplotlib import font_manager

    from grader.locale import fonts

    assert fonts.cjk_font() is not None
    font = font_manager.get_font(str(NOTO_CJK))
    assert all(font.get_char_index(ord(c)) for c in "损失曲线第一层头")


def test_without_a_cjk_font_a_chinese_curve_is_labelled_in_english_and_says_so(
        monkeypatch, tmp_path, capsys):
    """Where no font has Chinese characters, `gpt-kata --lang zh train` labels its curve
    in English, not in empty boxes with a warning for each character matplotlib cannot
    draw, and says once, in Chinese, why."""
    import logging
    import warnings

    from grader.locale import fonts

    monkeypatch.setenv("GPT_KATA_LANG", "zh")
    monkeypatch.setattr(fonts, "cjk_font", lambda: None)
    logged: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: logged.append(record.getMessage())  # type: ignore[method-assign]
    logging.getLogger("matplotlib").addHandler(handler)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            axes = drawn(monkeypatch, tmp_path, 40)
    finally:
        logging.getLogger("matplotlib").removeHandler(handler)
    said = [str(w.message) for w in caught] + logged
    assert not [text for text in said if "missing from font" in text], said
    assert axes.get_title() == "gpt-kata training loss"
    assert axes.get_xlabel() == "step"
    assert [text.get_text() for text in axes.get_legend().get_texts()][:2] == [
        "train", "validation"]
    err = capsys.readouterr().err
    assert err.count("loss_curve.png") == 1
    assert "没有安装含中文字符的字体" in err and "Noto Sans CJK SC" in err, err

