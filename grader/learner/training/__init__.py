"""Training a GPT from the command line: `gpt-kata train`, with the grader's GPT and
loop, with the learner's own (in a worker, `--yours`), and in a learners' copy."""
