"""The conditions judged from what a pass sees: InferencePoolReady, GatewaysReady and HTTPRoutesReady
(spec 3.8). The judges read no world: the caller passes the objects it read."""
