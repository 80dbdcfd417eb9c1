"""Each problem's grading folder: its check module, its known mistakes and any helper
only its checks use (see pytest.ini). Importing a check module through this package
hands it its problem (grader/grading/contracts/declaring.py)."""

from grader.grading.contracts.declaring import install

install()
