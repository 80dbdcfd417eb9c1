class Solution:
    def crop_context(self, *args):
        while True:
            pass
