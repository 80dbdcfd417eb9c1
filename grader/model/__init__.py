"""The GPT, its corpus, training and the shipped files."""
