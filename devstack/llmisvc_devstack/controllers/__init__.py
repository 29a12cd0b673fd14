"""What a cluster with a gateway implementation and KServe's workload reconciler would write, for a control
plane that has neither: the simulated Gateway API controller (:mod:`.gateway`) and the simulated workload
controller (:mod:`.workload`). Both are ordinary clients of any API server (the official ``kubernetes``
client, list+watch caches), run in-process by tests or as their own process (``python -m
llmisvc_devstack.controllers``)."""
