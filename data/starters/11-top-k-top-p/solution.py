from torchtyping import TensorType


class Solution:
    def top_k_top_p_filtering(
        self,
        logits: TensorType[..., "vocab_size", float],
        top_k: int = 0,
        top_p: float = 1.0,
        filter_value: float = float("-inf"),
        min_tokens_to_keep: int = 1,
    ) -> TensorType[..., "vocab_size", float]:
        """The classic helper: top-k filtering, then top-p (nucleus) filtering.

        logits: a float tensor of shape (vocab_size,) or (B, vocab_size).
        top_k: if > 0, keep only the max(top_k, min_tokens_to_keep) largest logits
            per row (every logit tied with the last one kept stays); 0 turns it off.
        top_p: if < 1.0, then keep the most likely tokens of what top-k left, by the
            top-p rule (sort ascending, cumulative softmax, remove where it is
            <= 1 - top_p, keep at least min_tokens_to_keep).
        filter_value: what removed entries are set to.
        min_tokens_to_keep: the least number of tokens either step leaves.

        Returns a new tensor of the same shape and dtype; kept logits are unchanged
        bit for bit. The input is never changed.
        """
        raise NotImplementedError("write top_k_top_p_filtering(): see README.md")
