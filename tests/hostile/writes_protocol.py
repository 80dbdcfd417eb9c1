import os


class Solution:
    def crop_context(self, *args):
        # Writing junk to every open descriptor must not corrupt the grader.
        for fd in range(1, 20):
            try:
                os.write(fd, b"\x00\x00\x00\x05junk!")
            except OSError:
                pass
        return args[0]
