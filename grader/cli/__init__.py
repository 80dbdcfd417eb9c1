"""The `gpt-kata` command."""
