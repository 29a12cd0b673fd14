"""Replay tests: committed workflow histories replayed through the production replayer."""
