"""Checks for transformer-block: pre-LayerNorm attention and MLP, each with its residual.

The learner's Block (with their CausalSelfAttention and MLP inside) is loaded
with known weights through the shipped checkpoint's names (ln_1, attn.qkv,
attn.proj, ln_2, mlp.fc, mlp.proj): the shipped model's own blocks on the
activations they see, then random weights and inputs.
"""

from __future__ import annotations

from grader.grading.contracts.module_checks import LayerChecks
from grader.grading.subject import transformer
from grader.grading.subject.cases import block_input
from grader.grading.subject.mistakes_data import mistakes_of
from grader.locale import marked

MISTAKES = mistakes_of(globals(), transformer.block)

LAYER = LayerChecks("blocks.{}", block_input, last="last-block",
                    output=marked("the block's output"), one_token_layer=1)

CONTRACT, test_shipped_blocks, test_random_blocks, test_the_same_output_twice = LAYER.checks(
    MISTAKES,
    "The shipped model's blocks, on the activations they see",
    "Blocks of small random models, against the reference")
