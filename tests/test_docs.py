"""The README and the documentation site in docs/ say what the project does.

The README stays short and holds the commands CI runs; the problem tables follow
problems/registry.toml; "Adding a problem" names every place a problem lives, and
every problem of the registry is found in each; the paths, links and options the
pages name exist. Everything here reads text and the CLI's parser (no torch, no
MkDocs), so it runs with the quick check: `python tests/test_consistency.py
tests/test_docs.py`. The strict MkDocs build itself is CI's (.ci/run), as it
checks every link and anchor.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path

import pytest
import yaml
from conftest import examples
from site_config import mkdocs_config

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = DOCS / "pages"
PROBLEMS_PAGE = PAGES / "learners" / "problems.md"
PROBLEMS_PAGE_ZH = PAGES / "learners" / "problems.zh.md"
ADDING_PAGE = PAGES / "contributors" / "adding-a-problem.md"
REGISTRY = ROOT / "problems" / "registry.toml"
CI_RUN = ROOT / ".ci" / "run"
CI_WORKFLOW = ROOT / ".github" / "workflows" / "ci.yml"

# The bound: a newcomer reads the README in minutes; the rest is in docs/.
README_MAX_LINES = 150
DOCS_BUILD = "mkdocs build --strict -f docs/mkdocs.yml"
CPU_INDEX = "--extra-index-url https://download.pytorch.org/whl/cpu"
# The README's pip installs: the project's own development, and the learner's.
DEV_INSTALL = f'pip install -e ".[dev]" {CPU_INDEX}'
LEARNER_INSTALL = f"pip install -e . {CPU_INDEX} && gpt-kata grade"


def text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


@cache
def registry() -> list[dict]:
    """The registry's entries, each with its number: read here, not through
    grader.registry, so that problems being added are seen as they are written."""
    entries = tomllib.loads(text(REGISTRY))["problem"]
    return [{**entry, "number": i} for i, entry in enumerate(entries, start=1)]


def folder(entry: dict) -> str:
    return f"{entry['number']:02d}-{entry['slug']}"


def bash_blocks(markdown: str) -> list[list[str]]:
    """The command lines of each ```bash block."""
    return [[line for line in block.splitlines() if line.strip()]
            for block in re.findall(r"^```bash\n(.*?)^```", markdown, re.M | re.S)]


# -- the README -----------------------------------------------------------------------


def test_the_readme_is_short() -> None:
    lines = text(README).splitlines()
    assert len(lines) <= README_MAX_LINES, (
        f"README.md has {len(lines)} lines; at most {README_MAX_LINES}: move the detail to "
        "a page in docs/pages/")


def ci_commands() -> list[str]:
    """What .ci/run runs for the project's own development: every command from the
    dev install on (before it: the virtual environment and CI's torch pin)."""
    commands = [line.strip() for line in text(CI_RUN).splitlines()
                if line.strip() and not line.lstrip().startswith("#")]
    start = commands.index(DEV_INSTALL)
    return commands[start:]


def test_the_readme_quickstart_holds_the_commands_ci_runs() -> None:
    quickstart = text(README).split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    blocks = bash_blocks(quickstart)
    assert ci_commands() in blocks, (
        f"README.md's Quickstart has no block of exactly .ci/run's commands {ci_commands()}; "
        f"its blocks: {blocks}")
    assert any(LEARNER_INSTALL in line for b in blocks for line in b), (
        "README.md's Quickstart no longer shows the learner's pip install and first grade")
    # With uv: one command installs and grades, one runs the tests.
    assert ["uv run gpt-kata grade"] in blocks and ["uv run pytest"] in blocks, blocks


def test_ci_builds_the_docs_strictly() -> None:
    # The site tier builds it (tests/test_lint_and_site.py), which .ci/run runs.
    site_test = text(ROOT / "tests" / "test_lint_and_site.py")
    assert all(word in site_test for word in ("mkdocs", "--strict")), (
        "tests/test_lint_and_site.py no longer builds the site strictly")
    assert "python -m pytest" in ci_commands()
    runs = [step.get("run", "") for job in yaml.safe_load(text(CI_WORKFLOW))["jobs"].values()
            for step in job["steps"]]
    assert any(DOCS_BUILD in run for run in runs), f"{CI_WORKFLOW.name}: no step runs {DOCS_BUILD}"


def test_the_docs_job_installs_the_dev_extras_mkdocs() -> None:
    job = yaml.safe_load(text(CI_WORKFLOW))["jobs"]["docs"]
    installs = " ".join(step.get("run", "") for step in job["steps"] if "pip install" in
                        step.get("run", ""))
    if re.search(r'-e "?\.\[dev\]"?', installs):
        return  # the dev extra itself: the site's build also runs the project's code
    wanted = re.findall(r'"(mkdocs[^"]*)"', installs)
    dev = tomllib.loads(text(ROOT / "pyproject.toml"))["project"]["optional-dependencies"]["dev"]
    assert wanted and sorted(wanted) == sorted(r for r in dev if r.startswith("mkdocs")), (
        f"the docs job installs {wanted}; the dev extra has "
        f"{[r for r in dev if r.startswith('mkdocs')]}")


def relative_links(markdown: str) -> list[str]:
    links = re.findall(r"\]\(([^)\s]+)\)", markdown)
    return [link for link in links if not re.match(r"[a-z]+:", link)]


def test_the_readmes_links_lead_to_files() -> None:
    links = relative_links(text(README))
    assert links, "README.md links to no page of the documentation"
    missing = [link for link in links if not (ROOT / link.split("#")[0]).is_file()]
    assert not missing, f"README.md links to files that do not exist: {missing}"


# -- the problem tables ---------------------------------------------------------------


def documented_tracks(page: Path = PROBLEMS_PAGE) -> list[tuple[str, list[tuple[int, str]]]]:
    """Each `## track` of the problems page with its table's (number, slug) rows."""
    tracks: list[tuple[str, list[tuple[int, str]]]] = []
    for line in text(page).splitlines():
        if line.startswith("## "):
            tracks.append((line[3:].strip(), []))
        elif match := re.match(r"\|\s*(\d+)\s*\|\s*\[?`([^`]+)`", line):
            assert tracks, f"{page.name}: a row before any track heading: {line}"
            tracks[-1][1].append((int(match.group(1)), match.group(2)))
    return [(track, rows) for track, rows in tracks if rows]


