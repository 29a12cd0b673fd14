"""Steps 2 and 3 of a pass: platform preconditions (are the kinds served?) and reference validation (do
the Gateways and HTTPRoutes the service names exist?)."""
