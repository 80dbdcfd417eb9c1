"""MkDocs' hooks (mkdocs.yml, `hooks:`): what the site makes of the repository at
each build, before MkDocs reads the pages.

- the pictures the project's own code draws (figures.py) into pages/figures/;
- every statement as a page (statements.py) into pages/problems/, and their
  section of the navigation, after the learners' pages;
- on the Chinese site, a note atop each page that has no Chinese yet and is shown
  in English (the i18n plugin's fallback), so that a reader knows it is not missing;
  and the headings' links titled in Chinese;
- a search index for each language (search.py): the Chinese pages search the
  Chinese pages, the English pages the English ones;
- no links in a page's head to its twins in other languages, from which Material's
  script would ask for a sitemap.xml beside each twin, where there is none.
- a 404.html for each language: the English one in the site's root, the Chinese one
  in zh/, each in its language (its heading too, which Material writes in English),
  its language menu leading to each home page.
- while the site has no `site_url`, MkDocs' own sitemap.xml, which names no page
  it has no address for, in place of the i18n plugin's, which wrote `None` for it.

Both folders are ignored by git. `python docs/site_gen` writes the same files
without MkDocs, and docs/zensical.yml: mkdocs.yml with that navigation, for
Zensical, which runs no hooks (docs/pages/contributors/site.md).
"""

from __future__ import annotations

import logging
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
for path in (HERE, HERE.parents[1]):  # these modules, and the repository's grader
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

import figures  # noqa: E402
import search  # noqa: E402
import statements  # noqa: E402

# The navigation's section of the statements, and the section it follows.
SECTION = "Problems"
AFTER = "Learners"


def generate(pages: Path) -> list:
    """Draw the pictures, write the statements; the statements' navigation."""
    pictures = figures.write(pages)
    entries = statements.write(pages, pictures, {"zh": figures.pictures_in("zh")})
    return statements.nav(entries)


def with_section(nav: list, section: list) -> list:
    """The site's navigation with the statements' section after the learners'."""
    nav = [item for item in nav if not (isinstance(item, dict) and SECTION in item)]
    at = next((i + 1 for i, item in enumerate(nav)
               if isinstance(item, dict) and AFTER in item), len(nav))
    return [*nav[:at], {SECTION: section}, *nav[at:]]


def on_config(config):
    # jieba, which Material's search cuts Chinese text with, says at debug level how it
    # loads its dictionary, on a handler of its own: a build prints nothing of it.
    logging.getLogger("jieba").setLevel(logging.WARNING)
    config["nav"] = with_section(config["nav"], generate(Path(config["docs_dir"])))
    translate_statements_nav(config)
    return config


def translate_statements_nav(config) -> None:
    """The Chinese site's names of the statements' tracks and pages, from the kata's
    catalogs, added to the i18n plugin's translations of the navigation."""
    plugin = config["plugins"].get("i18n") if hasattr(config["plugins"], "get") else None
    if plugin is None:
        return
    for language in plugin.config["languages"]:
        if language["locale"] == "zh":
            language["nav_translations"] = {**statements.nav_translations_zh(),
                                            **(language["nav_translations"] or {})}


# The note atop a page the Chinese site shows in English, under its title: every page
# of the site has its Chinese, so such a page is one added in English alone.
NOT_YET_ZH = ('!!! note "本页暂无中文版"\n'
              "    下面是英文原文：这一页的中文版还没有写好。\n")


def with_note(markdown: str, note: str) -> str:
    """`note` after the page's title (its first `# ` line), or atop a page with none."""
    title = re.match(r"# [^\n]*\n", markdown)
    at = title.end() if title else 0
    return f"{markdown[:at]}\n{note}\n{markdown[at:]}"


def on_page_markdown(markdown, page, config, files):
    # The i18n plugin marks each file of a language's build with the language it is
    # written in (locale) and the build's (locale_alternate_of).
    written_in = getattr(page.file, "locale", None)
    shown_in = getattr(page.file, "locale_alternate_of", None)
    if shown_in == "zh" and written_in != "zh":
        # Its English is found by the English site's search, not the Chinese one's
        # (Material's search plugin reads `search: exclude` from a page's meta).
        page.meta["search"] = {**(page.meta.get("search") or {}), "exclude": True}
        return with_note(markdown, NOT_YET_ZH)
    return markdown


# The title of a heading's link (the toc extension's permalink_title, which mkdocs.yml
# leaves at its English default), and its Chinese.
PERMALINK = 'title="Permanent link"'
PERMALINK_ZH = 'title="本节的永久链接"'


def on_page_content(html, page, config, files):
    if getattr(page.file, "locale_alternate_of", None) == "zh":
        return html.replace(PERMALINK, PERMALINK_ZH)
    return html


