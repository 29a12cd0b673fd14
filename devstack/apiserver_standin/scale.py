"""The ``scale`` subresource: an ``autoscaling/v1`` Scale view of a Deployment's (or a CRD's) replicas.

``kubectl scale`` and autoscalers read and write replicas through it. A Deployment's replicas are
``.spec.replicas`` / ``.status.replicas`` and its selector is printed from ``.spec.selector``; a CRD
names its own paths in ``subresources.scale``. A write changes only the replicas of the object.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from apiserver_standin import jsonpath
from apiserver_standin.errors import bad_request, invalid, stale_conflict
from apiserver_standin.objects import meta
from apiserver_standin.registry import ResourceInfo

Obj = dict[str, Any]


def selector_string(selector: Any) -> str:
    """A label selector as its canonical string (``a=b,c in (d,e)``), as the API server prints it."""
    if isinstance(selector, str):
        return selector
    if not isinstance(selector, dict):
        return ""
    parts = [f"{k}={v}" for k, v in sorted((selector.get("matchLabels") or {}).items())]
    for expression in selector.get("matchExpressions") or []:
        key, op, values = expression.get("key"), expression.get("operator"), expression.get("values") or []
        words = {"In": "in", "NotIn": "notin"}
        if op in words:
            parts.append(f"{key} {words[op]} ({','.join(sorted(values))})")
        elif op == "Exists":
            parts.append(str(key))
        elif op == "DoesNotExist":
            parts.append(f"!{key}")
    return ",".join(sorted(parts))


def scale_of(info: ResourceInfo, obj: Obj) -> Obj:
    spec_path, status_path, selector_path = info.scale or ("", "", "")
    m = meta(obj)
    status: Obj = {"replicas": jsonpath.first(obj, status_path) or 0}
    selector = jsonpath.first(obj, selector_path) if selector_path else None
    if selector:
        status["selector"] = selector_string(selector)
    keep = ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {k: m[k] for k in keep if k in m},
        "spec": {"replicas": jsonpath.first(obj, spec_path) or 0},
        "status": status,
    }


def with_replicas(info: ResourceInfo, obj: Obj, scale: Any) -> Obj:
    """``obj`` with the replicas ``scale`` asks for; 422 for a negative or non-integer count."""
    if not isinstance(scale, dict):
        raise bad_request("the body of the request must be a Scale object")
    replicas = (scale.get("spec") or {}).get("replicas", 0)
    name = str(meta(obj).get("name", ""))
    if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
        why = f"Invalid value: {replicas}: must be greater than or equal to 0"
        raise invalid("Scale", "autoscaling", name, [("spec.replicas", why)])
    wanted_rv = (scale.get("metadata") or {}).get("resourceVersion")
    if wanted_rv and str(wanted_rv) != meta(obj).get("resourceVersion"):
        raise stale_conflict(info.group, info.plural, name)
    keys = [k for k in (info.scale or ("",))[0].split(".") if k]
    return _set(obj, keys, replicas)


def _set(node: Obj, keys: list[str], value: Any) -> Obj:
    if len(keys) == 1:
        return {**node, keys[0]: value}
    child = node.get(keys[0])
    return {**node, keys[0]: _set(child if isinstance(child, dict) else {}, keys[1:], value)}


def transform(info: ResourceInfo, change: Callable[[Obj], Any]) -> Callable[[Obj | None], Obj]:
    """A store transform: ``change`` maps the current Scale to the wanted one."""

    def apply(current: Obj | None) -> Obj:
        assert current is not None  # the store answers 404 before calling a subresource transform
        return with_replicas(info, dict(current), change(scale_of(info, current)))

    return apply
