"""Which tier each test sits in, and which problems it covers: the one table.

`python -m pytest` runs the default tier: the static checks, the unit tests and a
smoke of every end-to-end path. The heavier tiers are named by what they cover and
are left out of it; `-m NAME` runs one alone, `-m check` only the static checks.
tests/conftest.py marks every collected test from this table; the tiers' markers and
their descriptions are listed in pyproject.toml.

A test goes by its most specific entry: one parametrized case's
(`file::test_name[params]`) before its function's (`file::test_name`), and that
before its file's. A few tests of a heavy tier stay in the default tier as its smoke
(SMOKE): they run with every `python -m pytest`, and not again in the tier.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# The static checks: they read the registry, statements, starters, references, check
# modules, mistakes files, docs, CI files and the import graph, and apply every patch;
# no grade is run. What a contributor runs before each commit.
CHECK = (
    "test_architecture.py",
    "test_chinese.py::test_every_english_text_has_its_chinese",
    "test_chinese.py::test_a_translation_keeps_fields_numbers_and_code",
    "test_chinese_statements.py",
    "test_ci_workflow.py",
    "test_consistency.py",
    "test_docs.py",
    "test_grade_timeline.py",
    "test_gradescope_pins.py",
    "test_held_in_memory.py::test_a_problem_takes_a_model_exactly_when_its_checks_hand_one",
    "test_install_config.py::test_the_copy_and_the_workflows_install_the_same_way",
    "test_learner_runtime.py",
    "test_line_endings.py",
    "test_lint_and_site.py",
    "test_mistake_ids.py",
    "test_mistakes_data.py",
    # A grading folder left out of the package: only the installed kata would miss it.
    "test_packaging.py::test_every_grader_folder_with_code_is_packaged",
    "test_patches.py",
    "test_prose_as_data.py",
    "test_shards.py::test_workflows_are_valid_yaml",
    "test_site_statements.py",
    "test_submissions.py::test_every_submission_file_has_an_expectation",
    "test_submissions.py::test_every_known_mistake_has_a_submission_that_makes_it",
    "test_submissions.py::test_every_patch_applies",
    "test_tiers.py",
)

# The heavy tiers, left out of `python -m pytest`; .ci/run runs each of them.
HEAVY = {
    # Every learner-style submission (grader/checks/<slug>/examples/) graded end to end.
    "submissions": (
        "test_submissions.py::test_submissions_grade_as_expected",
        # Learner-style answers built on earlier ones (solution_of), graded end to end;
        # test_reuse.py's stay in the default tier as the smoke of that path.
        "test_gqa_reuse.py::test_an_attention_built_on_the_learners_rope_passes",
        "test_track3_reuse.py::test_a_block_and_a_gpt_built_on_the_earlier_classes_pass",
        "test_train_loop_reuse.py::test_a_loop_built_on_the_earlier_solutions_passes",
        # The same from a notebook: a class using earlier solutions, and one using its
        # file's other classes (the default tier keeps a notebook class's grade).
        "test_notebook.py::test_a_notebook_class_may_use_earlier_solutions",
        "test_notebook.py::test_a_class_from_examples_that_uses_its_files_other_classes_is_"
        "graded",
    ),
    # Classes: the gradebook, its rosters and shards, the Gradescope bundle,
    # Classroom50, every report format of a class, and a class of twenty.
    "classroom": (
        "test_class_late_and_causes.py",
        "test_class_of_twenty.py",
        "test_classroom50.py::test_the_template_grades_a_checkout",
        "test_gradebook.py",
        "test_gradescope.py::test_bundle_builds_and_grades_a_submission",
        "test_gradescope.py::test_the_bundle_is_the_same_byte_for_byte_from_one_commit",
        "test_gradescope.py::test_a_hand_in_of_nothing_says_so_in_the_learners_words",
        "test_reports_gradebook.py::test_a_hostile_class_graded_for_real",
        "test_roster.py::test_a_roster_of_repositories_is_graded_at_its_deadline",
        "test_scores_agree.py",
        "test_shards.py::test_shards_merged_equal_one_run",
        # A class graded from inside a learner's clone, by the gradebook and by
        # Gradescope's entry point; the default tier keeps the classroom grade's.
        "test_launch_own_grader.py::test_a_gradebook_run_from_inside_a_clone_grades_with_"
        "the_installed_grader",
        "test_launch_own_grader.py::test_run_autograder_grades_a_submission_holding_a_"
        "grader_with_the_installed_one",
        # The memory attack through a gradebook; the default tier keeps it against one grade.
        "test_held_in_memory.py::test_a_gradebook_gives_the_memory_attack_nothing",
    ),
    # The learners' copy (`gpt-kata release`) and the installed package.
    "release": (
        "test_install_config.py",
        "test_packaging.py::test_installed_grader_grades_the_kata_folder_it_runs_in",
        "test_copy_models.py",
        "test_release.py",
        "test_release_parts.py",
    ),
    # The spawned-worker path of macOS and Windows, forced on Linux.
    "spawned": (
        "test_launch_platforms.py::test_a_gradebook_of_spawned_grades_grades_every_learner",
        "test_launch_spawned.py",
        # Checks from one notebook session, each with a worker spawned for it.
        "test_notebook.py::test_a_session_on_the_spawned_path_grades_each_check",
        # A practice grade asked to take the spawned path (the default tier keeps the
        # switch's classroom side).
        "test_classroom_switches.py::test_practice_still_takes_the_spawned_path_when_asked",
        # A grade that trains leaves the temporary folder empty there too (the default
        # tier keeps the fork path's).
        "test_temporary_folder.py::test_a_grade_that_trains_leaves_the_temporary_folder_"
        "empty[spawned]",
        "test_temporary_folder.py::test_a_grade_ended_from_outside_leaves_the_temporary_"
        "folder_empty[SIGTERM-spawned]",
        "test_temporary_folder.py::test_a_grade_ended_from_outside_leaves_the_temporary_"
        "folder_empty[SIGHUP-spawned]",
    ),
    # The sandbox under stress: its notice on every platform and command, servers
    # stopped mid-grade, workers that stop reading, trees of processes at the limits.
    "sandbox": (
        "test_launch_deadlines.py",
        "test_launch_host.py",
        "test_launch_server_stopped.py",
        # A grade's helper process dying before or halfway through its share.
        "test_grade_shared.py::test_a_helper_that_dies_costs_time_not_the_grade",
        # Ctrl-C in a grade of one process (the default tier stops a shared one).
        "test_cli.py::test_ctrl_c_stops_a_grade_without_a_grader_error[1]",
        "test_limits_tree.py",
        # Workers forked without the sandbox keep their temporary files in the grade's
        # scratch root.
        "test_temporary_folder.py::test_a_grade_that_trains_leaves_the_temporary_folder_"
        "empty[unsandboxed]",
        # A grade whose terminal closed (the default tier keeps SIGTERM's).
        "test_temporary_folder.py::test_a_grade_ended_from_outside_leaves_the_temporary_"
        "folder_empty[SIGHUP-fork]",
        # A loop and a wait of seconds each, their CPU and wall time measured apart.
        "test_slow_or_endless.py::test_a_loop_and_a_wait_are_measured_apart",
        # A call computing part-time, and one waiting, out of time on a busy machine.
        "test_slow_or_endless.py::test_a_time_out_that_computed_on_a_busy_machine_is_"
        "marked_busy",
        "test_slow_or_endless.py::test_a_load_out_of_time_on_a_busy_machine_is_busy",
        "test_unsandboxed_notice.py::test_a_command_says_once_how_your_code_runs_short_of_the_sandbox",
        "test_unsandboxed_notice.py::test_under_the_full_sandbox_a_command_says_nothing_of_it",
        "test_unsandboxed_notice.py::test_talk_says_it_before_the_prompt",
        # Hostile output under a Windows console's and a bare C locale's encoding (the
        # default tier keeps ASCII, where the marks fall back to words, and UTF-8).
        "test_reports_console.py::test_any_console_encoding_shows_hostile_output_and_keeps_"
        "the_reports[cp1252]",
        "test_reports_console.py::test_any_console_encoding_shows_hostile_output_and_keeps_"
        "the_reports[C-locale]",
    ),
    # The documentation site built strictly in both languages (half a minute and more
    # on two cores, which was a third of the check tier's time), and read in a
    # headless Chromium: a problem's link followed, its pictures loaded, a problem
    # found by search.
    "site": (
        "test_lint_and_site.py::test_the_site_builds_strictly",
        "test_site_browser.py",
    ),
    # The learner's tools end to end: talk, trace and train through their own code,
    # and the shipped models' sentences (6,000 characters sampled from each).
    "tools": (
        "test_chinese.py::test_talk_speaks_chinese",
        # A talk streamed by sentences and by words gives one text (the default tier
        # keeps a talk streamed by words through the command, and both streams in
        # test_talk_stream.py).
        "test_cli.py::test_talk_streams_sentences",
        "test_cli_usage.py::test_train_without_a_terminal_prints_progress_lines",
        "test_llama_checkpoint.py::test_the_shipped_modern_model_writes_well_formed_sentences",
        "test_talk_model.py",
        "test_talk_modern.py",
        "test_talk_run_yours.py",
        "test_talk_stream.py",
        "test_talk_yours.py",
        "test_trace.py",
        "test_train.py::test_shipped_model_writes_well_formed_sentences",
        "test_train_modern.py",
        "test_train_progress.py::test_train_yours_with_a_loop_that_returns_its_log_shows_"
        "every_tenth_as_it_goes",
        "test_train_yours.py",
        "test_train_yours_loop.py",
    ),
}

# Trains a GPT to the end (minutes). Tests carry this marker themselves.
TRAINS = "trains"

# The default tier's smoke of each heavy tier's paths: one submission chunk per
# track, one platform's notice, one of each tool (a talk through a trained run's
# weights is train --yours's run, in test_train_yours.py; talked to with the
# learner's own GPT in the tools tier). Matched against the whole test id.
SMOKE = (
    "test_submissions.py::test_submissions_grade_as_expected[sample-0]",
    "test_submissions.py::test_submissions_grade_as_expected[top-k-0]",
    "test_submissions.py::test_submissions_grade_as_expected[loss-0]",
    "test_submissions.py::test_submissions_grade_as_expected[rms-norm-0]",
    "test_unsandboxed_notice.py::test_a_command_says_once_how_your_code_runs_short_of_the_sandbox"
    "[spawned-talk]",
    "test_talk_model.py::test_model_shipped_is_the_default",
    "test_talk_stream.py::test_sentences_come_one_a_piece_and_words_through_the_word_streamer",
    "test_talk_yours.py::test_an_unfinished_gpt_is_refused_in_one_line",
    "test_trace.py::test_cropping_the_wrong_end_differs_at_the_step_where_the_window_first_slides",
    "test_train_yours.py::test_your_gpt_trains_into_a_run_that_talks",
    "test_train_modern.py::test_a_run_config_is_a_gpts_or_a_modern_gpts_and_nothing_between",
)

TIERS = ("check", *HEAVY, TRAINS)
# What `python -m pytest` leaves out (pyproject.toml's addopts says the same, and
# tests/test_tiers.py checks that it does).
DEFAULT_EXCLUDES = (*HEAVY, TRAINS)
DEFAULT_MARKEXPR = f"not ({' or '.join(DEFAULT_EXCLUDES)})"


def _name_and_params(test_id: str) -> tuple[str, str]:
    """`file.py::test_name[params]` as ("file.py::test_name", "params")."""
    name, _, params = test_id.partition("[")
    return name, params.removesuffix("]")


def tier_of(test_id: str) -> str:
    """The tier of a test, by its id relative to tests/; "" for the default tier's
    unit tests. A SMOKE test is in the default tier whatever its file's tier."""
    if test_id in SMOKE:
        return ""
    name, _ = _name_and_params(test_id)
    file = name.partition("::")[0]
    for wanted in (test_id, name, file):
        if wanted in CHECK:
            return "check"
        for tier, entries in HEAVY.items():
            if wanted in entries:
                return tier
    return ""


