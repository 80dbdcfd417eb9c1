"""Finding a learner's kata in what they handed in: a folder, a zip, or a tree of
files read out of a git commit.

Learners hand in many shapes: a clone (its `problems/`), a folder laid out like
`problems/`, GitHub's "Download ZIP" (`gpt-kata-main/problems/`), a Finder zip
(`__MACOSX/` beside the folder), a `src/` around it all, or a folder holding only
their zip. `opened(entry)` finds the folder of `NN-slug/` folders in any of them,
and says what it did (notes) or, when it finds none, what it looked for and the
names nearest to it.

A zip (and a git commit, grader/classroom/gradebook/repositories.py) is never unpacked as it stands:
only its `solution.py` files (regular files, the size a solution may be) and
the folders that hold things are written, below a fresh private folder, with no
path that climbs out (`..`, absolute names), no links, at most MAX_ENTRIES
entries and MAX_TOTAL_BYTES in all, so neither a crafted zip nor a zip bomb can
reach beyond it.
"""

from __future__ import annotations

import difflib
import os
import re
import stat
import struct
import tempfile
import zipfile
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from grader.grading.values.sanitise import folder_name
from grader.locale import marked, tr, translated
from grader.paths import MAX_SOLUTION_BYTES, other_case

# Solutions are a few kilobytes (paths.MAX_SOLUTION_BYTES); these bound what reading
# one hand-in may cost.
MAX_ENTRIES = 20_000
MAX_TOTAL_BYTES = 50_000_000
MAX_DEPTH = 4  # folders looked into below the hand-in, for the kata
PROBLEM_FOLDER = re.compile(r"\d\d-[a-z0-9-]+")
IGNORED = "__MACOSX"  # the resource forks macOS's Finder adds to a zip
# What unpack() leaves out, each counted in a note in the class's language.
OUT_OF_ARCHIVE = marked("paths out of the archive")
HIDDEN = marked("hidden (dot) entries")
TWICE = marked("names given twice")
LINKS = marked("links")
NOT_REGULAR = marked("entries that are not regular files")
WRAPPERS = ("problems", "src")  # folders a kata is often found in
# A solution.py that a hand-in holds as a link, or as another entry that is not a
# regular file, is not written; a hidden file beside where it would be says which,
# so that its report says why it is missing. No hand-in writes one: unpack() leaves
# out every hidden entry.
LEFT_OUT = {"link": marked("a link, which is not followed in a repository or zip"),
            "other": marked("not a regular file")}


def left_out_marker(path: Path, kind: str) -> Path:
    """The hidden file that says `path` was left out as a `kind` entry."""
    return path.parent / f".{path.name}.{kind}"


def is_left_out_marker(name: str) -> bool:
    """Whether a name is one of unpack()'s markers, which the finder passes over."""
    return name.startswith(".") and name.rsplit(".", 1)[-1] in LEFT_OUT


@dataclass
class Found:
    folder: Path  # where the NN-slug/solution.py files are (or would be)
    inside: Path  # no solution may be a link out of this folder
    shown: str  # what reports call that folder
    notes: list[str] = field(default_factory=list)
    looked_for: str = ""  # when nothing was found: what was looked for, and what is near


@dataclass
class Member:
    """One entry of an archive: a path inside it, its kind, and its bytes on demand."""
    name: str
    kind: str  # "file", "dir", "link" or "other"
    read: Callable[[int], bytes] = lambda limit: b""


def is_hand_in(entry: Path) -> bool:
    """A learner's entry in a roster folder: a folder, or a zip file."""
    return not entry.name.startswith(".") and (entry.is_dir() or is_zip(entry))


def is_zip(entry: Path) -> bool:
    """A zip file that is one, not a link to a file elsewhere."""
    return entry.suffix.lower() == ".zip" and entry.is_file() and not entry.is_symlink()


def learner_name(entry: Path, taken: set[str]) -> str:
    """The learner's name, made safe (grading/values/sanitise.py): a folder's own name;
    a zip's name without `.zip`, unless a folder or an earlier zip has it (compared made
    safe, as names are kept), else its whole name. No hand-in then takes another's
    place: folders come first, and zips in the order of their names (roster.py), so a
    zip's whole name is no folder's (one folder holds no two entries of one name) and
    no earlier zip's name without `.zip` (that zip's name would sort after it)."""
    if entry.is_dir():
        return folder_name(entry.name)
    stem = folder_name(entry.name[:-len(".zip")])
    return stem if stem and stem not in taken else folder_name(entry.name)


def has_problems(folder: Path) -> bool:
    try:
        return any(PROBLEM_FOLDER.fullmatch(e.name) and e.is_dir() for e in folder.iterdir())
    except OSError:
        return False


