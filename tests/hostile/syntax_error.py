class Solution:
    def crop_context(self, context, context_length)
        return context[:, -context_length:]