def test_the_problem_tables_follow_the_registry() -> None:
    expected: list[tuple[str, list[tuple[int, str]]]] = []
    for entry in registry():
        if not expected or expected[-1][0] != entry["track"]:
            expected.append((entry["track"], []))
        expected[-1][1].append((entry["number"], entry["slug"]))
    documented = documented_tracks()
    rows = {row for _, track in documented for row in track}
    wanted = {row for _, track in expected for row in track}
    assert documented == expected, (
        f"{PROBLEMS_PAGE.relative_to(ROOT)} does not list the registry's problems, track by "
        f"track, in its order: rows missing {sorted(wanted - rows)}, rows of no problem "
        f"{sorted(rows - wanted)}")


def test_each_problem_of_the_tables_leads_to_its_statement() -> None:
    # The statement pages are made from problems/*/README.md at each build
    # (docs/site_gen/statements.py), one folder per problem under pages/problems/.
    rows = re.findall(r"^\|\s*(\d+)\s*\|(.*?)\|", text(PROBLEMS_PAGE), re.M)
    unlinked = []
    for number, cell in rows:
        entry = registry()[int(number) - 1]
        wanted = f"[`{entry['slug']}`](../problems/{folder(entry)}/index.md)"
        if cell.strip() != wanted:
            unlinked.append(f"{number}: {cell.strip()} (wanted {wanted})")
    assert not unlinked, f"{PROBLEMS_PAGE.name}: names that do not lead to their statement: " \
                         f"{unlinked}"


# -- every place a problem lives --------------------------------------------------------


