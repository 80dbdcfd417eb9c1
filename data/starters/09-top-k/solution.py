from torchtyping import TensorType


class Solution:
    def top_k_filter(
        self, logits: TensorType[..., "vocab_size", float], k: int
    ) -> TensorType[..., "vocab_size", float]:
        """Keep each row's k largest logits; set the others to -inf.

        logits: a float tensor of shape (vocab_size,) or (B, vocab_size); entries
            may be -inf. Each row is filtered on its own.
        k: how many tokens to keep per row (an int).

        Returns a new tensor of the same shape and dtype. A logit is kept, unchanged
        bit for bit, when it is >= the row's k-th largest logit, so every logit tied
        with the k-th largest is kept too; every other entry becomes -inf.
        k >= vocab_size keeps everything. The input is never changed.
        Raises ValueError when k < 1.
        """
        raise NotImplementedError("write top_k_filter(): see README.md")
