"""Reading a cluster state file for ``plan``: multi-document YAML (or one ``kind: List``) of objects.

A file in JSON (``kubectl get -o json``) is read with the JSON parser: JSON is YAML, but a real cluster's
CustomResourceDefinitions carry their whole schemas (KServe's are about a megabyte each), and PyYAML's
pure-Python loader takes the better part of a minute over such a dump, where ``json`` takes a fraction
of a second.

Every object of a kind the router reads is validated against its model, so a wrong type is reported as
one line naming the object and the field. Kinds the router never reads are ignored.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from llmisvc_core import limits
from llmisvc_core.models import kube
from llmisvc_core.models.core_objects import ConfigMap, CustomResourceDefinition, Deployment, Service
from llmisvc_core.models.gateway_api import Gateway, GatewayClass, HTTPRoute
from llmisvc_core.models.inference_pool import InferencePool, InferencePoolV1Alpha2
from llmisvc_core.models.kube import CRD, KNOWN_TYPES, LLMISVC, ObjectKey, ResourceType
from llmisvc_core.models.llmisvc import LLMInferenceService, LLMInferenceServiceConfig
from llmisvc_core.world.snapshot import Snapshot

MODELS: dict[ResourceType, type[BaseModel]] = {
    kube.LLMISVC: LLMInferenceService,
    kube.LLMISVC_CONFIG: LLMInferenceServiceConfig,
    kube.HTTPROUTE: HTTPRoute,
    kube.GATEWAY: Gateway,
    kube.GATEWAYCLASS: GatewayClass,
    kube.POOL_V1: InferencePool,
    kube.POOL_V1ALPHA2: InferencePoolV1Alpha2,
    kube.SERVICE: Service,
    kube.CONFIGMAP: ConfigMap,
    kube.DEPLOYMENT: Deployment,
    kube.CRD: CustomResourceDefinition,
}
KINDS = {t.kind for t in KNOWN_TYPES.values()}
DEFAULT_NAMESPACE = "default"


class StateFileError(ValueError):
    """Bad input: the message is one line naming the object and the field."""


@dataclass
class ClusterState:
    snapshot: Snapshot
    services: list[LLMInferenceService]


def parse_state(text: str, source: str) -> ClusterState:
    objects = list(_objects(_documents(text, source), source))
    crds = [o for k, o in objects if k.type == CRD]
    installed = _installed(crds) if crds else set(KNOWN_TYPES.values())
    services = [LLMInferenceService.model_validate(o) for k, o in objects if k.type == LLMISVC]
    return ClusterState(Snapshot(objects, installed), services)


def _documents(text: str, source: str) -> list[tuple[int, Any]]:
    try:
        docs = _json_document(text)
        if docs is None:
            docs = list(yaml.safe_load_all(text))
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""
        raise StateFileError(f"{source}: invalid YAML{where}: {_one_line(err.problem)}") from err
    except yaml.YAMLError as err:
        raise StateFileError(f"{source}: invalid YAML: {_one_line(err)}") from err
    except RecursionError:  # PyYAML's composer recurses once per level
        raise StateFileError(
            f"{source}: nested too deeply to read (an object may nest {limits.MAX_DEPTH} levels)"
        ) from None
    numbered = [(i, d) for i, d in enumerate(docs, start=1) if d is not None]
    for number, doc in numbered:
        problem = limits.depth_problem(doc)
        if problem is not None:
            raise StateFileError(f"{source}: document {number}: {problem}")
    if len(numbered) == 1 and isinstance(numbered[0][1], dict) and numbered[0][1].get("kind") == "List":
        items = numbered[0][1].get("items") or []
        if not isinstance(items, list):
            raise StateFileError(f"{source}: kind List: field items must be a list")
        return [(i, d) for i, d in enumerate(items, start=1)]
    return numbered


def _json_document(text: str) -> list[Any] | None:
    """The one document of a JSON file, or None when the text is not JSON (YAML then reads it, and
    reports its errors as YAML's)."""
    if not text.lstrip().startswith(("{", "[")):
        return None
    try:
        return [json.loads(text)]
    except json.JSONDecodeError:
        return None  # YAML's flow style looks alike: ``{kind: List}``


def _one_line(text: object) -> str:
    """PyYAML's messages may span lines ("... in <unicode string>, position 4"): errors are one line."""
    return " ".join(str(text).split())


def _objects(documents: list[tuple[int, Any]], source: str) -> list[tuple[ObjectKey, dict[str, Any]]]:
    result = []
    for number, doc in documents:
        where = f"{source}: document {number}"
        if not isinstance(doc, dict):
            raise StateFileError(
                f"{where}: not a Kubernetes object (expected a mapping with apiVersion and kind)"
            )
        kind, api_version = doc.get("kind"), doc.get("apiVersion")
        if not isinstance(kind, str) or not kind:
            raise StateFileError(f"{where}: field kind is required")
        if not isinstance(api_version, str) or not api_version:
            raise StateFileError(f"{where}: {kind}: field apiVersion is required")
        type_ = KNOWN_TYPES.get((api_version, kind))
        if type_ is None:
            if kind in KINDS and _is_known_group(api_version, kind):
                raise StateFileError(
                    f"{where}: {kind}: apiVersion {api_version} is not supported "
                    f"(expected {_expected_api_version(kind)})"
                )
            continue  # a kind the router never reads
        result.append(_validated(type_, doc, where))
    return result


def _is_known_group(api_version: str, kind: str) -> bool:
    group = api_version.rpartition("/")[0]
    return any(t.kind == kind and t.group == group for t in KNOWN_TYPES.values()) or kind == LLMISVC.kind


def _expected_api_version(kind: str) -> str:
    return " or ".join(sorted(t.api_version for t in KNOWN_TYPES.values() if t.kind == kind))


def _validated(type_: ResourceType, doc: dict[str, Any], where: str) -> tuple[ObjectKey, dict[str, Any]]:
    meta = doc.get("metadata")
    name = meta.get("name") if isinstance(meta, dict) else None
    if not isinstance(name, str) or not name:
        raise StateFileError(f"{where}: {type_.kind}: field metadata.name is required")
    if type_.namespaced and not meta.get("namespace"):  # type: ignore[union-attr]
        doc = {**doc, "metadata": {**meta, "namespace": DEFAULT_NAMESPACE}}  # type: ignore[dict-item]
    namespace = doc["metadata"].get("namespace") or "" if type_.namespaced else ""
    label = f"{type_.kind} {namespace}/{name}" if namespace else f"{type_.kind} {name}"
    try:
        MODELS[type_].model_validate(doc)
    except ValidationError as err:
        raise StateFileError(f"{label}: {_first_problem(err)}") from err
    return ObjectKey(type_, namespace, name), doc


def _first_problem(err: ValidationError) -> str:
    problem = err.errors()[0]
    path = ""
    for part in problem["loc"]:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return f"field {path}: {problem['msg']}"


def _installed(crds: list[dict[str, Any]]) -> set[ResourceType]:
    served = set()
    for raw in crds:
        crd = CustomResourceDefinition.model_validate(raw)
        for version in crd.served_versions():
            served.add((crd.spec.group, version, crd.spec.names.plural))
    return {t for t in KNOWN_TYPES.values() if (t.group, t.version, t.plural) in served}
