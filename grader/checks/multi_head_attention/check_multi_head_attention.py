"""Checks for multi-head-attention: the attention layer of a block, as a module.

The learner's CausalSelfAttention is loaded with known weights through the
shipped checkpoint's names (qkv, proj): the shipped model's own attention
layers on the activations they see, then random weights and inputs. Its output
must be the shipped layer's.
"""

from __future__ import annotations

from functools import partial

from grader.grading.contracts.module_checks import (
         LayerChecks,
         attention_mistakes,
         qkv_order_mistake,
)
from grader.grading.subject import transformer
from grader.grading.subject.cases import attention_input
from grader.grading.values.failures import Mistake
from grader.locale import marked

SPLIT = ("view (B, T, C) as (B, T, n_head, head_size), then .transpose(1, 2): head h owns "
         "channels h*head_size to (h+1)*head_size of every position")

MISTAKES = attention_mistakes(
    transformer.attention,
    by_size="scale by 1 / sqrt(head_size), the size of one head, not of n_embd",
    by_embd="each head's dot products have head_size terms: scale by 1 / sqrt(head_size)",
    by_time="each head's dot products have head_size terms, whatever the number of "
            "positions T: scale by 1 / sqrt(head_size), k.size(-1) of the heads' keys",
    softmax=("take the softmax over the wrong dimension",
             "the scores are (B, n_head, T, T) and each query's row becomes its weights: "
             "softmax over the last dimension, dim=-1"),
    own=[
        qkv_order_mistake(transformer.attention),
        Mistake("divide the scores by the square root of n_head instead of head_size",
                "once the keys are (B, n_head, T, head_size), k.size(1) is n_head: the "
                "head's width is the last dimension, k.size(-1); scale by "
                "1 / sqrt(k.size(-1))",
                partial(transformer.attention, scale="heads")),
        Mistake("split the heads along the wrong axis", SPLIT,
                partial(transformer.attention, split="time"),
                partial(transformer.attention, split="time", merge="time")),
        Mistake("join the heads without transposing them back",
                "y is (B, n_head, T, head_size): .transpose(1, 2) before .view(B, T, C)",
                partial(transformer.attention, merge="time")),
        Mistake("read qkv's output head by head (each head's q, k and v side by side)",
                "qkv's output is three blocks of n_embd channels, all the queries, then "
                "all the keys, then all the values: .split(n_embd, dim=2), then each "
                "into heads",
                partial(transformer.attention, per_head=True)),
        Mistake("join the heads channel by channel instead of head by head",
                "y is (B, n_head, T, head_size): .transpose(1, 2) makes it (B, T, n_head, "
                "head_size), and .reshape(B, T, C) then puts head 0's channels first",
                partial(transformer.attention, merge="channels")),
        Mistake("leave out the output projection",
                "the heads' outputs side by side go through self.proj",
                partial(transformer.attention, project=False)),
    ],
    layouts=({}, {"loop": True}))

LAYER = LayerChecks("blocks.{}.attn", attention_input, last="last-layer",
                    output=marked("the attention layer's output"))

CONTRACT, test_shipped_layers, test_random_layers, test_the_same_output_twice = LAYER.checks(
    MISTAKES,
    "The shipped model's attention layers, on the activations they see",
    "Attention layers of small random models, against the reference")
