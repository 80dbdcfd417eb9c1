"""`gpt-kata similarity ROSTER --out DIR`: which learners' solutions look alike.

The roster is read exactly as `gpt-kata gradebook` reads it (its own functions:
the same folders, the same names, each solution taken only as data, and only if
it is a regular file inside the learner's folder). Nothing a learner wrote is
run. For each problem, every pair of learners' files is compared by copydetect
(https://github.com/blingenf/copydetect): winnowing fingerprints of the code's
tokens, as MOSS does, with every name replaced by one letter, so renaming
variables or rewording comments does not hide a copy. The problem's starter is
its boilerplate: what every learner was given never counts as shared.

copydetect is an optional dependency (the `class` extra): a learner's install
does not carry it, and without it the command says in one line how to add it.

Written to DIR:
- similarity.csv: every pair of every problem, most similar first;
- similarity.md: the most similar pairs of each problem, as Markdown tables;
- NN-slug.html: copydetect's report for that problem, the shared code
  highlighted side by side;
- sources/NN-slug/LEARNER.py: the files compared, as the HTML shows them.
"""

from __future__ import annotations

import argparse
import itertools
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from grader import paths, wording
from grader.classroom.gradebook.outputs import report_stem, write_csv
from grader.classroom.gradebook.roster import collect, roster_folders
from grader.grading.values.sanitise import cell, markdown_cell, visible
from grader.learner.errors import EXIT_PASS, UsageError
from grader.locale import tr
from grader.registry import Problem

INSTALL = 'pip install "gpt-kata[class]" (or pip install copydetect)'
# copydetect's defaults: the shortest run of matching characters of the filtered code
# (names already one letter each) that counts, and the one always found.
NOISE_THRESHOLD = 25
GUARANTEE_THRESHOLD = 30
CSV_COLUMNS = ["problem", "rank", "learner_a", "learner_b", "similarity", "similarity_a",
               "similarity_b", "overlap_tokens"]


@dataclass
class Pair:
    a: str
    b: str
    similarity_a: float  # the share of a's fingerprinted code that b's also holds
    similarity_b: float
    overlap: int  # tokens of code they share

    @property
    def similarity(self) -> float:
        # A short file copied whole into a longer one is a copy, whatever the other has.
        return max(self.similarity_a, self.similarity_b)


@dataclass
class ProblemResult:
    problem: Problem
    pairs: list[Pair]
    compared: int  # learners whose file was compared
    notes: list[str]
    html: Path | None = None


def copy_detector() -> type:
    """copydetect's CopyDetector, or a usage error that says how to install it."""
    if "matplotlib.pyplot" not in sys.modules:
        # Its HTML report draws two plots; no display is needed for that.
        os.environ.setdefault("MPLBACKEND", "Agg")
    try:
        from copydetect import CopyDetector
    except ImportError:
        raise UsageError(tr("the similarity report needs copydetect, which is not "
                            "installed: {install}", install=INSTALL)) from None
    return CopyDetector


def file_stem(name: str) -> str:
    """A learner's file name in sources/: the gradebook's report name, with & encoded
    too, since copydetect's HTML lists the files' paths as they are."""
    return report_stem(name).replace("&", "%26")


def stage(problem: Problem, files: dict[str, bytes], out: Path,
          notes: list[str]) -> dict[str, Path]:
    """Each learner's file written as data to out/sources/NN-slug/, the only copies the
    detector reads; a file that is not UTF-8 text is left out, with a note."""
    folder = out / "sources" / problem.folder
    if folder.exists():
        shutil.rmtree(folder)  # a learner gone from the roster leaves no file behind
    folder.mkdir(parents=True)
    staged: dict[str, Path] = {}
    for name, content in files.items():
        try:
            content.decode("utf-8")
        except UnicodeDecodeError:
            notes.append(tr("{name}: not UTF-8 text, not compared", name=name))
            continue
        path = folder / f"{file_stem(name)}.py"
        path.write_bytes(content)
        staged[name] = path.resolve()
    return staged


