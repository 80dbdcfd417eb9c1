"""Maintainer-only tools (goldens and manifest regeneration)."""
