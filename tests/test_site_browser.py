"""The documentation site in a real browser: headless Chromium, as the
distribution packages it (`apt-get install chromium chromium-driver` on Debian
and Ubuntu), driven by Selenium through the system's chromedriver, so that
nothing is downloaded.

The site is built as CI builds it (`mkdocs build --strict -f docs/mkdocs.yml`,
into a folder of the test's own) and served from a local HTTP server, since the
search runs in a web worker that a page opened from disk may not start. A reader
opens the home page, follows the links to a problem's statement, sees its
pictures, follows a link to another problem, and finds a third by searching.

Skipped, with the reason, only when no Chromium is installed.
"""

from __future__ import annotations

import functools
import http.server
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BROWSERS = ("chromium", "chromium-browser", "google-chrome")
DRIVERS = ("chromedriver",)
# The distribution puts the driver here on Debian, not always on PATH; GitHub's
# Ubuntu runners name theirs in CHROMEWEBDRIVER.
DRIVER_PLACES = ("/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver",
                 os.path.join(os.environ.get("CHROMEWEBDRIVER", "/nonexistent"), "chromedriver"))
WAIT = 30  # seconds for a page or the search index to load on a busy machine


def found(names: tuple[str, ...], places: tuple[str, ...] = ()) -> str | None:
    for name in names:
        if path := shutil.which(name):
            return path
    return next((p for p in places if os.access(p, os.X_OK)), None)


BROWSER = found(BROWSERS)
DRIVER = found(DRIVERS, DRIVER_PLACES)

pytestmark = pytest.mark.skipif(
    BROWSER is None or DRIVER is None,
    reason="no Chromium with its chromedriver is installed (Debian and Ubuntu: "
           "apt-get install chromium chromium-driver); CI installs them",
)


class Quiet(http.server.SimpleHTTPRequestHandler):
    # Each served site's addresses that a page asked for and the site does not have,
    # by the site's address.
    missing: dict[str, list[str]] = {}

    def log_message(self, *args: object) -> None:
        pass

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        if code == http.HTTPStatus.NOT_FOUND:
            site = f"http://{self.server.server_address[0]}:{self.server.server_address[1]}/"
            self.missing.setdefault(site, []).append(self.path)


# How each generator builds the site into a folder, as CI builds it: MkDocs with
# Material, and Zensical, its successor, which runs no hooks, so the pages and
# docs/zensical.yml are written first (docs/pages/contributors/site.md).
BUILDS = {
    "mkdocs": [[sys.executable, "-m", "mkdocs", "build", "--strict", "-f", "docs/mkdocs.yml",
                "--site-dir", "{out}"]],
    "zensical": [[sys.executable, "docs/site_gen"],
                 [sys.executable, "-m", "zensical", "build", "--strict", "-f",
                  "docs/zensical.yml"]],
}


