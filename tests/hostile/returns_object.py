class Solution:
    def crop_context(self, *args):
        return object()
