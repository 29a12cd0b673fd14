"""Running the orchestrator: Temporal connection settings, the one worker factory, and the worker process."""