def compare(problem: Problem, files: dict[str, bytes], out: Path, threshold: float,
            html: bool) -> ProblemResult:
    notes: list[str] = []
    staged = stage(problem, files, out, notes)
    result = ProblemResult(problem, [], len(staged), notes)
    if len(staged) < 2:
        notes.append(tr("fewer than two learners' files: nothing to compare"))
        return result
    detector = copy_detector()(
        noise_t=NOISE_THRESHOLD, guarantee_t=GUARANTEE_THRESHOLD, display_t=threshold,
        extensions=["py"], autoopen=False, silent=True,
        out_file=str((out / f"{problem.folder}.html").resolve()))
    starter = paths.STARTERS / problem.folder / "solution.py"
    if starter.is_file():
        detector.add_file(str(starter), type="boilerplate")
        given = starter.read_bytes()
        untouched = sum(files[name] == given for name in staged)
        if untouched:
            notes.append(tr("{learners} handed in the starter unchanged: nothing of "
                            "theirs to compare, so they score 0",
                            learners=wording.learners(untouched)))
    else:
        notes.append(tr("no starter at {path}: nothing was set aside as given", path=starter))
    by_path = {str(path): name for name, path in staged.items()}
    for path in by_path:
        detector.add_file(path)
    detector.run()
    index = {path: i for i, path in enumerate(detector.test_files)}
    for (path_a, a), (path_b, b) in itertools.combinations(sorted(by_path.items(),
                                                                  key=lambda kv: kv[1]), 2):
        i, j = index[path_a], index[path_b]
        sim_a, sim_b = (float(x) for x in detector.similarity_matrix[i, j])
        if sim_a < 0:  # copydetect could not read one of them
            notes.append(tr("{a} and {b}: not compared", a=a, b=b))
            continue
        result.pairs.append(Pair(a, b, sim_a, sim_b, int(detector.token_overlap_matrix[i, j])))
    result.pairs.sort(key=lambda p: (-p.similarity, -min(p.similarity_a, p.similarity_b),
                                     p.a, p.b))
    if html:
        detector.generate_html_report()
        result.html = out / f"{problem.folder}.html"
    return result


def learners_files(roster: Path, out: Path,
                   chosen: list[Problem]) -> tuple[dict[str, dict[str, bytes]], list[str]]:
    """problem folder -> learner -> their file's bytes, read as the gradebook reads them."""
    files: dict[str, dict[str, bytes]] = {p.folder: {} for p in chosen}
    notes: list[str] = []
    for name, folder in roster_folders(roster, out).items():
        try:
            learner = collect(name, folder, chosen)
        except Exception as exc:  # noqa: BLE001 - a hand-in is hostile data: its row alone
            notes.append(tr("{name}: their folder could not be read ({error})", name=name,
                            error=visible(exc)))
            continue
        for problem_folder, content in learner.files.items():
            if content is not None:
                files[problem_folder][name] = content
    return files, notes


def similarity_rows(results: list[ProblemResult]) -> list[list[str]]:
    # Learners name their folders: a spreadsheet must show the name, not run it.
    return [[result.problem.folder, str(rank), cell(pair.a), cell(pair.b),
             f"{pair.similarity:.4f}", f"{pair.similarity_a:.4f}", f"{pair.similarity_b:.4f}",
             str(pair.overlap)]
            for result in results for rank, pair in enumerate(result.pairs, 1)]


def write_markdown(path: Path, results: list[ProblemResult], top: int) -> None:
    """similarity.md, for the instructor to read: in the language in use (`gpt-kata
    --lang zh similarity`), as the notes in it are; similarity.csv keeps its English
    columns for the machines that read it."""
    lines = ["# " + tr("Similar solutions"), "",
             tr("The {top} most similar pairs of each problem (copydetect; the starter's "
                "own code is not counted). A high score on a short problem can be chance: "
                "there are few ways to write it.", top=top), ""]
    header = (tr("rank"), tr("learner"), tr("learner"), tr("similarity"), tr("shared tokens"))
    for result in results:
        side_by_side = (tr(" [Side by side]({report})", report=result.html.name)
                        if result.html else "")
        lines += [f"## {result.problem.folder}", "",
                  tr("{learners} compared.", learners=wording.learners(result.compared))
                  + side_by_side,
                  ""]
        lines += [f"- {markdown_cell(note)}" for note in result.notes]
        if result.pairs:
            lines += ["", "| " + " | ".join(header) + " |",
                      "| ---: | --- | --- | ---: | ---: |"]
            lines += [f"| {rank} | {markdown_cell(p.a)} | {markdown_cell(p.b)} | "
                      f"{p.similarity:.0%} | {p.overlap} |"
                      for rank, p in enumerate(result.pairs[:top], 1)]
        lines.append("")
    path.write_text("\n".join(lines), encoding="utf-8")


