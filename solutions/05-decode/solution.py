import torch
from torchtyping import TensorType


class Solution:
    def decode(self, token_ids: TensorType["T", int] | list[int], int_to_char: dict[int, str]) -> str:
        if isinstance(token_ids, torch.Tensor):
            token_ids = token_ids.flatten().tolist()
        return "".join(int_to_char[i] for i in token_ids)
