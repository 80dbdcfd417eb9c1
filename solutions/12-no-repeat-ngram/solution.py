import torch
from torchtyping import TensorType


class Solution:
    def no_repeat_ngram(
        self,
        logits: TensorType[..., "vocab_size", float],
        token_ids: list[int] | TensorType["B", "T", int],
        n: int,
    ) -> TensorType[..., "vocab_size", float]:
        # One list of ids per row of logits: a batch comes as a (B, T) tensor.
        rows = token_ids.tolist() if logits.dim() == 2 else [list(token_ids)]
        banned = torch.zeros(len(rows), logits.shape[-1], dtype=torch.bool)
        for row, ids in enumerate(rows):
            # The next token would complete the n-gram ids[start:] + [next].
            start = len(ids) - (n - 1)
            # ids[i:i + n] for i < start are the complete n-grams so far; when one
            # begins with the same n - 1 tokens, its last token would repeat it.
            for i in range(max(start, 0)):
                if ids[i:i + n - 1] == ids[start:]:
                    banned[row, ids[i + n - 1]] = True
        # masked_fill builds a new tensor: the caller's logits stay as they were.
        return logits.masked_fill(banned.view(logits.shape), float("-inf"))
