"""Checks for attention-head: one head of causal self-attention, as a module.

The learner's Head is built from a config, loaded with known weights through
the names the statement fixes (query, key, value; grader/model/parts.py) and
called on activations: one head's slice of the shipped model's attention on
the inputs that attention really sees, and random weights and inputs.
"""

from __future__ import annotations

from grader.grading.contracts.module_checks import LayerChecks, attention_mistakes
from grader.grading.subject import transformer
from grader.grading.subject.cases import attention_input
from grader.locale import marked

MISTAKES = attention_mistakes(
    transformer.head,
    by_size="scale by 1 / sqrt(head_size), so the scores' spread does not depend on it",
    by_embd="the dot products have head_size terms: scale by 1 / sqrt(head_size), where "
            "head_size = k.shape[-1], not x.shape[-1]",
    by_time="k is (B, T, head_size): its last dimension is head_size, k.size(-1), and "
            "k.size(1) is T, the number of positions; scale by 1 / sqrt(k.size(-1))",
    softmax=("take the softmax over the queries instead of the keys",
             "each query's row of scores becomes its weights: softmax over the last "
             "dimension, dim=-1"))

LAYER = LayerChecks("blocks.{}.attn", attention_input, last="last-layer-last-head",
                    output=marked("the head's output"), one_head=True)

CONTRACT, test_shipped_heads, test_random_heads, test_the_same_output_twice = LAYER.checks(
    MISTAKES,
    "One head of the shipped model's attention, on the activations it sees",
    "Heads of small random models, against the reference")
