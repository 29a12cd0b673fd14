"""URL discovery (spec 3.7): the Gateways behind a route, the URLs they expose and what the service
advertises from them (``status.url``, ``addresses``, ``router.gateways``)."""
