import torch
from torchtyping import TensorType


class Solution:
    def sample(
        self,
        probs: TensorType[1, "vocab_size", float],
        generator: torch.Generator,
        initial_state: torch.Tensor,
    ) -> TensorType[1, 1, int]:
        """Draw one token id at random from `probs`, then rewind `generator`.

        probs: a (1, vocab_size) float tensor of probabilities (>= 0, summing to 1).
        generator: the random number generator to draw with (not the global one).
        initial_state: a state from generator.get_state(); after drawing, put the
            generator back to it with generator.set_state(initial_state).

        Returns a (1, 1) LongTensor holding the drawn token id.
        """
        raise NotImplementedError("write sample(): see README.md")
