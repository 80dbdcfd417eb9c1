class Solution:
    def train_bpe(self, text: str, vocab_size: int) -> list[tuple[int, int]]:
        """Learn byte-pair merges from `text` until the vocabulary has vocab_size ids.

        The vocabulary starts as the 256 byte values (ids 0 to 255) of the text's
        UTF-8 bytes. Each step counts every adjacent pair of the current ids (in
        "aaa" the pair a, a occurs twice), takes the most frequent pair (of equally
        frequent ones, the pair whose first occurrence comes first), and replaces
        its occurrences, left to right, by the next id: 256, 257, ... It stops at
        vocab_size ids, or sooner when fewer than two ids are left. Returns the
        merged pairs in the order they were learned: merges[i] made id 256 + i.
        Raises ValueError if vocab_size is below 256.
        """
        raise NotImplementedError("write train_bpe(): see README.md")

    def encode(self, text: str, merges: list[tuple[int, int]]) -> list[int]:
        """The ids of `text`: its UTF-8 bytes, with merges[0], merges[1], ... applied
        in that order, each to every occurrence left to right (merges[i] makes id
        256 + i). Returns a list of ints."""
        raise NotImplementedError("write encode(): see README.md")

    def decode(self, ids: list[int], merges: list[tuple[int, int]]) -> str:
        """The text of `ids`: the bytes each id stands for (id 256 + i stands for the
        bytes of merges[i]'s two ids, joined), all joined, then decoded as UTF-8
        with errors="replace". Returns a str."""
        raise NotImplementedError("write decode(): see README.md")