def has_file(template: str) -> Callable[[dict], str | None]:
    def check(entry: dict) -> str | None:
        path = ROOT / template.format(folder=folder(entry), slug=entry["slug"],
                                      module=entry["slug"].replace("-", "_"))
        return None if path.is_file() else f"no {path.relative_to(ROOT)}"
    return check


def has_its_mistakes(entry: dict) -> str | None:
    # A check module that reads its known mistakes from data must have the file; the
    # few whose tables are still built in Python (train-step's, say) have none.
    module = entry["slug"].replace("-", "_")
    check = (ROOT / f"grader/checks/{module}/check_{module}.py").read_text(encoding="utf-8")
    if "mistakes_of(" not in check:
        return None
    path = ROOT / f"grader/checks/{module}/mistakes.toml"
    return None if path.is_file() else f"no {path.relative_to(ROOT)}"


def registered(entry: dict) -> str | None:
    return None if entry.get("hints") and entry.get("methods") else "no hints or methods"


def statement_runs_its_examples(entry: dict) -> str | None:
    statement = ROOT / "problems" / folder(entry) / "README.md"
    if not statement.is_file():
        return f"no {statement.relative_to(ROOT)}"
    setup = f'examples("{entry["slug"]}")'
    return None if setup in text(statement) else f"its statement does not call {setup}"


def has_submissions(entry: dict) -> str | None:
    folder = examples(entry["slug"])
    found = (folder / "expected.toml").is_file()
    return None if found else f"no {(folder / 'expected.toml').relative_to(ROOT)}"


@cache
def golden_problems() -> frozenset[str]:
    return frozenset(json.loads(text(ROOT / "data" / "goldens.json")))


def has_goldens(entry: dict) -> str | None:
    module = entry["slug"].replace("-", "_")
    checks = ROOT / "grader" / "checks" / module / f"check_{module}.py"
    live_only = checks.is_file() and "goldens=False" in text(checks)
    if live_only or entry["slug"] in golden_problems():
        return None
    return "no goldens in data/goldens.json (make_data new-goldens)"


def has_a_row_in(page: Path) -> Callable[[dict], str | None]:
    def check(entry: dict) -> str | None:
        rows = {row for _, rows in documented_tracks(page) for row in rows}
        return None if (entry["number"], entry["slug"]) in rows else f"no row in {page.name}"
    return check


# Each place "Adding a problem" names, as the page writes it, and how to see that a
# problem is there.
PLACES: dict[str, Callable[[dict], str | None]] = {
    "problems/registry.toml": registered,
    "problems/NN-slug/README.md": statement_runs_its_examples,
    "problems/NN-slug/README.zh.md": has_file("problems/{folder}/README.zh.md"),
    "problems/NN-slug/solution.py": has_file("problems/{folder}/solution.py"),
    "solutions/NN-slug/solution.py": has_file("solutions/{folder}/solution.py"),
    "grader/checks/<slug>/check_<slug>.py": has_file("grader/checks/{module}/check_{module}.py"),
    "grader/checks/<slug>/mistakes.toml": has_its_mistakes,
    "grader/play.py": statement_runs_its_examples,
    "grader/checks/<slug>/examples/expected.toml": has_submissions,
    "data/starters/NN-slug/solution.py": has_file("data/starters/{folder}/solution.py"),
    "data/goldens.json": has_goldens,
    "docs/pages/learners/problems.md": has_a_row_in(PROBLEMS_PAGE),
    "docs/pages/learners/problems.zh.md": has_a_row_in(PROBLEMS_PAGE_ZH),
}


def place_names(markdown: str) -> set[str]:
    """The paths in code spans of the page's numbered steps."""
    steps = re.findall(r"^\d+\. (.*?)(?=^\d+\. |^\S|\Z)", markdown, re.M | re.S)
    spans = {span for step in steps for span in re.findall(r"`([^`\s]+)`", step)}
    return {span for span in spans if re.fullmatch(r"[\w.<>-]+(/[\w.<>-]+)+\.\w+", span)}


def test_adding_a_problem_names_every_place_the_test_checks() -> None:
    unnamed = sorted(set(PLACES) - place_names(text(ADDING_PAGE)))
    assert not unnamed, f"{ADDING_PAGE.name} does not name {unnamed}"


