import torch
from torchtyping import TensorType


class Solution:
    def sample(
        self,
        probs: TensorType[1, "vocab_size", float],
        generator: torch.Generator,
        initial_state: torch.Tensor,
    ) -> TensorType[1, 1, int]:
        next_token = torch.multinomial(probs, num_samples=1, generator=generator)
        # Putting the generator back means every step draws with the same
        # random numbers, so the whole run is reproducible step by step.
        generator.set_state(initial_state)
        return next_token
