"""A fault-injecting, counting reverse proxy between the product and a real kube-apiserver.

A real API server cannot be told to fail a request, hang one or cut a watch, nor say how many
requests each client made: tests and the chaos suite put this proxy in front of it instead, and
point the product at the proxy. It speaks TLS on both sides, passes every request and response
through unchanged (bearer tokens included, so identity and RBAC are the real server's), streams watch
events one by one, and offers the fault rules and request counters of the retired API stand-in under
the same names, in process (:class:`ApiProxy`) or over its control endpoint (:class:`ControlClient`).

In process (``tests/cluster.py`` starts one per test)::

    with ApiProxy(plane.url, ca_file=ca, certfile=cert, keyfile=key).start() as proxy:
        proxy.faults.inject(verb="create", resource="httproutes", status=500, times=1)
        ...  # the product's kubeconfig points at proxy.url
        assert proxy.counter.writes(user_agent="llmisvc-router/worker") == 1
        proxy.cut_watches()

As a process, for the chaos suite and benchmarks (it prints its URL, then serves until SIGTERM)::

    python -m llmisvc_devstack.proxy --upstream URL --ca-file CA --cert CERT --key KEY [--port P]

    control = ControlClient(url, ca_file=CA)
    control.add_fault(verb="watch", drop_watch_after=2, times=5, exclude_user_agent="chaos")
    control.count(verb="list", user_agent="llmisvc-router/")

Left out: protocol upgrades (``exec``/``attach``/``port-forward`` over SPDY or WebSocket) and HTTP/2.
"""

from llmisvc_devstack.proxy.control import ControlClient
from llmisvc_devstack.proxy.counters import RequestCounter, RequestRecord
from llmisvc_devstack.proxy.faults import FaultInjector, FaultRule
from llmisvc_devstack.proxy.requestinfo import RequestInfo
from llmisvc_devstack.proxy.server import ApiProxy

__all__ = [
    "ApiProxy",
    "ControlClient",
    "FaultInjector",
    "FaultRule",
    "RequestCounter",
    "RequestInfo",
    "RequestRecord",
]