def test_every_place_adding_a_problem_names_is_checked() -> None:
    # A templated path (a problem's own file) must be one of PLACES; the others are
    # examples and tools the steps point to, and must exist.
    named = place_names(text(ADDING_PAGE))
    unchecked = sorted(n for n in named if ("NN-slug" in n or "<slug>" in n) and n not in PLACES)
    assert not unchecked, f"{ADDING_PAGE.name} names places tests/test_docs.py does not check: " \
                          f"{unchecked}"


@pytest.mark.parametrize("place", list(PLACES))
def test_every_problem_is_in_every_place(place: str) -> None:
    missing = {folder(entry): why for entry in registry() if (why := PLACES[place](entry))}
    assert not missing, f"{place}: " + "; ".join(f"{k}: {v}" for k, v in missing.items())


# -- what the pages name ----------------------------------------------------------------

# Paths the pages name that are not in this repository: the learners' copy's own
# files, the installed wheel's copy of the references, the Gradescope bundle's and a
# gradebook's outputs, the workflow Classroom50 writes into a learner's repository, and
# the site `mkdocs build` writes (ignored by git, so absent from a fresh checkout).
ELSEWHERE = re.compile(
    r"(gpt_kata_practice|grader/_kata|grades/|wheels/|shard-|workflows/autograde\.yaml"
    r"|^docs/site(/|$))")
ROOTS = ("grader/", "tests/", "data/", "benchmarks/", ".github/", ".ci/", "solutions/",
         "problems/", "docs/")


def named_paths(markdown: str) -> set[str]:
    spans = set(re.findall(r"`([^`\s]+)`", markdown)) | set(
        re.findall(r"^\s*([\w.]+/[\w./-]*)", "\n".join(re.findall(
            r"^```text\n(.*?)^```", markdown, re.M | re.S)), re.M))
    return {s.rstrip("/") for s in spans if s.startswith(ROOTS) and not ELSEWHERE.search(s)
            and not re.search(r"NN|<|\*|\{|\.\.\.", s)}


# What the site's build writes into pages/ (docs/site_gen/, ignored by git): the
# statements as pages and the pictures. Not sources of the site, so not read here.
GENERATED = (PAGES / "problems", PAGES / "figures")


def pages() -> list[Path]:
    return sorted(p for p in PAGES.rglob("*.md")
                  if not any(p.is_relative_to(folder) for folder in GENERATED))


@pytest.mark.parametrize("page", [README, *pages()], ids=lambda p: str(p.relative_to(ROOT)))
def test_the_paths_a_page_names_exist(page: Path) -> None:
    missing = sorted(p for p in named_paths(text(page)) if not (ROOT / p).exists())
    assert not missing, f"{page.relative_to(ROOT)} names paths that do not exist: {missing}"


# Options the pages name that belong to other tools than gpt-kata.
OTHER_TOOLS = {
    "git": {"--always", "--bare", "--dirty", "--filter", "--tags"},
    "pip": {"--extra-index-url", "--index-url", "--no-deps", "--only-binary"},
    "setpriv": {"--ruid"},
    "gh teacher": {"--runtime"},
    "mkdocs": {"--strict"},
    "the benchmarks": {"--only", "--runs"},
    "tests/grade_batch.py": {"--serve"},
}


def gpt_kata_options() -> set[str]:
    """Every long option of every gpt-kata command (building the parser imports no torch)."""
    import argparse

    from grader.cli.main import build_parser

    found: set[str] = set()
    parsers = [build_parser()]
    while parsers:
        for action in parsers.pop()._actions:
            found |= {o for o in action.option_strings if o.startswith("--")}
            if isinstance(action, argparse._SubParsersAction):
                parsers.extend(action.choices.values())
    return found


def test_every_option_the_pages_name_is_an_option() -> None:
    # --help is the reference for options; the pages may name one only if it exists.
    known = gpt_kata_options() | set().union(*OTHER_TOOLS.values())
    unknown = {}
    for page in [README, *pages()]:
        named = set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]+", text(page)))
        if named - known:
            unknown[str(page.relative_to(ROOT))] = sorted(named - known)
    assert not unknown, f"options that no gpt-kata command has: {unknown}"


