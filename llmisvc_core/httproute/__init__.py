"""The managed HTTPRoute: its expected shape, model-based routing and the InferencePool API-group
migration."""