def entries() -> Iterable[str]:
    """Every entry of the table, so that a check can see that each still names tests."""
    yield from CHECK
    for listed in HEAVY.values():
        yield from listed
    yield from SMOKE


# -- which problems a test covers -----------------------------------------------------
# Modules named for what they check, not for a problem's slug.
MODULE_PROBLEMS = {
    "test_swiglu_gqa_reference": ("swiglu", "grouped-query-attention"),
    "test_gqa_reuse": ("grouped-query-attention",),
    "test_data_pipeline_reference": ("vocabulary", "windows", "batches"),
    "test_bpe_libraries": ("bpe",),
    "test_rope_reference": ("rope",),
    "test_llama": ("modern-gpt",),
    "test_train_modern": ("modern-gpt", "train-loop"),
    "test_talk_modern": ("modern-gpt",),
}
# Modules named `test_<slug>_<what>` for one problem: the reference's own tests, and
# reuse of earlier answers.
PROBLEM_MODULE = re.compile(r"test_(?P<slug>[a-z_]+?)_(reference|reuse)")


def problems_of(test_id: str, slugs: Iterable[str], folders: Iterable[str]) -> set[str]:
    """The problems a test covers: by its module's name, and by the problems its
    parameters name (a slug, a folder such as `09-top-k`, `top-k/argmax.py`, or a
    chunk such as `top-k-2`). Only whole names count: `top-k` is not in `top-k-top-p`."""
    slugs, by_folder = set(slugs), {folder: folder[3:] for folder in folders}
    name, params = _name_and_params(test_id)
    module = name.partition("::")[0].removesuffix(".py")
    found = set(MODULE_PROBLEMS.get(module, ()))
    named = PROBLEM_MODULE.fullmatch(module)
    if named and named["slug"].replace("_", "-") in slugs:
        found.add(named["slug"].replace("_", "-"))
    for part in re.split(r"[/,\s]|\.\.", params):
        part = part.removesuffix(".py")
        for candidate in (part, re.sub(r"-\d+$", "", part)):
            if candidate in slugs:
                found.add(candidate)
            elif candidate in by_folder:
                found.add(by_folder[candidate])
    return found
