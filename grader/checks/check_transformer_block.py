"""Checks for transformer-block: pre-LayerNorm attention and MLP, each with its residual.

The learner's Block (with their CausalSelfAttention and MLP inside) is loaded
with known weights through the shipped checkpoint's names (ln_1, attn.qkv,
attn.proj, ln_2, mlp.fc, mlp.proj): the shipped model's own blocks on the
activations they see, then random weights and inputs.
"""

from __future__ import annotations

from functools import partial

from grader.grading import transformer
from grader.grading.cases import block_input
from grader.grading.contract import Contract
from grader.grading.failures import Mistake
from grader.grading.module_checks import (
    MASK_AS_BEFORE,
    LayerChecks,
    layer_norm_mistakes,
    qkv_order_mistake,
    repeatable,
)

PRE_NORM = "x = x + self.attn(self.ln_1(x)), then x = x + self.mlp(self.ln_2(x))"

MISTAKES = [
    Mistake("normalise after each residual sum (post-norm) instead of before each sub-layer",
            "the sub-layers read a normalised copy, and x itself is never normalised "
            "in the block: " + PRE_NORM,
            partial(transformer.block, norm="post")),
    Mistake("leave out the attention's residual",
            "add the attention's output to x instead of replacing x: " + PRE_NORM,
            partial(transformer.block, residual=("mlp",))),
    Mistake("leave out the MLP's residual",
            "add the MLP's output to x instead of replacing x: " + PRE_NORM,
            partial(transformer.block, residual=("attn",))),
    Mistake("leave out both residuals", PRE_NORM, partial(transformer.block, residual=())),
    Mistake("use the two LayerNorms the other way round",
            "ln_1 goes before the attention and ln_2 before the MLP",
            partial(transformer.block, swap_norms=True)),
    Mistake("use GELU's tanh approximation",
            "the shipped model uses the exact GELU: F.gelu(x) or nn.GELU(), without "
            "approximate='tanh'",
            partial(transformer.block, activation="tanh")),
    Mistake("use ReLU instead of GELU", "the MLP's activation is F.gelu",
            partial(transformer.block, activation="relu")),
    *layer_norm_mistakes(transformer.block, "the LayerNorms"),
    # The attention pasted from multi-head-attention may be wrong in its own ways.
    Mistake("leave out the causal mask in the attention", MASK_AS_BEFORE,
            partial(transformer.block, diagonal=None)),
    Mistake("divide the attention scores by head_size instead of its square root",
            "scale by 1 / sqrt(head_size), as in multi-head-attention",
            partial(transformer.block, scale="size")),
    Mistake("split the attention heads along the wrong axis",
            "view as (B, T, n_head, head_size), then .transpose(1, 2), as in "
            "multi-head-attention", partial(transformer.block, split="time")),
    qkv_order_mistake(transformer.block,
                      "take the attention's q, k and v from qkv's output in another order"),
]

LAYER = LayerChecks("blocks.{}", block_input, last="last-block",
                    output="the block's output", one_token_layer=1)

CONTRACT = Contract(mistakes=MISTAKES, **LAYER.contract_fields())

test_shipped_blocks, test_random_blocks = CONTRACT.tests(
    "The shipped model's blocks, on the activations they see",
    "Blocks of small random models, against the reference",
    LAYER.draw)

test_the_same_output_twice = repeatable(CONTRACT)
