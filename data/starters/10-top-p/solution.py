from torchtyping import TensorType


class Solution:
    def top_p_filter(
        self,
        logits: TensorType[..., "vocab_size", float],
        top_p: float,
        min_tokens_to_keep: int = 1,
    ) -> TensorType[..., "vocab_size", float]:
        """Nucleus filtering: keep the most likely tokens that hold top_p of the probability.

        logits: a float tensor of shape (vocab_size,) or (B, vocab_size); entries
            may be -inf (already filtered out). Each row is filtered on its own.
        top_p: a number in [0, 1].
        min_tokens_to_keep: at least this many of the most likely tokens always stay.

        Per row: sort the logits ascending, take the cumulative sum of their softmax,
        and remove every token whose cumulative probability is <= 1 - top_p; then put
        back the min_tokens_to_keep most likely tokens if they were removed.
        Returns a new tensor of the same shape and dtype: kept logits unchanged bit
        for bit, removed ones -inf. The input is never changed.
        Raises ValueError when top_p is outside [0, 1].
        """
        raise NotImplementedError("write top_p_filter(): see README.md")
