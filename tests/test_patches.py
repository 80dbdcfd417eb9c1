"""The hand-written patches that turn a folder's base file into a learner's mistake."""

from __future__ import annotations

import pytest
from patches import PatchError, apply

BASE = """\
def generate(model, context):
    res = []
    for _ in range(3):
        logits = model(context)
        probs = softmax(logits[:, -1, :])
        res.append(sample(probs))

    for _ in range(3):
        res.append(0)
    return res
"""


def test_a_patch_replaces_lines_and_keeps_the_rest() -> None:
    patch = """
-        probs = softmax(logits[:, -1, :])
-        res.append(sample(probs))
+        res.append(logits[:, -1, :].argmax())
"""
    assert apply(patch, BASE) == BASE.replace(
        "        probs = softmax(logits[:, -1, :])\n        res.append(sample(probs))\n",
        "        res.append(logits[:, -1, :].argmax())\n")


def test_hunks_apply_in_order_and_context_places_an_insertion() -> None:
    patch = """
 def generate(model, context):
+    context = context[:, -8:]
@@ -10 +11 @@ pasted from diff -u: the numbers are ignored
-    return res
+    return context, res
"""
    lines = apply(patch, BASE).splitlines()
    assert lines[1] == "    context = context[:, -8:]"
    assert lines[-1] == "    return context, res"
    assert len(lines) == len(BASE.splitlines()) + 1


def test_an_empty_line_inside_a_hunk_is_an_empty_context_line() -> None:
    patch = """
         res.append(sample(probs))

-    for _ in range(3):
+    for _ in range(4):
"""
    assert "range(4)" in apply(patch, BASE)
    assert apply(patch, BASE).count("range(3)") == 1


def test_a_line_that_is_not_in_the_base_is_named() -> None:
    patch = """
         logits = model(context)
-        probs = softmax(logits[:, 0, :])
+        probs = softmax(logits[:, 1, :])
"""
    with pytest.raises(PatchError, match=r"hunk 1: line 'probs = softmax\(logits\[:, 0, :\]\)'"
                                         r" is not in the base after 'logits = model"):
        apply(patch, BASE)


def test_a_hunk_that_fits_twice_is_ambiguous() -> None:
    patch = """
-    for _ in range(3):
+    for _ in range(4):
"""
    with pytest.raises(PatchError, match="fits the base at lines 3, 8: add context lines"):
        apply(patch, BASE)


def test_hunks_out_of_order_are_refused() -> None:
    patch = """
-    return res
+    return None
@@
-    res = []
+    res = [1]
"""
    with pytest.raises(PatchError, match="hunk 2 is out of order"):
        apply(patch, BASE)


@pytest.mark.parametrize("patch, words", [
    ("", "changes nothing"),
    ("\n@@\n\n", "changes nothing"),
    ("+    print(res)\n", "only adds lines"),
    ("*    return res\n", "must start with ' ', '-' or '+'"),
])
def test_malformed_patches_are_refused(patch: str, words: str) -> None:
    with pytest.raises(PatchError, match=words.replace("+", r"\+")):
        apply(patch, BASE)
