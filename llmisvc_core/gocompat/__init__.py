"""Go behaviour that KServe's output depends on: fmt quoting, net/url, encoding/json of the ingress config,
strategic merge and text/template. The layer just above ``naming``: it knows no object model."""
