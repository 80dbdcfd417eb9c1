"""Reading a roster file: which learners, and where each one's repository is.

Three headers are known, told apart by their columns:

- gpt-kata's own: `learner` (or `github_username`, `username`, `login`) and
  `repository` (or `repository_url`, `repo`, `url`, `clone_url`);
- GitHub Classroom's classroom_roster.csv: `identifier, github_username, github_id,
  name`; a learner who never linked a GitHub account has no github_username;
- Classroom50's roster.csv (its config repository's CLASSROOM/roster.csv):
  `username, first_name, last_name, email, section, github_id, role`, `role` left
  out by older files and other columns after it; a row invited by email who has not
  joined has no username, and teachers' and TAs' rows (`role` teacher or ta) are
  not learners.

A header that is none of these is refused, naming the columns found and those
expected. Without a repository column, `--repo-url TEMPLATE` makes each URL from the
row's columns, and `{learner}` from the name it is known by. A learner on the roster
who has no account (so no repository) still gets their row: an Entry with `problem`
set, which the gradebook reports as an error row saying why.
"""

from __future__ import annotations

import csv
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from grader.grading.values.sanitise import visible
from grader.learner.errors import UsageError
from grader.locale import tr

NAME_COLUMNS = ("learner", "github_username", "username", "login")
URL_COLUMNS = ("repository", "repository_url", "repo", "url", "clone_url")
GITHUB_CLASSROOM = ("identifier", "github_username", "github_id", "name")
CLASSROOM50 = ("username", "first_name", "last_name", "email", "section", "github_id", "role")
STAFF_ROLES = ("teacher", "ta")
EXPECTED = ("learner,repository (gpt-kata's own; or github_username, username or login, and "
            "repository_url, repo, url or clone_url); "
            f"{','.join(GITHUB_CLASSROOM)} (GitHub Classroom's classroom_roster.csv); "
            f"{','.join(CLASSROOM50)} (Classroom50's roster.csv, role optional)")


@dataclass
class Entry:
    name: str  # the learner's name, as their row and reports say it: one visible line
    url: str
    problem: str | None = None  # why they have no repository to fetch, if they have none

    @property
    def folder(self) -> str:
        """Their hand-in folder's name, which is their reports' file name too: the name
        made a file name on every system (`con` is `%63on`), and said once: the
        gradebook names the row by `name` and the files by this."""
        from grader.classroom.gradebook.outputs import report_stem

        return report_stem(self.name)


def kind_of(header: list[str]) -> str:
    """Which roster this header is: 'github-classroom', 'classroom50' or 'own'."""
    columns = set(header)
    if {"identifier", "github_username"} <= columns:
        return "github-classroom"
    if set(CLASSROOM50[:5]) <= columns:
        return "classroom50"
    if columns & set(NAME_COLUMNS):
        return "own"
    found = ",".join(visible(c) for c in header) or "nothing"
    raise ValueError(f"its header is not one of a roster: found {found}; expected {EXPECTED}")


def who(kind: str, fields: dict[str, str]) -> tuple[str, str | None] | None:
    """The learner's name and, if they cannot have a repository, why; None: not a
    learner (a blank line, a teacher)."""
    if kind == "github-classroom":
        if fields.get("github_username"):
            return fields["github_username"], None
        known = fields.get("identifier") or fields.get("name") or ""
        return ((known, tr("no GitHub account is linked to them on the roster"))
                if known else None)
    if kind == "classroom50":
        if fields.get("role", "").lower() in STAFF_ROLES:
            return None
        if fields.get("username"):
            return fields["username"], None
        email = fields.get("email", "")
        return ((email, tr("invited by email and not joined: no GitHub account yet"))
                if email else None)
    name = next((fields[c] for c in NAME_COLUMNS if fields.get(c)), "")
    return (name, None) if name else None


def table(option: str, path: Path) -> tuple[list[str], list[list[str]]]:
    """A CSV file's header (its columns stripped and lowercased) and rows; a file that
    cannot be read is said with the option that named it."""
    try:
        with path.open(newline="", encoding="utf-8-sig") as handle:
            reader = csv.reader(handle)
            header = [c.strip().lower() for c in next(reader, [])]
            return header, list(reader)
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise UsageError(f"{option} {path}: cannot be read ({exc})") from None


