from torchtyping import TensorType


class Solution:
    def apply_temperature(
        self, logits: TensorType[..., "vocab_size", float], temperature: float
    ) -> TensorType[..., "vocab_size", float]:
        if temperature <= 0:
            # Dividing by 0 gives inf and nan; the limit of a temperature going to 0
            # is always taking the most likely token, which is greedy decoding.
            raise ValueError(
                f"temperature must be > 0, got {temperature}; "
                "for temperature 0, use greedy decoding (argmax) instead"
            )
        # Below 1 the gaps between logits grow and the distribution sharpens;
        # above 1 they shrink and it flattens. -inf stays -inf.
        return logits / temperature
