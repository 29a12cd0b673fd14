"""Running until SIGINT/SIGTERM: an asyncio event set by either signal."""

from __future__ import annotations

import asyncio
import signal


def stop_event() -> asyncio.Event:
    """An event set on SIGINT or SIGTERM (call from inside the running loop)."""
    event = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, event.set)
    return event
