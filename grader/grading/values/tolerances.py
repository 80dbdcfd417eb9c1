"""How close a float result must be to the expected one: every tolerance, in one table.

Float results are compared with RTOL and ATOL; each other tolerance here says
which results it is for and why they need it. A check that needs one of its own
says why where it defines it.
"""

from __future__ import annotations

import torch

RTOL = 1e-5  # float32 carries ~7 digits; a different order of operations moves the last two
ATOL = 1e-6  # for entries near zero, where a relative bound means nothing
TIE_RTOL = 1e-5  # two sampling scores this close are the same score in float32 rounding
# A cumulative probability this close to top_p may round to either side: it is a sum
# of up to vocab_size float32 terms, and two correct programs (float32 or float64,
# another order of sums) can disagree by a few 1e-7.
NUCLEUS_ATOL = 1e-5
TINY_PROB = 1e-30  # below this a float32 softmax gives 0: the order of such tokens is noise
# A probability from a cached forward pass against the same window read afresh: the
# same sums in another order move it by about 1e-7; a key from an old position, by
# far more than this.
CACHE_ATOL = 1e-4
# The weights after a few AdamW steps. Adam divides each gradient by its own
# running size, so an entry near zero, computed in another order, can move its
# weight by a fraction of the learning rate (lr / eps times its rounding error,
# at worst). Between equivalent training steps of small GPTs (three styles, 800
# drawn examples) we measured up to 2e-2 times the rate: 2e-4 at lr 1e-2, the
# largest rate the checks use. A tenth of that rate is allowed, five times the
# worst seen. Forgetting zero_grad() moves weights by half the rate or more; the
# losses, which keep RTOL and ATOL, catch such mistakes at lower rates too.
TRAINED_WEIGHTS_ATOL = 1e-3


def activation_atol(expected: torch.Tensor) -> float:
    """The absolute tolerance of an activation tensor (what the model's parts output).

    Activations are sums of many terms as large as the tensor's typical entry, so
    an entry near zero still carries their rounding error: their absolute
    tolerance is RTOL times the tensor's root mean square, not ATOL.
    """
    finite = expected.double()[expected.isfinite()]
    scale = float(finite.pow(2).mean().sqrt()) if finite.numel() else 0.0
    return ATOL + RTOL * scale


def logit_scale_rtol(logits: torch.Tensor) -> torch.Tensor:
    """The relative tolerance of probabilities made from `logits`, row by row: RTOL,
    plus the rounding of a number as large as the row's largest finite logit.

    exp(x - logsumexp(x)) is as right as exp(x - max) / sum, but at logits of 1e4 the
    float32 log-sum-exp is rounded by 5e-4, and so is every probability made from it.
    """
    finite = torch.where(logits.isfinite(), logits.double(), 0.0).abs()
    scale = finite.amax(dim=-1, keepdim=True) if finite.numel() else finite
    return RTOL + 4 * torch.finfo(logits.dtype).eps * scale

# RoPE's angle p * theta rounds to float32: equivalent ways of computing it (another
# order, float64 then cast, a complex product) differ by a few of its last bits,
# and so the output by that much of the vector's size, growing with the position.
ANGLE_ULPS = 8 * 2.0**-24
# A RoPE mistake turns vectors by a whole wrong angle; an answer within this share of
# the vectors' size of a mistake's is that mistake, rounded another way (in the kata's
# diagnosis and in the learners' copy's naming alike).
ROTATION_MISTAKE_RTOL = 1e-3
