"""`gpt-kata gradebook ROSTER --out DIR`: grade a whole class.

ROSTER holds one folder per learner: a clone of the kata (its problems/ is
graded) or a folder laid out like problems/. Only the learners' solution files
are read, as data (roster.py), and each learner is graded by this grader's own
`grade --classroom` in a process of its own (grading.py); a clone's grader/
folder, or anything else beside the solutions, is never imported, run or even
read. A learner whose files are unchanged is not graded again (state.py).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import sys
from pathlib import Path

from grader.classroom.gradebook import shards
from grader.classroom.gradebook.grade_process import forking, warm_up
from grader.classroom.gradebook.grading import grade_all, start_servers
from grader.classroom.gradebook.lms_export import add_arguments as add_lms_arguments
from grader.classroom.gradebook.lms_export import read_ids, write_asked
from grader.classroom.gradebook.merge import merge
from grader.classroom.gradebook.outputs import (
    Row,
    csv_lines,
    failed_report,
    hand_in_of,
    header,
    record_learner,
    report_stem,
    row_from_report,
    shared_report_files,
    show_table,
    with_hand_in,
    with_repositories,
    write_csv,
)
from grader.classroom.gradebook.repositories import add_arguments as add_roster_arguments
from grader.classroom.gradebook.repositories import gradebook_of_repositories
from grader.classroom.gradebook.roster import (
    Learner,
    collect,
    hidden_hand_ins,
    not_hand_ins,
    roster_folders,
)
from grader.classroom.gradebook.shards import shard_of, shard_spec
from grader.classroom.gradebook.state import (
    as_strong,
    grader_fingerprint,
    inputs_key,
    library_versions,
    load_state,
    sandbox_offered,
    seed_digest,
)
from grader.grading.values.sanitise import visible
from grader.learner.errors import EXIT_FAIL, EXIT_PASS, UsageError
from grader.learner.options import (
    positive_count,
    positive_megabytes,
    positive_seconds,
    require_isolation,
)
from grader.locale import language, tr
from grader.sandbox.wire.limits import (
    DEFAULT_CALL_TIMEOUT,
    DEFAULT_MEMORY_MB,
    DEFAULT_PROBLEM_BUDGET,
    DEFAULT_SCRATCH_MB,
)


def check_targets(args: argparse.Namespace) -> None:
    """--out is a folder (or none yet); --canvas and --moodle name files to write."""
    from grader.learner.options import check_report_target

    out = getattr(args, "out", None)
    if out is not None and Path(out).exists() and not Path(out).is_dir():
        raise UsageError(tr("--out {out} is a file; name a folder for the gradebook",
                            out=visible(out)))
    for option in ("canvas", "moodle"):
        target = getattr(args, option, None)
        if target and out is not None and Path(target).resolve().is_relative_to(
                Path(out).resolve()) and not Path(target).is_dir():
            continue  # in the gradebook's own folder, made before it is written
        check_report_target(f"--{option}", target)


def gradebook(args: argparse.Namespace) -> int:
    from grader.learner.options import select_problems
    from grader.learner.output import console as make_console

    # Where the results go is checked before minutes of grading, not after.
    check_targets(args)
    if args.merge:
        if args.roster is not None or args.shard is not None:
            raise UsageError(tr("--merge joins finished gradebooks: give no ROSTER, PROBLEM "
                                "or --shard with it"))
        return merge(args)
    if args.roster_file is not None:  # repositories at a deadline: repositories.py
        return gradebook_of_repositories(args, gradebook)
    if getattr(args, "fetch_only", False):
        raise UsageError(tr("--fetch-only records what learners' repositories hold: give "
                            "it with --roster FILE"))
    if args.roster is None:
        raise UsageError(tr("name the ROSTER folder (or --merge DIR... to join gradebooks)"))
    if getattr(args, "extensions", None) and not with_repositories(args):
        raise UsageError(tr("--extensions gives learners of a roster of repositories their "
                            "own deadlines: give --roster FILE --deadline TIME with it"))
    if getattr(args, "late_penalty", None) is not None and not with_repositories(args):
        raise UsageError(tr("--late-penalty applies to a roster of repositories graded at a "
                            "deadline: give --roster FILE --deadline TIME --late-policy ..."))
    chosen = select_problems(args.problems)
    if args.lms_ids:  # a mistake in it is told before the class is graded, not after
        read_ids(Path(args.lms_ids))
    out = Path(args.out)
    # A roster file's learners (repositories.py) are named as on the roster, each with
    # the folder their hand-in was written to; a roster folder's, by their folders.
    learners = (dict(sorted(args.learners.items())) if getattr(args, "learners", None)
                else roster_folders(Path(args.roster), out))
    ignored = not_hand_ins(Path(args.roster), out)
    if ignored:
        print("gpt-kata gradebook: " + tr("not graded, as neither a folder nor a zip: "
                                          "{names}", names=", ".join(ignored)),
              file=sys.stderr)
    hidden = hidden_hand_ins(Path(args.roster))
    if hidden:
        print("gpt-kata gradebook: " + tr("not graded, as hidden (the name begins with a "
                                          "dot): {names}", names=", ".join(hidden)),
              file=sys.stderr)
    shared = shared_report_files(learners)
    if shared:
        pairs = "; ".join(" and ".join(visible(n) for n in group) for group in shared)
        raise UsageError(tr("{pairs}: their reports would be one file where case or "
                            "accents are not told apart (macOS, Windows, a downloaded "
                            "artifact); rename one of each", pairs=pairs))
    if args.shard is not None:
        learners = shard_of(learners, *args.shard)
    require_isolation(argparse.Namespace(classroom=True, allow_unisolated=args.allow_unisolated))
    out.mkdir(parents=True, exist_ok=True)
    shards.record(out, args.shard)  # so that a merge can tell when a shard is missing
    console = make_console(quiet=args.quiet)

    # Everything a grade depends on beyond the files and the grader: a report made
    # under other options, another examples seed or a weaker sandbox is not kept.
    # The language too: a report's messages are in the language it was graded in; and
    # the torch and hypothesis installed, which run the references and draw the examples.
    options = {"problems": [p.slug for p in chosen], "timeout": args.timeout,
               "budget": args.budget, "memory": args.memory, "scratch_mb": args.scratch_mb,
               "unisolated": args.allow_unisolated, "mode": "classroom",
               "seed": seed_digest(), "sandbox": sandbox_offered(), "language": language(),
               "libraries": library_versions()}
    grader = grader_fingerprint()
    state = load_state(out)
    rows: dict[str, Row] = {}
    todo: dict[str, tuple[Learner, str]] = {}
    # Learners whose hand-in could not be fetched (a clone that failed, no commit by
    # the deadline): their row says so, not what an empty folder would have.
    causes: dict[str, str] = getattr(args, "causes", None) or {}
    for name, folder in learners.items():
        if name in causes:
            rows[name] = record_learner(out, name, failed_report(causes[name], chosen),
                                        chosen, args.junit, hand_in_of(args, name))
            continue
        try:
            learner = collect(name, folder, chosen)
        # A folder the grader may not read, or a hand-in no reader expected, spoils only
        # its row.
        except Exception as exc:  # noqa: BLE001 - a hand-in is hostile data
            rows[name] = record_learner(out, name, failed_report(
                tr("their folder could not be read: {error}", error=exc), chosen), chosen,
                args.junit, hand_in_of(args, name))
            continue
        # Nothing handed in (no commit by the deadline, say): the folder is empty for
        # that reason, which the row says instead of how an empty folder reads.
        fetched = (getattr(args, "fetch_notes", None) or {}).get(name)
        if fetched:
            learner.notes = fetched
        key = inputs_key(learner, grader, options)
        earlier = out / f"{report_stem(name)}.json"
        fresh = (not args.force and state.get(name) == key and earlier.is_file()
                 and (not args.junit or (out / f"{report_stem(name)}.junit.xml").is_file()))
        if fresh:
            try:
                report = json.loads(earlier.read_text(encoding="utf-8"))
                if as_strong(report, args.allow_unisolated):
                    hand_in = hand_in_of(args, name)
                    # Written again only if this run's fetch says otherwise of it (how
                    # late, say): a report that is still true keeps its file untouched.
                    rows[name] = (row_from_report(name, report, chosen)
                                  if with_hand_in(copy.deepcopy(report), hand_in) == report
                                  else record_learner(out, name, report, chosen, args.junit,
                                                      hand_in))
                    rows[name].skipped = True
                    continue
            except (OSError, ValueError, AttributeError):
                pass  # an unreadable report is graded again, as is a weaker one
        todo[name] = (learner, key)

    servers = None
    if todo and forking():
        servers = start_servers(args)  # it imports torch while this process does
        warm_up()  # before the progress bar's thread and the graders' threads start
    try:
        grade_all(todo, chosen, args, servers, out, state, rows, console)
    finally:
        if servers is not None:
            servers.close()

    ordered = [rows[name] for name in learners]
    try:
        repositories = with_repositories(args)
        write_csv(out / "gradebook.csv", header(chosen, repositories),
                  csv_lines(ordered, chosen, repositories))
    except OSError as exc:
        print("gpt-kata gradebook: " + tr("{table} could not be written: {error}; every "
                                          "learner's report is in {out}",
                                          table=out / "gradebook.csv", error=exc, out=out),
              file=sys.stderr)
        return EXIT_FAIL
    write_asked(args, out / "gradebook.csv")
    try:
        show_table(console, ordered, chosen, out)
    except Exception as exc:  # noqa: BLE001 - the gradebook is written; say so in one line
        print("gpt-kata gradebook: " + tr("the table could not be shown ({error}); {table} "
                                          "was written",
                                          error=f"{type(exc).__name__}: {visible(exc)}",
                                          table=out / "gradebook.csv"), file=sys.stderr)
    return EXIT_FAIL if any(row.error for row in ordered) else EXIT_PASS


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("gradebook", help=tr("grade a class: every learner's folder in ROSTER"))
    p.add_argument("roster", metavar="ROSTER", nargs="?",
                   help=tr("a folder with one folder per learner: a clone of the kata, or a "
                           "folder laid out like problems/"))
    p.add_argument("problems", nargs="*", metavar="PROBLEM",
                   help=tr("grade only these problems (default: all)"))
    p.add_argument("--out", required=True, metavar="DIR",
                   help=tr("where gradebook.csv and each learner's LEARNER.json go"))
    p.add_argument("--shard", type=shard_spec, metavar="K/N",
                   help=tr("grade only the K-th of N shares of the learners: in name order, "
                           "every N-th from the K-th (default: everyone)"))
    p.add_argument("--merge", nargs="+", metavar="DIR",
                   help=tr("instead of grading, join these gradebooks (e.g. the shards' --out "
                           "folders) into one in --out; with --roster FILE, every learner on it "
                           "gets a row, an error row if no gradebook holds them"))
    p.add_argument("--allow-partial", action="store_true",
                   help=tr("with --merge: join the shards given even when some of the N are "
                           "missing (their learners then have no row)"))
    p.add_argument("--jobs", type=positive_count, default=os.cpu_count() or 1, metavar="N",
                   help=tr("learners graded at a time (default: %(default)s, the cores)"))
    p.add_argument("--force", action="store_true",
                   help=tr("regrade learners whose files have not changed too"))
    p.add_argument("--junit", action="store_true",
                   help=tr("also write DIR/LEARNER.junit.xml"))
    p.add_argument("--timeout", type=positive_seconds, default=DEFAULT_CALL_TIMEOUT,
                   metavar="SECONDS", help=tr("limit for each call (default: %(default)g)"))
    p.add_argument("--budget", type=positive_seconds, default=DEFAULT_PROBLEM_BUDGET,
                   metavar="SECONDS",
                   help=tr("limit for all calls of one problem (default: %(default)g)"))
    p.add_argument("--memory", type=positive_megabytes, default=DEFAULT_MEMORY_MB, metavar="MB",
                   help=tr("memory a learner's code may use (default: %(default)g)"))
    p.add_argument("--scratch-mb", type=positive_megabytes, default=DEFAULT_SCRATCH_MB,
                   metavar="MB",
                   help=tr("size of a learner's scratch folder (default: %(default)g)"))
    p.add_argument("--allow-unisolated", action="store_true",
                   help=tr("grade even where no sandbox is available"))
    p.add_argument("-q", "--quiet", action="store_true", help=tr("print nothing on stdout"))
    add_lms_arguments(p)
    add_roster_arguments(p)
    p.set_defaults(run=gradebook)
