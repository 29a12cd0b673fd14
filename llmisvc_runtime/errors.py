"""The one error type of a process that cannot start."""

from __future__ import annotations

from llmisvc_runtime import exit_codes


class StartupError(Exception):
    """A process could not start: a one-line message naming the setting, file, address or namespace
    and what to do, and the exit status of its class (:mod:`llmisvc_runtime.exit_codes`)."""

    def __init__(self, message: str, code: int = exit_codes.UNAVAILABLE) -> None:
        super().__init__(message)
        self.code = code


def first_line(err: BaseException) -> str:
    text = str(err).strip() or type(err).__name__
    return text.splitlines()[0]
