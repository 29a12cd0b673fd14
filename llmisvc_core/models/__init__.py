"""The object models: the parts of Kubernetes, Gateway API, InferencePool and LLMInferenceService objects
the router reads and writes, and the predicates every rule asks of a service."""
