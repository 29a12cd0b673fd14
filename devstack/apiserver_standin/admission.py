"""What a write must pass before it is stored: the CRD's schema and CEL rules, or the built-in checks.

Custom resources go through :mod:`apiserver_standin.schema` (prune, default, validate) and
:mod:`apiserver_standin.cel_rules`, with the schema of the version the request addressed. Built-in
kinds get the checks of kube-apiserver's own validation that the router's writes depend on: a
Service's ports, a Deployment's selector against its template, DNS-label names. Any failure is one
422 Invalid listing every cause, as the real server answers.
"""

from __future__ import annotations

import re
from typing import Any

from apiserver_standin import cel_rules, schema
from apiserver_standin.errors import invalid
from apiserver_standin.objects import meta
from apiserver_standin.registry import ResourceInfo

Obj = dict[str, Any]
_LABEL_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS1035_RE = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_LABEL_MESSAGE = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
    "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
_DNS1035_MESSAGE = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', "
    "regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)


def admit(info: ResourceInfo, obj: Obj, old: Obj | None) -> Obj:
    """``obj`` as it would be stored (pruned and defaulted for custom resources); 422 if invalid."""
    errors: schema.Errors = []
    if info.schema is not None:
        obj = schema.normalize(obj, info.schema, root=True)
        schema.validate(obj, info.schema, "", errors)
        if not errors:  # CEL sees only values of the declared types, as on the real server
            cel_rules.check(obj, old if old is not None else cel_rules.MISSING, info.schema, "", errors)
    else:
        errors.extend(_builtin_errors(info, obj))
    if errors:
        raise invalid(info.kind, info.group, str(meta(obj).get("name", "")), list(errors))
    return obj


def _builtin_errors(info: ResourceInfo, obj: Obj) -> schema.Errors:
    if info.group_resource == ("", "namespaces"):
        return _label_name(obj, _LABEL_RE, _LABEL_MESSAGE)
    if info.group_resource == ("", "services"):
        return _label_name(obj, _DNS1035_RE, _DNS1035_MESSAGE) + service_errors(obj.get("spec") or {})
    if info.group_resource == ("apps", "deployments"):
        return deployment_errors(obj.get("spec") or {})
    return []


def _label_name(obj: Obj, pattern: re.Pattern[str], why: str) -> schema.Errors:
    name = str(meta(obj).get("name", ""))
    if len(name) > 63:
        return [("metadata.name", f'Invalid value: "{name}": must be no more than 63 characters')]
    if not pattern.match(name):
        return [("metadata.name", f'Invalid value: "{name}": {why}')]
    return []


def service_errors(spec: Obj) -> schema.Errors:
    """A ClusterIP/NodePort/LoadBalancer Service needs ports (a headless one may have none)."""
    errors: schema.Errors = []
    ports = spec.get("ports") or []
    kind = spec.get("type") or "ClusterIP"
    if not ports and kind != "ExternalName" and spec.get("clusterIP") != "None":
        errors.append(("spec.ports", "Required value"))
    for index, port in enumerate(ports):
        where = f"spec.ports[{index}]"
        number = port.get("port")
        if not isinstance(number, int) or not 1 <= number <= 65535:
            errors.append((f"{where}.port", f"Invalid value: {schema.show(number)}: {_PORT_RANGE}"))
        if len(ports) > 1 and not port.get("name"):
            errors.append((f"{where}.name", "Required value"))
    return errors


_PORT_RANGE = "must be between 1 and 65535, inclusive"


def deployment_errors(spec: Obj) -> schema.Errors:
    """A Deployment needs a selector that matches its pod template's labels, and containers."""
    errors: schema.Errors = []
    selector = spec.get("selector")
    template = spec.get("template") or {}
    labels = (template.get("metadata") or {}).get("labels") or {}
    if not selector:
        errors.append(("spec.selector", "Required value"))
    elif not selector.get("matchLabels") and not selector.get("matchExpressions"):
        errors.append(("spec.selector", 'Invalid value: "{}": empty selector is invalid for deployment'))
    elif any(labels.get(k) != v for k, v in (selector.get("matchLabels") or {}).items()):
        shown = schema.show(labels)
        errors.append(
            (
                "spec.template.metadata.labels",
                f"Invalid value: {shown}: `selector` does not match template `labels`",
            )
        )
    if not (template.get("spec") or {}).get("containers"):
        errors.append(("spec.template.spec.containers", "Required value"))
    return errors
