import sys


class Solution:
    def crop_context(self, context, context_length):
        print("debugging", context.shape)
        print("x" * 100_000)  # a flood of output must not break the grader
        sys.stdin.read()
        return context[:, -context_length:]