@contextmanager
def opened(entry: Path, wanted: list[str]) -> Iterator[Found]:
    """The kata in a learner's hand-in (a folder or a zip), for as long as the
    context lasts: an unpacked zip is removed after."""
    if entry.is_dir():
        found = find(entry, entry.resolve(), str(entry), wanted)
        inner = [e for e in children(found.folder) if e.suffix.lower() == ".zip"]
        if found.looked_for and len(inner) == 1 and is_zip(inner[0]):
            # A folder holding only their zip.
            with opened_zip(inner[0], str(inner[0]), wanted) as zipped:
                zipped.notes.insert(0, tr("graded the zip {name} in the folder",
                                             name=inner[0].name))
                yield zipped
            return
        yield found
        return
    with opened_zip(entry, str(entry), wanted) as found:
        yield found


@contextmanager
def opened_zip(path: Path, shown: str, wanted: list[str]) -> Iterator[Found]:
    with tempfile.TemporaryDirectory(prefix="gpt-kata-hand-in-") as tmp:
        root = Path(tmp) / "unpacked"
        root.mkdir()
        try:
            refuse_many_entries(path)
            with zipfile.ZipFile(path) as archive:
                notes = unpack(zip_members(archive), root)
        # A crafted zip fails in zipfile's and zlib's own ways (an unknown compression
        # method, a broken deflate stream, a short file): each is this learner's
        # unreadable hand-in, never the end of the class's run.
        except Exception as exc:  # noqa: BLE001 - a hand-in is hostile data
            why = str(exc) or type(exc).__name__
            found = Found(root, root.resolve(), shown,
                          looked_for=tr("{path} is not a zip that can be read ({why})",
                                         path=shown, why=why))
            yield found
            return
        found = find(root, root.resolve(), shown, wanted)
        found.notes[:0] = notes
        yield found


def refuse_many_entries(path: Path) -> None:
    """Refuse a zip of more than MAX_ENTRIES entries before zipfile reads them: it
    builds an object for each entry first, about eight times the zip's size in
    memory, so a zip of two million empty entries took 750 MB.

    The entries are counted as zipfile will read them, header by header through the
    central directory, since the count the end record gives can lie."""
    end = getattr(zipfile, "_EndRecData", None)  # zipfile's reader of the end record
    if end is None:
        return  # another Python's zipfile: zip_members still counts them, after
    with path.open("rb") as handle:
        record = end(handle)
        if not record:
            return  # not a zip: zipfile says so itself
        size = record[zipfile._ECD_SIZE]
        # Where zipfile starts: what precedes the archive (a self-extractor's stub)
        # and the zip64 records are allowed for as it allows for them.
        start = record[zipfile._ECD_LOCATION] - size
        if record[zipfile._ECD_SIGNATURE] == zipfile.stringEndArchive64:
            start -= zipfile.sizeEndCentDir64 + zipfile.sizeEndCentDir64Locator
        handle.seek(max(start, 0))
        read = count = 0
        while read < size:
            header = handle.read(zipfile.sizeCentralDir)
            if len(header) < zipfile.sizeCentralDir or header[:4] != zipfile.stringCentralDir:
                return  # a broken directory: zipfile refuses it itself
            count += 1
            if count > MAX_ENTRIES:
                raise ValueError(f"more than {MAX_ENTRIES} entries")
            name, extra, comment = struct.unpack("<HHH", header[28:34])
            handle.seek(name + extra + comment, os.SEEK_CUR)
            read += zipfile.sizeCentralDir + name + extra + comment


def zip_members(archive: zipfile.ZipFile) -> Iterator[Member]:
    infos = archive.infolist()
    if len(infos) > MAX_ENTRIES:
        raise ValueError(f"more than {MAX_ENTRIES} entries")
    for info in infos:
        mode = info.external_attr >> 16
        kind = ("dir" if info.is_dir() else "link" if stat.S_ISLNK(mode)
                else "other" if info.flag_bits & 0x1 else "file")  # 0x1: encrypted

        def read(limit: int, info: zipfile.ZipInfo = info) -> bytes:
            # Never the size the header claims: as many bytes as the limit, inflated.
            with archive.open(info) as handle:
                return handle.read(limit)
        yield Member(info.filename, kind, read)


def safe_parts(name: str) -> tuple[str, ...] | None:
    """The path's parts, or None for a name that would climb out or is no path."""
    text = name.replace("\\", "/")  # zips made on Windows
    if text.startswith("/") or re.match(r"[A-Za-z]:", text) or "\x00" in text:
        return None
    parts = tuple(p for p in PurePosixPath(text).parts if p not in ("", "."))
    if not parts or ".." in parts:
        return None
    return parts


