"""What every command shares: exit codes and the usage error."""

from __future__ import annotations

EXIT_PASS, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """A mistake in how the command was called: exit code 2 and one line."""
