"""Problem 3's check that softmax is written by hand: it reads the file as Python does,
and a library softmax under another name or encoding, or looked up as the code runs,
fails it; the reference passes."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader import paths
from grader.grading.judging.written_by_hand import MAX_SOURCE_BYTES, library_softmax

REFERENCE = (paths.ROOT / "solutions" / "03-softmax" / "solution.py").read_bytes()
LIBRARY = b"""import torch

class Solution:
    def softmax(self, logits):
        return torch.softmax(logits, dim=-1)
"""

UNSEEN_ELSEWHERE = {
    "plain": (LIBRARY, "solution.py:5 uses softmax"),
    # The coding line makes the file valid to the worker's import; read as UTF-8, it was
    # not, and the check used to pass it unread.
    "latin-1": (b"# -*- coding: latin-1 -*-\n# caf\xe9\n" + LIBRARY, "solution.py:7 uses softmax"),
    "alias": (b"from torch import softmax as s\n\nclass Solution:\n"
              b"    def softmax(self, logits):\n        return s(logits, dim=-1)\n",
              "solution.py:1 uses softmax"),
    "module-alias": (b"import torch.nn.functional as F\nfrom torch.nn.functional import "
                     b"log_softmax as ls\n", "solution.py:2 uses log_softmax"),
    "looked-up": (b"import torch\n\nclass Solution:\n    def softmax(self, logits):\n"
                  b"        return getattr(torch, 'soft' + 'max')(logits, dim=-1)\n",
                  "solution.py:5 uses getattr, which looks a name up as the code runs"),
    "named-in-a-string": (b"import operator\nimport torch\n\nclass Solution:\n"
                          b"    def softmax(self, logits):\n"
                          b"        return operator.methodcaller('softmax', -1)(logits)\n",
                          "solution.py:6 uses methodcaller"),
    # A library's softmax as a module class or a distribution.
    "module-class": (b"import torch\n\nclass Solution:\n    def softmax(self, logits):\n"
                     b"        return torch.nn.Softmax(dim=-1)(logits)\n",
                     "solution.py:5 uses Softmax"),
    "distribution": (b"import torch\n\nclass Solution:\n    def softmax(self, logits):\n"
                     b"        return torch.distributions.Categorical(logits=logits).probs\n",
                     "solution.py:5 uses distributions"),
    "imported-class": (b"from torch.nn import LogSoftmax\n", "solution.py:1 uses LogSoftmax"),
    "dotted-string": (b"import pydoc\nf = pydoc.locate('torch.softmax')\n",
                      "solution.py:2 uses locate"),
    "dotted-string-alone": (b"NAME = 'torch.nn.functional.softmax'\n",
                            "solution.py:1 uses softmax"),
    # Code the check cannot read: another problem's file, or code held as bytes.
    "another-problems-file": (b"import sys\nfrom grader.reuse import solution_of\n"
                              b"Solution = sys.modules[solution_of('last-logits').__module__]"
                              b".Helper\n", "solution.py:2 uses solution_of"),
    "bytes": (b"import marshal\nCODE = b'\\x00softmax\\x00'\n", "solution.py:2 uses softmax"),
    # Not UTF-8, with no coding line: the worker's import lets it pass, python does not.
    "not-utf-8": (b"import torch\n# caf\xe9\n" + LIBRARY,
                  "solution.py is not UTF-8 text: line 2 holds the byte 0xe9"),
    # What would make the learner's own names trusted, undone.
    "star-import": (b"from torch.nn.functional import *\n\nclass Solution:\n"
                    b"    def softmax(self, logits):\n        return softmax(logits, -1)\n",
                    "solution.py:1 imports * from torch.nn.functional"),
    "self-rebound": (b"import torch\n\nclass Solution:\n    def softmax(self, logits):\n"
                     b"        self = torch\n        return self.softmax(logits, -1)\n",
                     "solution.py:6 uses softmax"),
    "static-method": (b"class Solution:\n    @staticmethod\n    def softmax(logits):\n"
                      b"        return logits.softmax(-1)\n", "solution.py:4 uses softmax"),
    "a-library-base": (b"import torch\n\nclass T(torch.Tensor):\n    pass\n\n"
                       b"class Solution:\n    def softmax(self, logits):\n"
                       b"        return T(logits).softmax(-1)\n", "solution.py:8 uses softmax"),
    "instance-rebound": (b"import torch\n\nclass Solution:\n    pass\n\ns = Solution()\n"
                         b"s = torch\nY = s.softmax\n", "solution.py:8 uses softmax"),
    "main-made-to-run": (b"import torch\n__name__ = '__main__'\n"
                         b"if __name__ == '__main__':\n    f = torch.softmax\n",
                         "solution.py:4 uses softmax"),
    "members-listed": (b"import inspect\nimport torch\nF = dict(inspect.getmembers(torch))\n",
                       "solution.py:3 uses getmembers"),
    # A method reached through its class runs on any object: self may be a tensor.
    "self-a-tensor": (b"import torch.nn.functional as F\n\nclass Solution:\n"
                      b"    def softmax(self, logits):\n        return Solution.go(F, logits)\n\n"
                      b"    def go(self, logits):\n        return self.softmax(logits, dim=-1)\n",
                      "solution.py:8 uses softmax"),
    "a-pattern-attribute": (b"import torch.nn.functional as F\n\nmatch F:\n"
                            b"    case object(softmax=f):\n        pass\n",
                            "solution.py:4 uses softmax"),
    # What makes a __main__ block run on import names __name__ a second time.
    "main-imported": (b"from __main__ import __name__\nif __name__ == '__main__':\n"
                      b"    import torch\n    f = torch.softmax\n", "solution.py:4 uses softmax"),
    "main-captured": (b"match '__main__':\n    case __name__:\n        pass\n"
                      b"if __name__ == '__main__':\n    import torch\n    f = torch.softmax\n",
                      "solution.py:6 uses softmax"),
    "main-from-a-frame": (b"import sys\nsys._getframe().f_globals.update({'__na' + 'me__': "
                          b"'__main__'})\n", "solution.py:2 uses f_globals"),
    "unparsable": (b"class Solution:\n    def softmax(self, logits)\n",
                   "could not be read to check that softmax is written by hand: SyntaxError"),
    "huge": (b"#" * (MAX_SOURCE_BYTES + 1), "could not be read to check that softmax is "
             "written by hand: larger than 1 MB"),
}


@pytest.mark.parametrize("name", UNSEEN_ELSEWHERE)
def test_a_library_softmax_fails_however_it_is_written(name: str, tmp_path: Path) -> None:
    source, says = UNSEEN_ELSEWHERE[name]
    path = tmp_path / "solution.py"
    path.write_bytes(source)
    assert says in library_softmax(path)


@pytest.mark.parametrize("prefix", [b"", b"\xef\xbb\xbf", b"# -*- coding: latin-1 -*-\n"],
                         ids=["utf-8", "bom", "latin-1"])
def test_the_reference_passes_in_any_encoding_python_reads(prefix: bytes, tmp_path: Path) -> None:
    path = tmp_path / "solution.py"
    path.write_bytes(prefix + REFERENCE)
    assert library_softmax(path) == ""


def test_a_learners_own_names_and_prose_are_not_a_library_softmax(tmp_path: Path) -> None:
    """A class of the learner's own named Softmax, a helper named stable_softmax and a
    docstring that speaks of softmax are the learner's code, not a library's."""
    path = tmp_path / "solution.py"
    path.write_bytes(b"""import torch


