"""The worker process a submission runs in, and the protocol to it."""
