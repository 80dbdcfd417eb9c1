import torch
from torchtyping import TensorType


class Solution:
    def greedy(self, model, new_chars: int, context: TensorType[int], context_length: int, int_to_char: dict) -> str:
        ids = context[0].tolist()
        out = ""
        with torch.no_grad():
            for _ in range(new_chars):
                window = torch.tensor([ids[-context_length:]], dtype=torch.long)
                scores = model(window)[0, -1].tolist()
                best = 0
                for i, score in enumerate(scores):
                    if score > scores[best]:
                        best = i
                ids.append(best)
                out += int_to_char[best]
        return out
