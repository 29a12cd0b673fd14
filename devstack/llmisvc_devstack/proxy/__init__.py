"""A fault-injecting, counting reverse proxy between the product and a real kube-apiserver.

A real API server cannot be told to fail a request, hang one or cut a watch, nor say how many
requests each client made: tests and the chaos suite put this proxy in front of it instead, and
point the product at the proxy. It speaks TLS on both sides, passes every request and response
through unchanged (bearer tokens included, so identity and RBAC are the real server's), streams watch
events one by one, and offers the fault rules and request counters of the retired API stand-in under
the same names, in process (:class:`ApiProxy`) or over its control endpoint (:class:`ControlClient`).
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