# The links in a page's head to its twin in each language, which Material writes from
# `extra.alternate` and the i18n plugin points at the page's twin.
ALTERNATE_LINK = re.compile(r'[ \t]*<link rel="alternate" href="[^"]*" hreflang="[^"]*">\n?')


def without_alternate_links(html: str) -> str:
    """The page without its head's links to its twin in each language.

    Material's script takes each such link for a language's root (as Material's own
    `extra.alternate` names one) and fetches the sitemap.xml beside it, to find the
    reader's page in that language: beside a page's twin (zh/sitemap.xml,
    learners/sitemap.xml, zh/learners/sitemap.xml) there is none, so every page asked
    the site for one or two files it does not have. The language menu's links, which
    the i18n plugin points at the same twins, take a reader there without it."""
    return ALTERNATE_LINK.sub("", html)


# The footer's credit, which Material's template writes in English whatever the
# page's language, and what it says in each other language.
MADE_WITH = re.compile(r"Made with(\s*<a [^>]*>\s*Material for MkDocs\s*</a>)")
MADE_WITH_IN = {"zh": r"本站由\1 构建"}


def footer_in(html: str, language: str) -> str:
    """The page with its footer's credit in `language`."""
    if language not in MADE_WITH_IN:
        return html
    return MADE_WITH.sub(MADE_WITH_IN[language], html)


def on_post_page(output, page, config):
    output = without_alternate_links(output)
    # A Chinese page searches the Chinese site's own index, under zh/.
    if getattr(page.file, "locale_alternate_of", None) == "zh":
        return search.with_base_in(footer_in(output, "zh"), "zh")
    return output


# The language menu's links, which on 404.html the i18n plugin leaves pointing at the
# twins of the last page it built before.
MENU_LINK = re.compile(r'(<a href=")[^"]*(" hreflang="([^"]+)" class="md-select__link">)')
# 404.html's links are absolute, from this root (`base` in its `__config` script).
BASE = re.compile(r'"base": "([^"]*)"')
# Each language's 404.html, by the language it is written in.
NOT_FOUND: dict[str, str] = {}
# The heading Material writes on 404.html, in English whatever the page's language,
# and what it says in each other language.
NOT_FOUND_HEADING = "<h1>404 - Not found</h1>"
NOT_FOUND_HEADINGS = {"zh": "<h1>404 - 页面不存在</h1>"}


def not_found_page(html: str, language: str, default: str) -> str:
    """404.html in `language`, its language menu leading to each language's home page,
    and, for a language other than the default, its heading in it and its search rooted
    at its folder."""
    base = BASE.search(html)
    root = base.group(1) if base else "/"
    html = MENU_LINK.sub(lambda m: m.group(1) + root
                         + ("" if m.group(3) == default else f"{m.group(3)}/") + "index.html"
                         + m.group(2), without_alternate_links(html))
    if language == default:
        return html
    html = html.replace(NOT_FOUND_HEADING, NOT_FOUND_HEADINGS.get(language, NOT_FOUND_HEADING))
    return search.with_base_in(footer_in(html, language), language)


def on_post_template(output_content, template_name, config):
    # Each language's build writes 404.html into the site's root, the last build's
    # over the first's: the root would be the Chinese one. The default language's is
    # kept there, and each other language's is written into its folder (zh/404.html),
    # which the i18n plugin does not do itself.
    if template_name != "404.html":
        return output_content
    plugin = config["plugins"].get("i18n") if hasattr(config["plugins"], "get") else None
    language = config["theme"]["language"]
    default = getattr(plugin, "default_language", None) or language
    NOT_FOUND[language] = not_found_page(output_content, language, default)
    if language != default:
        path = Path(config["site_dir"]) / language / "404.html"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(NOT_FOUND[language], encoding="utf-8")
    return NOT_FOUND.get(default, NOT_FOUND[language])


# The i18n plugin's sitemap.xml, which it puts first among the theme's templates at
# each language's build: without a `site_url` (the project has no published address
# yet) it writes `None` before every page's address. MkDocs' own leaves out a page
# that has no address, as MkDocs intends when a site has none.
I18N_SITEMAP = "custom_i18n_sitemap"


def on_pre_build(config):
    if not config.get("site_url"):
        config["theme"].dirs[:] = [folder for folder in config["theme"].dirs
                                   if Path(folder).name != I18N_SITEMAP]


def on_post_build(config):
    search.split(Path(config["site_dir"]), ["zh"])


# After the i18n plugin's (-100), which builds the Chinese site inside the English
# one's post_build and then writes one index of both: so this runs after the Chinese
# build's index is written, and again after the plugin's. (MkDocs' event_priority
# sets this attribute; set here, `python docs/site_gen` needs no MkDocs.)
on_post_build.mkdocs_priority = -200  # type: ignore[attr-defined]
