import torch


class Solution:
    def sample(self, probs, generator, initial_state):
        next_token = torch.multinomial(probs, num_samples=1, generator=generator)
        generator.set_state(initial_state)
        return next_token
