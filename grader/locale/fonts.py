"""The fonts a picture needs to draw the language in use: matplotlib's own, DejaVu
Sans, has no Chinese characters, and draws empty boxes for them."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from grader.locale import ENGLISH, language, speaking, tr

# Fonts with Chinese characters, tried in turn before matplotlib's own where the
# labels are not English. Debian's and Ubuntu's fonts-noto-cjk is one file of every
# region's faces, which matplotlib knows by its first, "Noto Sans CJK JP": each face
# holds every Chinese character, so it draws them where no Chinese font comes first.
CJK_FONTS = ("Noto Sans CJK SC", "Noto Sans SC", "Source Han Sans SC", "WenQuanYi Zen Hei",
             "WenQuanYi Micro Hei", "Microsoft YaHei", "SimHei", "PingFang SC",
             "Hiragino Sans GB", "Heiti SC", "Noto Sans CJK JP", "Arial Unicode MS")


def cjk_font() -> str | None:
    """The first font of CJK_FONTS that is installed, or None.

    matplotlib lists the system's fonts once, in a cache it keeps until it is
    upgraded: a font installed after that (a learner's answer to empty boxes) is not
    in its list. Where the list has none of CJK_FONTS, the system's font files are
    read again, and the first of them that is one is added to it."""
    from matplotlib import font_manager

    def known() -> str | None:
        installed = {font.name for font in font_manager.fontManager.ttflist}
        return next((name for name in CJK_FONTS if name in installed), None)

    if (found := known()) is not None:
        return found
    for path in font_manager.findSystemFonts():
        try:
            family = font_manager.get_font(path).family_name
        except (OSError, RuntimeError, ValueError):
            continue  # a file FreeType cannot read: matplotlib skips it too
        if family in CJK_FONTS:
            font_manager.fontManager.addfont(path)
            return known()
    return None


def use_cjk_fonts(plt: Any) -> None:
    """Draw with matplotlib's own sans-serif font first, then with the first installed
    font of CJK_FONTS for the characters the first lacks (matplotlib falls back from
    one family to the next, glyph by glyph): the Latin text, and "␣", which some CJK
    fonts draw as an empty box, look as they do in English."""
    chosen = cjk_font()
    if chosen:
        plt.rcParams["font.family"] = ["sans-serif", chosen]


@contextmanager
def picture_language(plt: Any) -> Iterator[bool]:
    """Draw a picture, inside the block, in the language in use where a font draws
    it, and in English where none is installed: English labels read better than
    empty boxes, and matplotlib warns once for every character it cannot draw. True
    for the block when the picture is in English for want of a font."""
    if language() == ENGLISH:
        yield False
    elif cjk_font():
        with plt.rc_context():  # the font for this picture only
            use_cjk_fonts(plt)
            yield False
    else:
        with speaking(ENGLISH):
            yield True


def in_english_note(picture: str) -> str:
    """What a command says, once, of a picture `picture_language` drew in English."""
    return tr("no font with Chinese characters is installed, so {picture} is labelled in "
              "English; install one, such as Noto Sans CJK SC (fonts-noto-cjk on Debian "
              "and Ubuntu), to see it in Chinese", picture=picture)