def read_roster(path: Path, template: str | None, need_urls: bool = True) -> list[Entry]:
    """The roster's learners in name order. Without need_urls (a merge, which only
    needs the names), no repository column or template is asked for."""
    header, rows = table("--roster", path)
    try:
        kind = kind_of(header)
    except ValueError as exc:
        raise UsageError(f"--roster {path}: {exc}") from None
    url_column = next((c for c in URL_COLUMNS if c in header), None)
    if need_urls and url_column is None and not template:
        raise UsageError(f"--roster {path} has no repository column ({', '.join(URL_COLUMNS)}): "
                         "give --repo-url, e.g. 'https://github.com/ORG/gpt-kata-{learner}'")
    entries: dict[str, Entry] = {}
    for number, row in enumerate(rows, 2):
        fields = {k: (v or "").strip() for k, v in zip(header, row)}
        found = who(kind, fields)
        if found is None:
            if any(fields.values()) and kind == "own":
                raise UsageError(f"{path}, line {number}: no learner's name "
                                 f"({', '.join(NAME_COLUMNS)})")
            continue  # a blank line, or a teacher's
        name, problem = found
        url = fields.get(url_column or "", "")
        if need_urls and not url and problem is None:
            if not template:
                raise UsageError(f"{path}, line {number}: {visible(name)} has no repository")
            try:
                named = {k: v for k, v in fields.items() if k.isidentifier()}
                url = template.format(**{**named, "learner": name})
            except (KeyError, IndexError, ValueError) as exc:
                raise UsageError(f"--repo-url: line {number} of {path} has no {exc}") from None
        entry = Entry(visible(name), url, problem)
        if entry.name in entries:
            raise UsageError(f"{path}: {entry.name} is on the roster twice")
        entries[entry.name] = entry
    if not entries:
        raise UsageError(f"{path} names no learners")
    from grader.classroom.gradebook.outputs import shared_report_files

    # Each learner gets a folder of that name before the class is graded: on a disk
    # that ignores case (macOS, Windows) a second would fail to be made, or be the first.
    if shared := shared_report_files(entries):
        pairs = "; ".join(" and ".join(visible(n) for n in group) for group in shared)
        raise UsageError(f"{path}: {pairs}: their folders and reports would be one where "
                         "case or accents are not told apart (macOS, Windows, a downloaded "
                         "artifact); rename one of each")
    return sorted(entries.values(), key=lambda e: e.name)


def read_extensions(path: Path, names: set[str],
                    deadline_of: Callable[[str], datetime]) -> dict[str, datetime]:
    """Each learner's own deadline, from a CSV of `learner,deadline` (the name as the
    roster gives it, or in any of its name columns; the deadline as --deadline takes
    it, read by `deadline_of`). A name not on the roster is refused, not left out: a
    learner misspelt here would be graded at the class's deadline."""
    header, rows = table("--extensions", path)
    name_column = next((c for c in NAME_COLUMNS if c in header), None)
    if name_column is None or "deadline" not in header:
        found = ",".join(visible(c) for c in header) or "nothing"
        raise UsageError(f"--extensions {path}: its header is {found}; expected "
                         "learner,deadline (the name may be in github_username, username "
                         "or login)")
    deadlines: dict[str, datetime] = {}
    for number, row in enumerate(rows, 2):
        fields = {k: (v or "").strip() for k, v in zip(header, row)}
        if not any(fields.values()):
            continue
        name = visible(fields.get(name_column, ""))
        if name not in names:
            raise UsageError(f"{path}, line {number}: {name or 'no name'} is not on the roster")
        if name in deadlines:
            raise UsageError(f"{path}, line {number}: {name} has a second deadline")
        try:
            deadlines[name] = deadline_of(fields.get("deadline", ""))
        except Exception as exc:  # noqa: BLE001 - argparse's type error, said with its line
            raise UsageError(f"{path}, line {number}: {exc}") from None
    return deadlines
