"""The pinned Kubernetes control plane (kube-apiserver, etcd, kube-controller-manager) that tests,
benchmarks, the chaos suite and ``llmisvc-router dev`` run on: :class:`ControlPlane`."""

from llmisvc_devstack.controlplane.launcher import ControlPlane, write_kubeconfig

__all__ = ["ControlPlane", "write_kubeconfig"]
