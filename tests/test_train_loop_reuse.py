"""Statement 30 offers `solution_of` for the learner's get_batch (19), schedule (27) and
clipping (28), and problem 25's train_step with clipping in an optimizer hook: a loop
built only from those, on the references as the learner's earlier solutions, passes
in the sandbox.
"""

from __future__ import annotations

import re
import shutil
import textwrap
from pathlib import Path

from conftest import grade_in_folder, messages
from test_track3_reuse import needs_landlock

from grader.registry import find

CODE = re.compile(r"```python\n(from grader\.reuse import solution_of\n.*?)```", re.DOTALL)

LOOP = '''

class Solution:
    def train_loop(self, model, optimizer, train_data, val_data, generator, eval_generator,
                   steps, batch_size, context_length, max_lr, min_lr, warmup_steps, max_norm,
                   eval_every, eval_batches):
        batches, schedule, step_of = Batches(), Schedule(), Step()
        fixed = [[batches.get_batch(data, context_length, batch_size, eval_generator)
                  for _ in range(eval_batches)] for data in (train_data, val_data)]

        def evaluate(pairs):
            model.eval()
            with torch.no_grad():
                losses = [F.cross_entropy(model(x).flatten(0, 1), y.flatten()).item()
                          for x, y in pairs]
            model.train()
            return sum(losses) / len(losses)

        def clip(opt, args, kwargs):
            Clip().clip_grad_norm(list(model.parameters()), max_norm)

        hook = optimizer.register_step_pre_hook(clip)
        log = []
        try:
            for step in range(steps + 1):
                if step % eval_every == 0 or step == steps:
                    log.append((step, evaluate(fixed[0]), evaluate(fixed[1])))
                if step == steps:
                    break
                for group in optimizer.param_groups:
                    group["lr"] = schedule.learning_rate(step, max_lr, min_lr, warmup_steps,
                                                         steps)
                x, y = batches.get_batch(train_data, context_length, batch_size, generator)
                step_of.train_step(model, optimizer, x, y)
        finally:
            hook.remove()
        return log
'''


def offered() -> str:
    [lines] = CODE.findall(find("train-loop").statement.read_text(encoding="utf-8"))
    return textwrap.dedent(lines)


def test_the_statement_offers_the_three_earlier_solutions() -> None:
    lines = offered()
    for slug in ("batches", "lr-schedule", "clip-grad-norm"):
        assert f'solution_of("{slug}")' in lines


@needs_landlock
def test_a_loop_built_on_the_earlier_solutions_passes(tmp_path: Path) -> None:
    problems = tmp_path / "learner" / "problems"
    for slug in ("batches", "train-step", "lr-schedule", "clip-grad-norm"):
        earlier = find(slug)
        (problems / earlier.folder).mkdir(parents=True)
        shutil.copy(earlier.reference, problems / earlier.folder / "solution.py")
    loop = find("train-loop")
    (problems / loop.folder).mkdir()
    source = ("import torch\nimport torch.nn.functional as F\n" + offered()
              + 'Step = solution_of("train-step")\n' + LOOP)
    (problems / loop.folder / "solution.py").write_text(source, encoding="utf-8")
    report = grade_in_folder(problems, "train-loop", tmp_path)
    assert report["status"] == "pass", messages(report)
