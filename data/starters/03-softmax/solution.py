from torchtyping import TensorType


class Solution:
    def softmax(self, logits: TensorType[..., "vocab_size", float]) -> TensorType[..., "vocab_size", float]:
        """Turn logits into probabilities along the last dimension, by hand.

        logits: a float tensor of any shape (..., vocab_size). Entries may be very
            large (e.g. 1e4) or -inf; each row has at least one finite entry.

        Returns a float tensor of the same shape: every entry in [0, 1], each slice
        along the last dimension summing to 1, with no nan or inf.
        Write it with torch.exp and a sum: torch.softmax and friends are off limits.
        """
        raise NotImplementedError("write softmax(): see README.md")
