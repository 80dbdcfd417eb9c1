"""Returns odd values: ones the protocol cannot carry, each of a kind encode() must
refuse, and ones it carries that no judge expects where the answer is a tensor.

KIND picks one (the tests set it per problem).
"""

import torch

KIND = "nesting-600"


class Unprintable(Exception):
    def __str__(self):
        raise RuntimeError("no message for you")


def odd_value(args):
    if KIND == "nesting-600":
        value = 1
        for _ in range(600):
            value = [value]
        return value
    if KIND == "string-100mb":
        return "x" * (100 << 20)
    if KIND == "complex-tensor":
        return torch.zeros(2, dtype=torch.complex64)
    if KIND == "huge-int":
        return 10**5000
    if KIND == "a-float":  # a tensor compared with it gives a tensor, not a truth
        return 1.5
    if KIND == "a-long-int":  # 4001 digits: sent, and too long for any tensor
        return 10**4000
    if KIND == "a-nan-token":  # no token id: int() of it raises
        return torch.full((1, 1), float("nan"))
    if KIND == "unprintable-error":
        raise Unprintable()
    if KIND == "argument-made-unreadable":
        # The grader reads its tensor arguments back after the call.
        for arg in args:
            if isinstance(arg, torch.Tensor):
                arg.data = torch.zeros(2, dtype=torch.complex64)
        return None
    raise ValueError(KIND)


class Solution:
    def crop_context(self, *args, **kwargs):
        return odd_value(args)
