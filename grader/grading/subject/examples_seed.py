"""The name of the instructor's seed for the drawn examples, importable without what
draws them (torch, hypothesis): a gradebook records a digest of the seed before it
imports torch, while its fork server imports it beside it."""

# The instructor's seed for the drawn examples: set where the instructor grades, and
# never in the learners' copy (grader/release), whose stored examples are drawn
# without it. Without it, anyone holding the checks can draw the same examples.
SEED_VARIABLE = "GPT_KATA_EXAMPLES_SEED"
