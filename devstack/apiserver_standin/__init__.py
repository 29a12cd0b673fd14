"""A local Kubernetes API server stand-in over real HTTP, for tests, benchmarks and the dev stack.

The official ``kubernetes`` client and ``kubectl`` talk to it as to a cluster. Entry points:

* :mod:`apiserver_standin.testing` -- ``running_apiserver()`` (in-process, ephemeral port),
  ``running_gateway_controller()``, ``running_apiserver_process()``;
* :class:`apiserver_standin.server.StandinApiServer` -- ``.client``, ``.faults`` (fault rules),
  ``.counter`` (request counters), ``.install_crds()`` / ``.remove_crds()``;
* :class:`apiserver_standin.control.ControlClient` -- the same controls for a server in another process;
* ``llmisvc-router apiserver`` / ``python -m apiserver_standin apiserver`` -- the standalone server.

It is test and dev tooling: the product never imports it.
"""