class Softmax:
    \"\"\"softmax by hand: exp, max and sum.\"\"\"

    def __call__(self, logits):
        return stable_softmax(logits)


def stable_softmax(x):
    shifted = x - x.max(dim=-1, keepdim=True).values
    e = torch.exp(shifted)
    return e / e.sum(dim=-1, keepdim=True)


class Solution:
    def softmax(self, logits):
        return Softmax()(logits)
""")
    assert library_softmax(path) == ""


BODY = b"""        shifted = logits - logits.max(dim=-1, keepdim=True).values
        exps = torch.exp(shifted)
"""
OWN_NAMES = {
    "a-variable": b"import torch\n\nclass Solution:\n    def softmax(self, logits):\n" + BODY
                  + b"        softmax = exps / exps.sum(dim=-1, keepdim=True)\n"
                    b"        return softmax\n",
    "a-module-helper": b"import torch\n\ndef softmax(logits):\n" + BODY
                       + b"        return exps / exps.sum(dim=-1, keepdim=True)\n\n"
                         b"class Solution:\n    def softmax(self, logits):\n"
                         b"        return softmax(logits)\n",
    # A try-out at the end of the file, as the statement's example runs it, comparing with
    # torch's: an import never runs it.
    "a-main-block": b"import torch\n\nclass Solution:\n    def softmax(self, logits):\n"
                    + BODY + b"        return exps / exps.sum(dim=-1, keepdim=True)\n\n"
                    b"if __name__ == '__main__':\n    s = Solution()\n"
                    b"    x = torch.tensor([[1.0, 2.0, 3.0]])\n"
                    b"    print(s.softmax(x), Solution().softmax(x), torch.softmax(x, -1))\n",
}


@pytest.mark.parametrize("name", OWN_NAMES)
def test_what_the_learner_named_softmax_is_their_own(name: str, tmp_path: Path) -> None:
    """A variable and a helper named softmax, and a try-out under `if __name__ ==
    "__main__"` calling the class's own, are not a library softmax."""
    path = tmp_path / "solution.py"
    path.write_bytes(OWN_NAMES[name])
    compile(OWN_NAMES[name], "solution.py", "exec")
    assert library_softmax(path) == ""


def test_the_learners_copy_reads_the_file_as_the_kata_does(tmp_path: Path) -> None:
    """The practice grade runs the same check, in the grader's process, after the
    file's cases: the copy no longer passes a library softmax the kata fails."""
    from grader.learner.practice import read_checks
    from grader.registry import find

    path = tmp_path / "solution.py"
    path.write_bytes(LIBRARY)
    (failed,) = read_checks(find("softmax"), path)
    assert failed.status == "fail" and "solution.py:5 uses softmax" in failed.message
    assert failed.name == "Written by hand, without a library softmax"
    path.write_bytes(REFERENCE)
    assert [r.status for r in read_checks(find("softmax"), path)] == ["pass"]
    assert read_checks(find("top-k"), path) == []
