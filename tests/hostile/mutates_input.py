class Solution:
    def crop_context(self, context, context_length):
        context.zero_()  # changes the caller's tensor in place
        return context[:, -context_length:]
