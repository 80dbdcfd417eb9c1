"""Maintainer-only tools: goldens and manifest regeneration, catalogs, and which
known mistakes the drawn examples reach."""