def unpack(members: Iterable[Member], root: Path, hidden_noted: bool = True) -> list[str]:
    """Write the hand-in's folders and solution.py files below `root`; the notes say
    what was left out (hidden entries only if `hidden_noted`: a repository's .git*
    files are no news). Only regular files named solution.py are read at all."""
    skipped: Counter[str] = Counter()
    total = 0
    for count, member in enumerate(members, 1):
        if count > MAX_ENTRIES:
            raise ValueError(f"more than {MAX_ENTRIES} entries")
        parts = safe_parts(member.name)
        if parts is None:
            skipped[OUT_OF_ARCHIVE] += 1
            continue
        if parts[0] == IGNORED or any(p.startswith(".") for p in parts):
            label = f"{IGNORED}/" if parts[0] == IGNORED else HIDDEN
            skipped[label] += 1
            continue
        if len(parts) > MAX_DEPTH + 3:
            continue  # deeper than any kata is looked for
        target = root.joinpath(*parts)
        try:
            if member.kind == "dir":
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
        except (FileExistsError, NotADirectoryError):  # a file and a folder of one name
            skipped[TWICE] += 1
            continue
        if parts[-1] != "solution.py":
            continue  # the folder is kept, so the finder sees the shape; the file is not
        if member.kind != "file":
            link = member.kind == "link"
            skipped[LINKS if link else NOT_REGULAR] += 1
            left_out_marker(target, "link" if link else "other").touch()
            continue
        # One byte over the limit is kept, so that the file is refused as too large.
        content = member.read(MAX_SOLUTION_BYTES + 1)
        total += len(content)
        if total > MAX_TOTAL_BYTES:
            raise ValueError(f"more than {MAX_TOTAL_BYTES} bytes of solutions")
        try:
            with open(target, "xb") as handle:  # never through a link, never twice
                handle.write(content)
        except (FileExistsError, IsADirectoryError):
            skipped[TWICE] += 1
    if not hidden_noted:
        skipped.pop(HIDDEN, None)
    # "links ignored: 1": what is counted first, so that one reads as well as several
    return [tr("{what} ignored: {count}", count=n, what=translated(label))
            for label, n in skipped.items()]


def why_left_out(path: Path) -> str:
    """Why unpack() did not write `path`, in the language in use, or "" if it did not
    leave it out."""
    return next((translated(why) for kind, why in LEFT_OUT.items()
                 if left_out_marker(path, kind).is_file()), "")


def children(folder: Path) -> list[Path]:
    try:
        return sorted(folder.iterdir())
    except OSError:
        return []


def find(root: Path, inside: Path, shown: str, wanted: list[str]) -> Found:
    """The folder below `root` that holds NN-slug folders: `root` itself, its
    `problems/`, or, through a lone folder (or a `src/`), one further down."""
    folder, path, notes = root, [], []
    for _ in range(MAX_DEPTH):
        for name in ("problems", ""):
            # The hand-in itself may be a link (Gradescope's submission is); none inside it.
            # `Problems/` is not `problems/`, though macOS's and Windows's disks open it
            # as such: the layout found is the same on every disk.
            candidate = folder / name if name else folder
            if (not (name and (candidate.is_symlink() or other_case(candidate, folder)))
                    and candidate.is_dir() and has_problems(candidate)):
                where = "/".join([*path, name] if name else path)
                if where:
                    notes.append(tr("found the problems in {path}/", path=where))
                return Found(candidate, inside, "/".join([shown, where]) if where else shown,
                             notes)
        entries = children(folder)
        ignored = [e.name for e in entries if e.name == IGNORED or e.name.startswith(".")
                   and not is_left_out_marker(e.name)]
        if ignored:
            names = ", ".join(folder_name(name) for name in ignored)
            notes.append(tr("ignored {names} in {path}/", names=names, path="/".join(path))
                         if path else tr("ignored {names}", names=names))
        # Never through a link: it could lead to the grader's own reference solutions.
        inner = [e for e in entries if e.name not in ignored and e.is_dir()
                 and not e.is_symlink()]
        wrapper = [e for e in inner if e.name in WRAPPERS]
        step = inner[0] if len(inner) == 1 else wrapper[0] if len(wrapper) == 1 else None
        if step is None:
            break
        folder, path = step, [*path, step.name]
    return Found(root, inside, shown, notes, looked_for=looked_for(root, shown, wanted))


def looked_for(root: Path, shown: str, wanted: list[str]) -> str:
    """What the finder looked for, and the names in the hand-in closest to it."""
    names: set[str] = set()
    loose = ""  # a solution.py outside any problem's folder, as a hand-in often has one
    for depth, (folder, dirs, files) in enumerate(os.walk(root)):
        if depth > 200 or len(names) > 2000:
            break
        dirs.sort()  # the same loose solution.py named on every file system
        names.update(name for name in dirs + files if not is_left_out_marker(name))
        if not loose and "solution.py" in files and not PROBLEM_FOLDER.fullmatch(
                Path(folder).name):
            loose = (Path(folder) / "solution.py").relative_to(root).as_posix()
    near: list[str] = []
    for name in (*wanted, "problems", "solution.py"):
        near += [n for n in difflib.get_close_matches(name, names, n=2, cutoff=0.6)
                 if n not in near and n != name]
    example = wanted[0] if wanted else "01-crop-context"
    text = tr("no NN-slug/solution.py (such as {example}/solution.py) in {path}, its "
              "problems/, or a lone folder (or src/) inside it", example=example, path=shown)
    # A name is the hand-in's: shown escaped, as a line of its own it could forge one.
    if loose:
        text += tr("; {path} is outside any problem's folder, so it answers no problem",
                   path=folder_name(loose))
    return text + (tr("; nearest names found: {names}",
                      names=", ".join(folder_name(name) for name in sorted(near)[:5]))
                   if near else "")
