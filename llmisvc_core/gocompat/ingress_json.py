"""The ``ingress`` key of ``inferenceservice-config`` decoded as KServe decodes it (v1beta1.IngressConfig).

Go's ``encoding/json`` decodes into typed fields: a value of the wrong JSON type is an error naming the
field and its Go type (``"enableGatewayApi": "true"`` is refused, not read as false), ``null`` leaves a
field unset, unknown keys are ignored and keys match field names case-insensitively (an exact match
wins). :func:`decode` returns the fields KServe declares, each with a value of its Go type.
"""

from __future__ import annotations

import json
from typing import Any

from llmisvc_core.errors import InvalidInputError

#: ``IngressConfig``'s JSON fields and their Go types (``*string`` prints as ``string``).
FIELDS: dict[str, str] = {
    "enableGatewayApi": "bool",
    "kserveIngressGateway": "string",
    "ingressGateway": "string",
    "knativeLocalGatewayService": "string",
    "localGateway": "string",
    "localGatewayService": "string",
    "ingressDomain": "string",
    "ingressClassName": "string",
    "additionalIngressDomains": "[]string",
    "domainTemplate": "string",
    "urlScheme": "string",
    "enableLLMInferenceServiceTLS": "bool",
    "disableIstioVirtualHost": "bool",
    "pathTemplate": "string",
    "disableIngressCreation": "bool",
    "disableHTTPRouteTimeout": "bool",
    "modelBasedRoutingHeaderName": "string",
    "modelBasedRoutingMode": "string",
    "loraModelRoutingStrategy": "string",
    "defaultDeploymentMode": "string",
    "deploymentRolloutStrategy": "object",
}
_FOLDED = {name.lower(): name for name in FIELDS}


class IngressJSONError(InvalidInputError):
    """The text is not JSON of ``IngressConfig``'s shape; the message reads like Go's."""


def decode(raw: str) -> dict[str, Any]:
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as err:
        raise IngressJSONError(str(err)) from err
    if not isinstance(data, dict):
        raise IngressJSONError(
            f"json: cannot unmarshal {_json_type(data)} into Go value of type v1beta1.IngressConfig"
        )
    decoded: dict[str, Any] = {}
    for key, value in data.items():
        name = key if key in FIELDS else _FOLDED.get(key.lower())
        if name is None or value is None:
            continue
        _check(name, FIELDS[name], value)
        decoded[name] = value
    return decoded


def _check(name: str, go_type: str, value: Any) -> None:
    wanted = {"bool": "bool", "string": "string", "[]string": "array", "object": "object"}[go_type]
    if _json_type(value) != wanted:
        raise IngressJSONError(_type_error(value, name, go_type))
    if go_type == "[]string":
        for item in value:
            if item is not None and _json_type(item) != "string":
                raise IngressJSONError(_type_error(item, name, "string"))


def _type_error(value: Any, name: str, go_type: str) -> str:
    kind = _json_type(value)
    return f"json: cannot unmarshal {kind} into Go struct field IngressConfig.{name} of type {go_type}"


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, dict) else "null"
