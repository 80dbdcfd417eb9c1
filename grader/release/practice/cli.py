"""`gpt-kata` in the learners' copy: list, grade, watch, hint; a line for the rest."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

# The kata's own language module and catalogs, copied into the learners' copy by
# grader/release/build.py: the same words in both.
from gpt_kata_practice.locale import LANGUAGES, localised, tr, translated, use


def practice_note() -> str:
    return tr("This is a practice grade: the fixed cases and a few drawn examples, judged "
              "against stored answers. Your instructor's grade runs the full checks, with "
              "examples this copy does not hold.")


def kata_folder() -> Path:
    here = Path.cwd()
    for folder in (here, *here.parents):
        if (folder / "problems" / "registry.toml").is_file():
            return folder
    raise SystemExit(tr("not inside the kata: run gpt-kata from the folder with problems/"))


def problems() -> list[dict[str, Any]]:
    table = tomllib.loads((kata_folder() / "problems" / "registry.toml").read_text("utf-8"))
    found = table["problem"]
    for number, problem in enumerate(found, 1):
        problem["folder"] = f"{number:02d}-{problem['slug']}"
    return found


def select(names: list[str]) -> list[dict[str, Any]]:
    every = problems()
    if not names:
        return every
    chosen = []
    for name in names:
        match = [p for p in every if name in (p["slug"], p["folder"], p["folder"][:2],
                                              str(int(p["folder"][:2])))]
        if not match:
            raise SystemExit(tr("no problem {name!r}; `gpt-kata list` shows them", name=name))
        chosen.extend(match)
    return chosen


def grade(names: list[str], json_file: str | None = None) -> int:
    from gpt_kata_practice.grade import grade_problem

    failed = 0
    results = []
    for problem in select(names):
        path = kata_folder() / "problems" / problem["folder"] / "solution.py"
        result = grade_problem(problem["slug"], path)
        results.append((problem, result))
        if result.not_practised:
            print(f"  ? {problem['folder']}: " + tr("not practised here: {why}",
                                                      why=result.not_practised))
        elif result.unavailable:
            failed += 1
            print(f"  ✗ {problem['folder']}: {result.unavailable}")
        elif result.failures:
            failed += 1
            print(f"  ✗ {problem['folder']}: {result.counted}")
            for failure in result.failures:
                print(shown(failure))
        else:
            print(f"  ✓ {problem['folder']}: {result.counted}")
        if not result.not_practised:
            for method, why in result.parts_not_practised.items():
                print("    ? " + tr("{method}() is not practised here: {why}", method=method,
                                     why=why))
    print(practice_note())
    if json_file:
        write_json(Path(json_file), results)
    return 1 if failed else 0


def shown(failure: Any) -> str:
    """A failed case as the grade prints it: what it says, then its fix."""
    first, *rest = f"{failure.label}: {failure.says}".splitlines()
    if failure.hint:
        rest.append(tr("Hint: {hint}", hint=translated(failure.hint)))
    return "\n".join([f"    {first}", *(f"        {line}" for line in rest)])


def status(result: Any) -> str:
    if result.not_practised:
        return "not-practised"
    return "pass" if result.ok else "fail"


def write_json(path: Path, results: list[tuple[dict[str, Any], Any]]) -> None:
    """The practice grade as JSON, in the shape of the full grader's report (its
    problems and tests, each named mistake by the same id), marked as practice."""
    tests = []
    for problem, result in results:
        checks = result.checks or ([{"name": "loading solution.py", "status": "fail",
                                     "message": result.unavailable, "mistake": None}]
                                   if result.unavailable else [])
        for check in checks:
            tests.append({"name": f"{problem['folder']}: {check['name']}",
                          "problem": problem["slug"], "status": check["status"],
                          "message": check["message"],
                          "kind": (result.kind or None) if result.unavailable
                          else "wrong" if check["status"] == "fail" else None,
                          "mistake": check["mistake"]})
    graded = [status(r) for _, r in results if not r.not_practised]
    report = {"practice": True, "note": practice_note(),
              "status": "pass" if graded and all(s == "pass" for s in graded) else "fail",
              "problems": [{"problem": p["slug"], "number": int(p["folder"][:2]),
                            "status": status(r), "passed": r.passed,
                            "total": len(r.checks) or (1 if r.unavailable else 0),
                            **({"why": r.not_practised} if r.not_practised else {}),
                            **({"not_practised": r.parts_not_practised}
                               if r.parts_not_practised and not r.not_practised else {})}
                           for p, r in results],
              "tests": tests}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


def watch(names: list[str]) -> int:
    """Grade again whenever a chosen solution.py is saved; Ctrl-C stops."""
    chosen = select(names)
    paths = [kata_folder() / "problems" / p["folder"] / "solution.py" for p in chosen]
    seen: list[float] = []
    try:
        while True:
            now = [p.stat().st_mtime if p.exists() else 0.0 for p in paths]
            if now != seen:
                seen = now
                # A fresh process each time, so the saved file is read anew.
                import subprocess

                subprocess.run([sys.executable, "-m", "gpt_kata_practice", "grade",
                                *[p["slug"] for p in chosen]], check=False)
                print(tr("(watching; Ctrl-C stops)"))
            time.sleep(1.0)
    except KeyboardInterrupt:
        return 0


def hint(names: list[str]) -> int:
    problem = select(names)[0] if names else problems()[0]
    state_file = kata_folder() / ".gpt-kata" / "hints.json"
    shown = json.loads(state_file.read_text("utf-8")) if state_file.is_file() else {}
    hints = problem.get("hints", [])
    if not hints:
        print(tr("{folder} has no hints", folder=problem["folder"]))
        return 0
    n = min(shown.get(problem["slug"], 0) + 1, len(hints))
    shown[problem["slug"]] = n
    state_file.parent.mkdir(exist_ok=True)
    state_file.write_text(json.dumps(shown, indent=1), "utf-8")
    print(tr("{folder}, {what}:", folder=problem["folder"],
             what=tr("hint {n} of {total}", n=n, total=len(hints))))
    print(f"  {translated(hints[n - 1])}")
    return 0


def list_problems() -> int:
    track = None
    for problem in problems():
        if problem.get("track") != track:
            track = problem.get("track")
            print(translated(track or ""))
        print(f"  {problem['folder']}  {translated(problem['title'])}")
    first = problems()[0]["folder"]
    statement = localised(kata_folder() / "problems" / first / "README.md").name
    print(tr("read a problem in {statement}", statement=f"problems/NN-slug/{statement}"))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="gpt-kata", description="The kata's practice grader.")
    parser.add_argument("--lang", choices=sorted(LANGUAGES), metavar="LANG",
                        help="the language to speak: en (English) or zh (中文) (default: "
                             "GPT_KATA_LANG, else your locale, else en)")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="the problems")
    for name, text in (("grade", "grade your solutions on the practice cases"),
                       ("watch", "grade again each time you save"),
                       ("hint", "the next hint for a problem")):
        command = sub.add_parser(name, help=text)
        command.add_argument("problems", nargs="*")
        if name == "grade":
            command.add_argument("--json", metavar="FILE", help="also write the grade as "
                                 "JSON, each named mistake by its id")
    for name in ("talk", "trace", "train", "gradebook"):
        sub.add_parser(name, help="not in the learners' copy").add_argument(
            "rest", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    if args.lang:
        use(args.lang)
    if args.command == "list":
        return list_problems()
    if args.command == "grade":
        return grade(args.problems, args.json)
    if args.command == "watch":
        return watch(args.problems)
    if args.command == "hint":
        return hint(args.problems)
    print(tr("`gpt-kata {command}` needs the reference code, which this learners' copy "
             "does not hold: your instructor's copy of the kata has it.", command=args.command))
    return 2
