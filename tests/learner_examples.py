"""The learner-style submissions' texts: whole files, or patches of another submission.

Each problem's `grader/checks/<slug>/examples/expected.toml` lists its equivalent
styles. A style is a whole file of the folder, or a patch (tests/patches.py) of
the folder's base file, or, with `of = "<problem>/<file>"`, of another problem's
submission: the transformer block written in the GPT-2 style is the multi-head
attention of that style with an MLP and a Block added, as a learner builds one
problem on the one before. A patched style may itself be the base of others, so
each text is written once and every file that grows from it follows its fixes.
The partial submissions other tests grade (`elsewhere`) may be patches too.
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path

from conftest import example_folders, examples
from patches import PatchError, apply

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


@functools.cache
def specs() -> dict[Path, dict]:
    return {table.parent: tomllib.loads(table.read_text(encoding="utf-8"))
            for table in (folder / "expected.toml" for folder in example_folders())}


def style_of(folder: Path, name: str) -> dict | None:
    """The table of a patched style, or of a patched partial submission (`elsewhere`);
    None where the submission is a whole file."""
    spec = specs()[folder]
    style = spec.get("equivalent", {}).get(name) or spec.get("elsewhere", {}).get(name)
    return style if isinstance(style, dict) else None


def patched_from(folder: Path, style: dict, here: str) -> tuple[Path, str]:
    """The folder and the file a patched style or mistake (`here`, as a message names
    it) applies to; an `of` that names no problem with examples raises `PatchError`."""
    if "of" not in style:
        return folder, specs()[folder]["base"]
    problem, _, file = style["of"].partition("/")
    if examples(problem) not in specs():
        raise PatchError(f"{here}: `of` names {style['of']!r}, not a problem with examples")
    return examples(problem), file


def text_of(folder: Path, name: str, seen: tuple[str, ...] = ()) -> str:
    """A submission's text: the whole file, or its patch applied to what it grows from.

    A patch that no longer fits, or a chain of styles that comes back to itself,
    raises `PatchError` naming the style.
    """
    here = f"{folder.parent.name}/{name}"
    if here in seen:
        raise PatchError(f"styles patch each other in a circle: {' -> '.join(seen + (here,))}")
    style = style_of(folder, name)
    if style is None:
        return (folder / name).read_text(encoding="utf-8")
    base_folder, base = patched_from(folder, style, here)
    # The base's own errors pass through as they are: the message names the one
    # style whose patch no longer fits, however long the chain above it.
    base_text = text_of(base_folder, base, seen + (here,))
    try:
        return apply(style["patch"], base_text)
    except PatchError as error:
        raise PatchError(f"{folder.parent.name}/expected.toml: style {name!r} no longer "
                         f"applies to {base_folder.parent.name}/{base}: {error}") from None


def mistake_text(folder: Path, name: str) -> str:
    """A named mistake's text: its whole file (`file`), or its patch applied to the
    folder's base, or to the style `of` names (a mistake only that style makes); a
    patch that no longer fits raises `PatchError` naming it."""
    mistake = specs()[folder]["mistakes"][name]
    if "file" in mistake:
        return (folder / mistake["file"]).read_text(encoding="utf-8")
    base_folder, base = patched_from(folder, mistake,
                                     f"{folder.parent.name}/expected.toml: mistake {name!r}")
    base_text = text_of(base_folder, base)
    try:
        return apply(mistake["patch"], base_text)
    except PatchError as error:
        raise PatchError(f"{folder.parent.name}/expected.toml: mistake {name!r} no longer "
                         f"applies to {base_folder.parent.name}/{base}: {error}") from None


def mistake_words(folder: Path, name: str) -> str:
    """What a named mistake's report must say: its `says`, or else the name of the known
    mistake its id gives, as mistakes.toml words it."""
    mistake = specs()[folder]["mistakes"][name]
    if mistake.get("says"):
        return mistake["says"]
    from grader.grading.contracts.declaring import load_check_module
    from grader.grading.values.failures import Mistake
    from grader.maintainer.catalogs import mistakes_in
    from grader.registry import find

    slug = mistake["mistake"].split("/")[0]
    return next(known.name for known in mistakes_in(load_check_module(find(slug)), Mistake)
                if known.named(slug).id == mistake["mistake"])


def example(problem: str, name: str, out: Path) -> Path:
    """One submission of a problem as a file to grade: the file itself where it is
    whole, else written out under `out` by its name (a style may be named without
    `.py`; the file has it, or it could not be imported)."""
    folder = examples(problem)
    if style_of(folder, name) is None:
        return folder / name
    written = out / folder.parent.name / f"{name.removesuffix('.py')}.py"
    written.parent.mkdir(parents=True, exist_ok=True)
    written.write_text(text_of(folder, name), encoding="utf-8")
    return written


def mistake(problem: str, name: str, out: Path) -> Path:
    """A known mistake of a problem as a file to grade or trace: its whole `file`
    where it has one, else its patch of the base written out under `out` as
    <name>.py (`python tests/learner_examples.py PROBLEM NAME -o DIR` prints where)."""
    folder = examples(problem)
    whole = specs()[folder]["mistakes"][name].get("file")
    if whole is not None:
        return folder / whole
    written = out / folder.parent.name / f"{name}.py"
    written.parent.mkdir(parents=True, exist_ok=True)
    written.write_text(mistake_text(folder, name), encoding="utf-8")
    return written


def main(argv: list[str]) -> int:
    """`python tests/learner_examples.py PROBLEM NAME [-o DIR]`: one style or known
    mistake written out to grade by hand (`gpt-kata grade PROBLEM --submission FILE`)."""
    import argparse

    parser = argparse.ArgumentParser(prog="tests/learner_examples.py", description=main.__doc__)
    parser.add_argument("problem")
    parser.add_argument("name", help="a style's file or name, or a known mistake's name")
    parser.add_argument("-o", "--out", type=Path, default=Path("learner-examples"))
    args = parser.parse_args(argv)
    folder = examples(args.problem)
    mistakes = specs()[folder].get("mistakes", {})
    if args.name in mistakes:
        written = mistake(args.problem, args.name, args.out)
    else:
        styles = specs()[folder].get("equivalent", {})
        name = f"{args.name}.py" if f"{args.name}.py" in styles else args.name
        written = example(args.problem, name, args.out)
        if not written.is_file():
            parser.error(f"{args.problem} has no style or mistake {args.name!r}: its styles "
                         f"are {sorted(styles)}, its mistakes {sorted(mistakes)}")
    print(written)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
