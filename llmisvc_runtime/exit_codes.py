"""One exit status per class of error, the same for every ``llmisvc-router`` command."""

from __future__ import annotations

OK = 0
#: The command ran and what it reports is a failure (e.g. ``reconcile``: the pass did not reconcile).
FAILED = 1
#: Bad arguments, input file, setting or kubeconfig: fix the command line or the configuration.
USAGE = 2
#: No such LLMInferenceService (or, for ``status``, no workflow for it yet).
NOT_FOUND = 3
#: The Kubernetes API or Temporal cannot be reached, or refused the connection (address, namespace, TLS,
#: credentials), or a port to listen on is taken.
UNAVAILABLE = 4
#: Ctrl-C.
INTERRUPTED = 130

EPILOG = """\
exit status:
  0    success
  1    the command ran and reports a failure (e.g. a pass that did not reconcile)
  2    bad arguments, input file, setting or kubeconfig
  3    no such LLMInferenceService (status: or no workflow for it yet)
  4    the Kubernetes API or Temporal unreachable or refusing (address, namespace, TLS, credentials),
       or a port to listen on taken
  130  interrupted (Ctrl-C)
"""
