"""The command line's one error convention: a command that fails raises, ``llmisvc_router.cli.main``
prints ``llmisvc-router COMMAND: message`` as one line on stderr and exits with the error's status.

A command's own failures are :class:`CommandError`; a process that cannot start raises
:class:`llmisvc_runtime.errors.StartupError` (settings, kubeconfig, connections, a port), caught the same
way."""

from __future__ import annotations

from llmisvc_runtime import exit_codes


class CommandError(Exception):
    """A one-line, user-facing failure of a command (exit status in ``code``)."""

    def __init__(self, message: str, code: int = exit_codes.FAILED) -> None:
        super().__init__(message)
        self.code = code
