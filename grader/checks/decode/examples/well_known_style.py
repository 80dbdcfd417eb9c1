import torch


class Solution:
    def decode(self, token_ids, int_to_char):
        if torch.is_tensor(token_ids):
            token_ids = token_ids.reshape(-1).tolist()
        text = ""
        for token_id in token_ids:
            text += int_to_char[token_id]
        return text
