"""Grading as a function: submissions in, a `Report` out.

The CLI, `talk` and the tests all grade through `grade_problems`; nothing here
reads the command line or the environment (torch and hypothesis are told, while
the checks run, to keep their caches in the grade's scratch folders, and torch to
seed the CPU's generator alone).
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from grader.grading.engine.plugin import GradingPlugin, Share, TestResult, run_checks
from grader.grading.engine.seeding import cpu_seeding_only
from grader.grading.subject.strategies import hypothesis_home_in
from grader.grading.values.sanitise import visible, visible_or_none
from grader.model import artifacts
from grader.registry import Problem
from grader.reports.report import ProblemSummary, Report
from grader.sandbox.host.pool import WorkerPool
from grader.sandbox.host.scratch_folders import torch_cache_kept_in
from grader.sandbox.wire.limits import DEFAULTS, Limits
from grader.sandbox.wire.printed import as_printed

__all__ = ["Limits", "goldens_mode", "grade_problems", "safe"]


def goldens_mode() -> str:
    return "exact" if artifacts.goldens_platform_matches() else "live-only"


def grade_problems(submissions: dict[Problem, Path], pool: WorkerPool,
                   limits: Limits = DEFAULTS, share: Share | None = None) -> Report:
    """Grade each problem's submission file with that problem's checks; with `share`,
    only the problems it claims for this process (the report holds only those)."""
    ordered = dict(sorted(submissions.items(), key=lambda item: item[0].number))
    plugin = GradingPlugin({p.slug: f for p, f in ordered.items()},
                           {p.slug: p for p in ordered}, pool, limits, share=share)
    cache = pool.torch_cache()
    # Hypothesis' cache beside torch's, in the grade's scratch root (strategies.py).
    with torch_cache_kept_in(cache), hypothesis_home_in(os.path.join(
            os.path.dirname(cache), "hypothesis")), cpu_seeding_only():
        run_checks(plugin, list(ordered))
    results = [safe(r) for r in plugin.results]
    summaries = [ProblemSummary(p, f, [r for r in results if r.problem == p])
                 for p, f in ordered.items() if plugin.graded_here(p.slug)]
    return Report(summaries, goldens_mode(), artifacts.this_platform(),
                  [visible(e, lines=True) for e in plugin.internal_errors],
                  isolation=list(pool.layers))


def safe(result: TestResult) -> TestResult:
    """The result as every report shows it: learner text (what the code printed, and
    the messages that quote it) with control characters escaped, here, once, so that
    no renderer and no file format can meet them raw. Messages and output keep their
    newlines: they are blocks, shown line by line; the failing call's arguments and
    answer are one line each."""
    arguments = None if result.arguments is None else {
        visible(name): visible(what) for name, what in result.arguments.items()}
    output = as_printed(result.output).each_line(lambda line: visible(line, True))
    return replace(result, name=visible(result.name), message=visible(result.message, True),
                   output=output, hint=visible(result.hint, True),
                   arguments=arguments, got=visible_or_none(result.got))
