"""Where a training loop's learning rates part from the reference's, judged from the
rates each optimizer.step() read (the train-loop harness records them).

A loop that writes its own schedule formula, slightly wrong, trains to other weights
and nothing else shows why. Problem 30's check and a learners' copy both name the
first step and param group at another rate by first_other_rate, so they say the same.
"""

from __future__ import annotations

import math
from typing import Any

from grader.locale import tr

# Two right formulas (the cosine written one way or another) agree to about 1e-16;
# a rate a millionth away is another formula.
RATE_RTOL = 1e-6
RATE_ATOL = 1e-12  # for a schedule that ends at min_lr = 0


def first_other_rate(rates: Any, want_rates: Any) -> str:
    """The first step and param group whose rate is not the reference's, in a
    sentence; "" where they agree, or where the rates cannot be read as numbers."""
    if not isinstance(rates, (list, tuple)) or not isinstance(want_rates, (list, tuple)):
        return ""
    for step, (groups, want_groups) in enumerate(zip(rates, want_rates)):
        if not (isinstance(groups, (list, tuple)) and len(groups) == len(want_groups)):
            return ""  # a group dropped or added: the weights say it better
        for group, (rate, want) in enumerate(zip(groups, want_groups)):
            if not isinstance(rate, (int, float)) or isinstance(rate, bool):
                return ""
            if not math.isclose(rate, want, rel_tol=RATE_RTOL, abs_tol=RATE_ATOL):
                return tr("step {step} ran at a learning rate of {rate:.6g} (param group "
                          "{group}), expected {want:.6g}: problem 27's learning_rate({step}, "
                          "max_lr, min_lr, warmup_steps, steps)", step=step, rate=rate,
                          group=group, want=want)
    return ""
