import torch
import torch.nn.functional as F


class Solution:
    def generate_until(self, model, context, max_new_tokens, context_length, int_to_char, eos_id,
                       stop=()):
        # Generate up to the end token first, then cut at the first stop string to end.
        generator = torch.Generator().manual_seed(0)
        initial_state = generator.get_state()
        ids = context[0].tolist()
        new = []
        while len(new) < max_new_tokens:
            window = torch.tensor([ids[-context_length:]])
            with torch.no_grad():
                probs = F.softmax(model(window)[0, -1].double(), dim=-1)
            token = int(torch.multinomial(probs, 1, generator=generator))
            generator.set_state(initial_state)
            if token == eos_id:
                break
            ids.append(token)
            new.append(token)
        text = "".join(int_to_char[t] for t in new)
        for end in range(1, len(text) + 1):
            hits = [s for s in stop if text[:end].endswith(s)]
            if hits:
                return text[:end - max(map(len, hits))]
        return text