@pytest.fixture(scope="module", params=list(BUILDS))
def site(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
         ) -> Iterator[str]:
    """The site, built strictly, served on a free port of this machine: its address."""
    if request.param == "zensical" and importlib.util.find_spec("zensical") is None:
        pytest.skip("Zensical is not installed: the site is built by MkDocs")
    folder = tmp_path_factory.mktemp("site")
    for command in BUILDS[request.param]:
        done = subprocess.run(
            [part.replace("{out}", str(folder)) for part in command], cwd=ROOT,
            capture_output=True, text=True, timeout=600,
            env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
        assert done.returncode == 0, f"the site does not build:\n{done.stdout}{done.stderr}"
    if request.param == "zensical":  # it takes no --site-dir: its site is docs/site
        shutil.copytree(ROOT / "docs" / "site", folder, dirs_exist_ok=True)
    handler = functools.partial(Quiet, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def browser() -> Iterator:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = BROWSER
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu",
                     "--disable-dev-shm-usage", "--window-size=1280,1000"):
        options.add_argument(argument)
    # The driver is named, so Selenium Manager looks for none and downloads nothing.
    driver = webdriver.Chrome(options=options, service=Service(executable_path=DRIVER))
    driver.set_page_load_timeout(WAIT)
    try:
        yield driver
    finally:
        driver.quit()


def wait(driver, condition, what: str):
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.support.ui import WebDriverWait

    try:
        return WebDriverWait(driver, WAIT).until(condition)
    except TimeoutException:
        pytest.fail(f"{what}, after {WAIT} s, on {driver.current_url}")


def follow(driver, text: str) -> None:
    """Click the link of the page's text whose words are `text`."""
    from selenium.webdriver.common.by import By

    links = [a for a in driver.find_elements(By.CSS_SELECTOR, "article a")
             if a.text.strip() == text and a.is_displayed()]
    assert links, f"no link {text!r} on {driver.current_url}"
    links[0].click()


def heading(driver) -> str:
    from selenium.webdriver.common.by import By

    return wait(driver, lambda d: d.find_element(By.CSS_SELECTOR, "article h1"),
                "the page has no heading").text.replace("¶", "").strip()


def pictures(driver) -> dict[str, int]:
    """Every picture of the page's text, once all have loaded: its width as drawn
    (0 for one that did not load)."""
    wait(driver, lambda d: d.execute_script(
        "return [...document.querySelectorAll('article img')].every(i => i.complete)"),
        "the pictures are still loading")
    return driver.execute_script(
        "return Object.fromEntries([...document.querySelectorAll('article img')]"
        ".map(i => [i.getAttribute('src'), i.naturalWidth]))")


def test_a_reader_follows_a_problem_from_the_home_page_and_sees_its_pictures(
        site: str, browser) -> None:
    browser.get(site)
    assert heading(browser) == "gpt-kata"
    follow(browser, "the problems")
    assert heading(browser) == "The problems"
    follow(browser, "kv-cache")
    assert browser.current_url.endswith("problems/15-kv-cache/index.html")
    assert heading(browser) == "15 · The KV cache"
    drawn = pictures(browser)
    assert any(src.endswith("kv-cache.svg") for src in drawn), f"no KV cache picture: {drawn}"
    assert all(drawn.values()), f"pictures that did not load: {drawn}"

    # The statement's "problem 06" leads to its page, with the pictures the build drew.
    follow(browser, "problem 06")
    assert heading(browser) == "06 · The generation loop"
    drawn = pictures(browser)
    assert any(src.endswith("trace-crop-first.png") for src in drawn), \
        f"no trace picture: {drawn}"
    assert all(drawn.values()), f"pictures that did not load: {drawn}"


def test_the_steps_of_a_list_within_a_list_keep_their_numbers(site: str, browser) -> None:
    """Problem 21's forward is five numbered steps within a list, and its statement
    speaks of "step 3": the theme lettered them a to e."""
    browser.get(site + "problems/21-multi-head-attention/index.html")
    assert heading(browser).startswith("21 · ")
    styles = browser.execute_script(
        "return [...document.querySelectorAll('article ol')].filter(o => o.closest('li'))"
        ".map(o => getComputedStyle(o).listStyleType)")
    assert styles and set(styles) == {"decimal"}, styles


def test_the_pictures_page_shows_every_picture_and_the_trace_report(site: str, browser) -> None:
    from selenium.webdriver.common.by import By

    browser.get(site + "learners/pictures.html")
    drawn = pictures(browser)
    assert len(drawn) == 7 and all(drawn.values()), f"pictures: {drawn}"
    code = " ".join(block.text for block in browser.find_elements(By.CSS_SELECTOR, "pre"))
    assert "is the first that differs" in code, "the trace's report is not on the page"


# Every element of the page that matches a CSS selector, in shadow roots too
# (Zensical's search draws itself in one; Material's does not).
DEEP = """
const all = (selector, root) => {
    const found = [...root.querySelectorAll(selector)];
    for (const e of root.querySelectorAll('*')) {
        if (e.shadowRoot) found.push(...all(selector, e.shadowRoot));
    }
    return found;
};
"""
SEARCH_BOX = DEEP + """return all('input[aria-label="Search"], input.md-search__input', document)
    .find(e => e.offsetParent !== null || e.getClientRects().length > 0) || null;"""
SEARCH_OPENER = DEEP + """return all('.md-search__button, label[for="__search"]', document)
    .find(e => e.getClientRects().length > 0) || null;"""
RESULTS = DEEP + """return all('.md-search-result a, [role="listbox"] a', document)"""


def search_for(browser, words: str, target: str) -> list[str]:
    """Type `words` in the page's search box until a result leads to `target` (a
    page's address): every result's address then."""
    # The header's search box; where it is hidden (a narrow window, or Zensical's
    # dialog), its button opens it first.
    box = browser.execute_script(SEARCH_BOX)
    if box is None:
        opener = browser.execute_script(SEARCH_OPENER)
        assert opener is not None, "no search box and no button that opens one"
        opener.click()
        box = wait(browser, lambda d: d.execute_script(SEARCH_BOX), "no search box")
    box.click()
    box.send_keys(words)
    # The results are drawn again as the index answers: read them afresh each time.
    hrefs = RESULTS + ".map(a => a.href)"
    wait(browser, lambda d: any(href.split("#")[0] == target
                                for href in d.execute_script(hrefs)),
         f"the search for {words!r} does not find {target}")
    return browser.execute_script(hrefs)


def test_a_reader_finds_a_problem_by_searching(site: str, browser) -> None:
    browser.get(site)
    heading(browser)
    target = site + "problems/34-grouped-query-attention/index.html"
    found = search_for(browser, "grouped-query", target)
    # The English site's search finds English pages: the Chinese ones are the Chinese
    # site's to find.
    assert not [href for href in found if href.startswith(site + "zh/")], found
    browser.execute_script(
        RESULTS + ".find(a => a.href.split('#')[0] === arguments[0]).click()", target)
    wait(browser, lambda d: d.current_url.split("#")[0] == target,
         f"the search result does not lead to {target}")
    assert heading(browser).startswith("34 · Grouped-query attention")


def test_a_chinese_reader_searches_the_chinese_pages(site: str, browser) -> None:
    """On the Chinese site the search finds the Chinese pages, and none of the English
    site's (that a page the Chinese site shows in English is left out of its index,
    tests/test_lint_and_site.py checks on a page written in English alone)."""
    from selenium.webdriver.common.by import By

    browser.get(site + "zh/index.html")
    if "404" in browser.title or not browser.find_elements(By.CSS_SELECTOR, "article h1"):
        pytest.skip("this build has no Chinese site (Zensical builds no i18n plugin's)")
    heading(browser)
    target = site + "zh/problems/34-grouped-query-attention/index.html"
    found = search_for(browser, "grouped-query", target)
    english = [href for href in found if not href.startswith(site + "zh/")]
    assert not english, f"the Chinese site's search finds English pages: {english}"
    browser.execute_script(
        RESULTS + ".find(a => a.href.split('#')[0] === arguments[0]).click()", target)
    wait(browser, lambda d: d.current_url.split("#")[0] == target,
         f"the search result does not lead to {target}")
    assert heading(browser).startswith("34 · ") and "分组查询注意力" in heading(browser)


def settled(browser) -> None:
    """Wait until the page has asked for nothing new for a second: its script has run
    and fetched what it fetches at once."""
    count = "return performance.getEntriesByType('resource').length"
    heading(browser)
    seen, quiet_since, start = -1, time.monotonic(), time.monotonic()
    while time.monotonic() - quiet_since < 1 and time.monotonic() - start < WAIT:
        now = browser.execute_script(count)
        if now != seen:
            seen, quiet_since = now, time.monotonic()
        time.sleep(0.1)


def test_a_chinese_instructor_finds_the_instructors_pages_in_chinese(site: str, browser) -> None:
    """The instructors' pages written in Chinese are the Chinese site's: its navigation
    leads to them, in Chinese, and its search finds them."""
    from selenium.webdriver.common.by import By

    browser.get(site + "zh/index.html")
    if "404" in browser.title or not browser.find_elements(By.CSS_SELECTOR, "article h1"):
        pytest.skip("this build has no Chinese site (Zensical builds no i18n plugin's)")
    target = site + "zh/instructors/gradebook.html"
    browser.execute_script(
        "[...document.querySelectorAll('nav a')].find(a => a.href === arguments[0]).click()",
        target)
    wait(browser, lambda d: d.current_url.split("#")[0] == target,
         f"the Chinese site's navigation does not lead to {target}")
    assert heading(browser).startswith("给一个班级评分")
    assert "本页暂无中文版" not in browser.find_element(By.CSS_SELECTOR, "article").text
    found = search_for(browser, "成绩册", target)
    assert all(href.startswith(site + "zh/") for href in found), found


def test_a_page_asks_the_site_for_nothing_it_lacks(site: str, browser) -> None:
    """A page of either language, once its script has run, has fetched only files the
    site has (Material's script once asked for a sitemap.xml beside the page's twin in
    each language: zh/sitemap.xml from the home page, learners/sitemap.xml and
    zh/learners/sitemap.xml from learners/loop.html)."""
    from selenium.webdriver.common.by import By

    pages = ["index.html", "learners/loop.html", "problems/15-kv-cache/index.html"]
    browser.get(site + "zh/index.html")
    if "404" not in browser.title and browser.find_elements(By.CSS_SELECTOR, "article h1"):
        pages += ["zh/index.html", "zh/learners/loop.html", "zh/problems/15-kv-cache/index.html",
                  "zh/instructors/index.html"]
    Quiet.missing.pop(site, None)
    for page in pages:
        browser.get(site + page)
        settled(browser)
        assert not Quiet.missing.get(site), \
            f"{page} asks for what the site does not have: {Quiet.missing[site]}"


def search_count(browser) -> int | None:
    """How many pages the search box's results say were found; None before a count."""
    from selenium.webdriver.common.by import By

    said = re.search(r"\d+", browser.find_element(By.CSS_SELECTOR, ".md-search-result__meta").text)
    return int(said.group()) if said else None


def test_a_chinese_reader_finds_a_word_wherever_a_page_writes_it(site: str, browser) -> None:
    """Chinese has no spaces: a word is found on every Chinese page that writes it, not
    only where a phrase begins with it (the search once found 注意力 on 4 of the 15
    Chinese pages that write it)."""
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(site + "zh/index.html")
    if "404" in browser.title or not browser.find_elements(By.CSS_SELECTOR, "article h1"):
        pytest.skip("this build has no Chinese site (Zensical builds no i18n plugin's)")
    with urllib.request.urlopen(site + "zh/search/search_index.json", timeout=WAIT) as answer:
        index = json.loads(answer.read().decode("utf-8"))
    word = "注意力"
    writing = {entry["location"].split("#")[0] for entry in index["docs"]
               if word in (entry["title"] + entry["text"]).replace("\u200b", "")}
    assert len(writing) >= 10, f"only {len(writing)} Chinese pages write {word}"
    box = browser.execute_script(SEARCH_BOX)
    assert box is not None, "no search box"
    box.click()
    box.send_keys(word)
    # The count is drawn again as the index answers, each letter typed.
    try:
        WebDriverWait(browser, WAIT).until(lambda d: (search_count(d) or 0) >= len(writing))
    except TimeoutException:
        pytest.fail(f"the search for {word} finds {search_count(browser)} pages of the "
                    f"{len(writing)} that write it")


def test_a_chinese_reader_finds_the_statements_in_chinese(site: str, browser) -> None:
    """The Chinese site (the i18n plugin's, in zh/): its statements' index, a statement
    with its pictures, and the way back to English from the language menu."""
    from selenium.webdriver.common.by import By

    from grader.locale import catalog

    browser.get(site + "zh/problems/index.html")
    if "404" in browser.title or not browser.find_elements(By.CSS_SELECTOR, "article h1"):
        pytest.skip("this build has no Chinese site (Zensical builds no i18n plugin's)")
    assert heading(browser) == "全部题目说明"
    title = catalog("zh")["The KV cache"]
    follow(browser, title)
    assert browser.current_url.endswith("zh/problems/15-kv-cache/index.html")
    assert heading(browser).startswith("15 · ") and "KV 缓存" in heading(browser)
    drawn = pictures(browser)
    assert any(src.endswith("kv-cache.svg") for src in drawn), f"no KV cache picture: {drawn}"
    assert all(drawn.values()), f"pictures that did not load: {drawn}"
    # the picture's Chinese twin, which the build wrote and the i18n plugin put under zh/
    loaded = browser.execute_script(
        "return [...document.querySelectorAll('article img')].map(i => i.src)")
    assert any(src.endswith("/zh/pictures/kv-cache.svg") for src in loaded), loaded
    english = [a.get_attribute("href") for a in
               browser.find_elements(By.CSS_SELECTOR, "a[hreflang='en']")]
    assert english, "no link to the English site on a Chinese page"
