import math  # noqa: F401 - math.cos and math.pi make the cosine


class Solution:
    def learning_rate(
        self, step: int, max_lr: float, min_lr: float, warmup_steps: int, steps: int
    ) -> float:
        """The learning rate of step `step` (counted from 0) of a run of `steps` steps.

        During the first warmup_steps steps it climbs in a straight line, reaching
        max_lr at the warm-up's last step: max_lr * (step + 1) / warmup_steps. Then
        it falls along half a cosine from max_lr to min_lr, which it reaches at
        step `steps`; from there on it stays at min_lr. Returns a float.
        """
        raise NotImplementedError("write learning_rate(): see README.md")
