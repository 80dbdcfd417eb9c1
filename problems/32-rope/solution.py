import torch  # noqa: F401 - torch.arange, torch.cat, .cos() and .sin() make the rotation
from torchtyping import TensorType


class Solution:
    def apply_rope(self, x: TensorType["B", "H", "T", "head_dim", float], start: int = 0,
                   base: float = 10000.0) -> TensorType["B", "H", "T", "head_dim", float]:
        """Rotate each head's queries (or keys) by their positions: rotary position embeddings.

        x: (B, H, T, head_dim) float32, head_dim even. Position t of x is the token at
            position start + t (start > 0 when a KV cache holds the earlier tokens).
        base: the frequencies are theta_i = base ** (-2 * i / head_dim), i = 0 .. head_dim/2 - 1.

        Dimension i is paired with dimension i + head_dim / 2 (the two halves, as Llama in
        Hugging Face transformers and GPT-NeoX pair them), and each pair (a, b) at position p
        is turned by the angle p * theta_i: (a cos - b sin, a sin + b cos).
        Returns a tensor of x's shape and dtype.
        """
        raise NotImplementedError("write apply_rope(): see README.md")
