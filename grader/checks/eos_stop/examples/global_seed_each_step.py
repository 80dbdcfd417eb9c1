import torch


class Solution:
    def generate_until(self, model, context, max_new_tokens, context_length, int_to_char, eos_id,
                       stop=()):
        generator = torch.manual_seed(0)
        initial_state = generator.get_state()
        out = ""
        steps = 0
        while steps < max_new_tokens:
            steps += 1
            logits = model(context[:, -context_length:])[0, -1]
            probs = torch.exp(logits - logits.max())
            probs = probs / probs.sum()
            torch.manual_seed(0)
            token = torch.multinomial(probs, 1)
            if token.item() == eos_id:
                return out
            context = torch.cat([context, token.view(1, 1)], dim=1)
            out += int_to_char[token.item()]
            matches = [s for s in stop if out[-len(s):] == s]
            if matches:
                return out[:len(out) - len(max(matches, key=len))]
        return out
