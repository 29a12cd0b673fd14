"""The chaos suite: faults, crashes and hostile input against the real processes (``make chaos``)."""