def show(results: list[ProblemResult], top: int, out: Path, quiet: bool) -> None:
    from rich.markup import escape
    from rich.table import Table

    from grader.learner.output import console as make_console

    console = make_console(quiet=quiet)
    # A problem whose every pair shares nothing (each its untouched starter, say) gets
    # no table here: a class that has solved a few problems would scroll past dozens.
    alike = [result for result in results if any(pair.similarity > 0 for pair in result.pairs)]
    for result in alike:
        table = Table(title=result.problem.folder, title_justify="left")
        for column in (tr("learner"), tr("learner"), tr("similarity"), tr("shared tokens")):
            table.add_column(column)
        for pair in result.pairs[:top]:
            table.add_row(escape(pair.a), escape(pair.b), f"{pair.similarity:.0%}",
                          str(pair.overlap))
        console.print(table)
    unlike = sum(1 for result in results if result.pairs) - len(alike)
    if unlike:
        console.print(tr("{problems} with no code in common between any two learners, "
                         "not shown: the files list every pair",
                         problems=wording.problems(unlike)))
    console.print(tr("wrote {table}, similarity.md and one HTML report per problem there",
                     table=escape(str(out / "similarity.csv"))))


def similarity(args: argparse.Namespace) -> int:
    from grader.learner.options import select_problems

    copy_detector()  # before reading anything: without it there is nothing to do
    if not 0 <= args.threshold <= 1:
        raise UsageError(tr("--threshold {threshold:g}: a share between 0 and 1",
                            threshold=args.threshold))
    chosen = select_problems(args.problems)
    out = Path(args.out)
    roster = Path(args.roster)
    out.mkdir(parents=True, exist_ok=True)
    files, notes = learners_files(roster, out, chosen)
    for note in notes:
        print(f"gpt-kata similarity: {note}", file=sys.stderr)
    results = [compare(p, files[p.folder], out, args.threshold, not args.no_html)
               for p in chosen]
    write_csv(out / "similarity.csv", CSV_COLUMNS, similarity_rows(results))
    write_markdown(out / "similarity.md", results, args.top)
    show(results, args.top, out, args.quiet)
    return EXIT_PASS


def add_parser(sub: argparse._SubParsersAction) -> None:
    from grader.learner.options import positive_count

    p = sub.add_parser("similarity",
                       help=tr("which learners' solutions look alike, problem by problem "
                               "(needs the class extra: copydetect)"))
    p.add_argument("roster", metavar="ROSTER",
                   help=tr("a folder with one folder per learner, as for gradebook"))
    p.add_argument("problems", nargs="*", metavar="PROBLEM",
                   help=tr("compare only these problems (default: all)"))
    p.add_argument("--out", required=True, metavar="DIR",
                   help=tr("where similarity.csv, similarity.md and the HTML reports go"))
    p.add_argument("--top", type=positive_count, default=10, metavar="N",
                   help=tr("pairs per problem in the tables (the CSV has all) "
                           "(default: %(default)s)"))
    p.add_argument("--threshold", type=float, default=0.5, metavar="SHARE",
                   help=tr("pairs the HTML shows side by side: at least this share of one "
                           "file shared (default: %(default)s)"))
    p.add_argument("--no-html", action="store_true", help=tr("write no HTML reports"))
    p.add_argument("-q", "--quiet", action="store_true", help=tr("print nothing on stdout"))
    p.set_defaults(run=similarity)