def nav_pages(nav: list) -> set[str]:
    found: set[str] = set()
    for item in nav:
        for value in item.values() if isinstance(item, dict) else [item]:
            found |= nav_pages(value) if isinstance(value, list) else {value}
    return found


def test_every_page_is_in_the_navigation() -> None:
    config = mkdocs_config()
    assert (DOCS / config["docs_dir"]).resolve() == PAGES
    # A page's Chinese (NAME.zh.md) is the i18n plugin's, listed under its English.
    on_disk = {str(p.relative_to(PAGES)).replace("\\", "/") for p in pages()
               if not p.name.endswith(".zh.md")}
    listed = nav_pages(config["nav"])
    assert listed == on_disk, (f"pages not in mkdocs.yml's nav: {sorted(on_disk - listed)}; "
                               f"in the nav but not on disk: {sorted(listed - on_disk)}")


def site_html(markdown_text: str) -> str:
    """A page as the site's Markdown renders it: Python-Markdown with mkdocs.yml's
    extensions (the snippets' aside: the site test builds those)."""
    markdown = pytest.importorskip("markdown", reason="Markdown is not installed (the dev "
                                   "extra's mkdocs has it)")
    config = mkdocs_config()["markdown_extensions"]
    named = [next(iter(e)) if isinstance(e, dict) else e for e in config]
    settings = {next(iter(e)): e[next(iter(e))] for e in config if isinstance(e, dict)}
    used = [name for name in named if name != "pymdownx.snippets"]
    return markdown.markdown(markdown_text, extensions=used,
                             extension_configs={k: v for k, v in settings.items() if k in used})


def outside_fences(markdown_text: str) -> tuple[list[str], int]:
    """The lines outside fenced code blocks, and how many fenced blocks there are."""
    lines, fences, fenced = [], 0, False
    for line in markdown_text.splitlines():
        if re.match(r"\s*(```|~~~)", line):
            fences += not fenced
            fenced = not fenced
        elif not fenced:
            lines.append(line)
    return lines, fences


def nested_items(html: str) -> int:
    """How many list items of `html` stand inside another list item."""
    depth = found = 0
    for closing in re.findall(r"<(/?)li[ >]", html):
        if closing:
            depth -= 1
        else:
            found += depth > 0
            depth += 1
    return found


STATEMENTS = sorted((ROOT / "problems").glob("[0-9][0-9]-*/README*.md"))


@pytest.mark.parametrize("page", [README, *pages(), *STATEMENTS],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_a_page_shows_every_list_item_and_no_stray_code(page: Path) -> None:
    """Python-Markdown ends a list at a paragraph indented less than four spaces, and
    takes an item written right under a paragraph as more of it: "Adding a problem"
    showed five of its nine steps, and the known mistakes' part of step 4 as code."""
    lines, fences = outside_fences(text(page))
    items = [re.match(r"( *)(\d+\.|[-*+]) ", line) for line in lines]
    html = site_html(text(page))
    shown = len(re.findall(r"<li[ >]", html))
    assert shown >= sum(map(bool, items)), (
        f"{page.relative_to(ROOT)}: {sum(map(bool, items))} list items written, {shown} "
        "shown: indent an item's later paragraphs by four spaces, and leave a blank line "
        "before an item that follows one")
    nested = sum(bool(item and item.group(1)) for item in items)
    assert nested_items(html) >= nested, (
        f"{page.relative_to(ROOT)}: {nested} items written inside another, "
        f"{nested_items(html)} shown so: indent a list within an item by four spaces")
    assert html.count("<pre") == fences, (
        f"{page.relative_to(ROOT)}: {html.count('<pre')} code blocks shown, {fences} "
        "written: text indented four spaces outside a list item shows as code")


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q", "-n", "0", "-p", "no:torchtyping",
                          "-p", "no:hypothesispytest", *sys.argv[1:]]))
