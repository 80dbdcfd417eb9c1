class Solution:
    def window(self, data, context_length, i):
        count = data.shape[0] - context_length
        if not 0 <= i < count:
            raise ValueError(f"i must be in [0, {count})")
        chunk = data.narrow(0, i, context_length + 1)
        return chunk[:-1], chunk[1:]
