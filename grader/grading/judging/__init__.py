"""Judging a learner's answer against the expected one.

Any result (any_result.py), filtered logits (filtered_logits.py), generated text step by
step (generated_text.py), a KV cache's model calls (cached_steps.py), a training loop's
learning rates (schedule_rates.py), what a file's text says it calls (written_by_hand.py),
and the models' refusals in any language (refusals.py).
"""
