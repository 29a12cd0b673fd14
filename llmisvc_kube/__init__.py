"""The product's one way to the Kubernetes API: the client, the REST calls, the watch stream, and one
classification of what a failed call means.

Modules: :mod:`llmisvc_kube.api` (what callers need, with no ``kubernetes`` import: the
:class:`~llmisvc_kube.api.ClusterApi` protocol, :class:`~llmisvc_kube.api.ApiError` and its
:class:`~llmisvc_kube.api.Failure` — absent, transient, conflict, rejected — and the request timeouts),
:mod:`llmisvc_kube.client` (the official client: loading it, the REST calls of ``KubeClusterApi``, the
reachability check), :mod:`llmisvc_kube.stream` (a collection's list and watch stream, for the cluster
cache's loops) and :mod:`llmisvc_kube.telemetry` (a span and a count per request). Only this package
imports the ``kubernetes`` client (an import-linter contract); the activities and the cluster cache both
act on the same :class:`~llmisvc_kube.api.Failure`.
"""
