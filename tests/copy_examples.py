"""Run in a learners' copy by tests/test_release.py: every statement's `>>>` session
with `grader.play`'s names, as doctest runs it; a JSON object of the results on stdout.
"""

import doctest
import json
import re

from grader.play import examples
from grader.registry import problems

results = {}
for p in problems():
    text = p.statement.read_text(encoding="utf-8")
    blocks = re.findall(r"^```python\n(.*?)^```", text, re.S | re.M)
    session = "\n".join(b for b in blocks if b.lstrip().startswith(">>>"))
    names = examples(p.slug)
    test = doctest.DocTestParser().get_doctest(session, names, p.folder, str(p.statement), 0)
    said = []
    run = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    outcome = run.run(test, out=said.append)
    results[p.slug] = {"failed": outcome.failed, "attempted": outcome.attempted,
                       "report": "".join(said)[:1500]}
print(json.dumps(results))
