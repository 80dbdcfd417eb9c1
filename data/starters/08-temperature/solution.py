from torchtyping import TensorType


class Solution:
    def apply_temperature(
        self, logits: TensorType[..., "vocab_size", float], temperature: float
    ) -> TensorType[..., "vocab_size", float]:
        """Scale logits by a sampling temperature.

        logits: a float tensor of shape (vocab_size,) or (B, vocab_size); entries
            may be -inf (tokens already ruled out).
        temperature: a number; > 0 to sharpen (< 1) or flatten (> 1) the distribution.

        Returns a new tensor of the same shape and dtype: logits / temperature.
        The input is never changed. Raises ValueError, with a message that says to
        use greedy decoding instead, when temperature <= 0.
        """
        raise NotImplementedError("write apply_temperature(): see README.md")
