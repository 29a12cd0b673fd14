"""The merged spec checked by the API server (KServe #5918, ``config_merge.go`` ``reconcileBaseRefs``).

An LLMInferenceServiceConfig's schema is loose, so that Go templates fit in it; a merged and rendered
spec can therefore break a rule of the LLMInferenceService CRD (its OpenAPI patterns, enums and CEL
rules). KServe finds out by creating a throwaway service with ``dryRun=All``: the API server runs the
whole admission chain and stores nothing. This module holds the pure half of that check:

* :func:`dry_run_object` builds what is sent: a service with only ``metadata.generateName``
  (``<name>-validation-``, knative's ``ChildName``) and ``metadata.namespace``, no name, labels,
  annotations, owner or status, and the merged spec as the pass would route it;
* :func:`digest_of` names that object, so the workflow asks once per merged spec and keeps the answer;
* :func:`from_refusal` reads the API server's answer: a 422 ``Invalid`` is a rejection
  (``PresetsCombined=False(InvalidRenderedConfig)``), anything else means the spec was never checked
  (``PresetsCombined=Unknown(ValidationUnavailable)``), as ``apierrors.IsInvalid`` tells them apart;
* :func:`condition_message` words the condition: the configs merged, then the refused fields.

The request itself is made by the ``validate_rendered_spec`` activity (``activities.rendered_check``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict

from llmisvc_core import naming
from llmisvc_core.merge import config_merge
from llmisvc_core.merge.config_merge import AppliedConfig
from llmisvc_core.models.kube import LLMISVC

Wire = dict[str, Any]

INVALID_REASON = "InvalidRenderedConfig"
UNAVAILABLE_REASON = "ValidationUnavailable"
#: ``kmeta.ChildName(name, "-validation-")``: the API server appends five random characters.
NAME_SUFFIX = "-validation-"
#: The Status reasons apimachinery knows (``knownReasons``): a 422 with any other reason is Invalid too.
KNOWN_REASONS = frozenset(
    {
        "Unauthorized",
        "Forbidden",
        "NotFound",
        "AlreadyExists",
        "Conflict",
        "Gone",
        "Invalid",
        "ServerTimeout",
        "StoreReadError",
        "Timeout",
        "TooManyRequests",
        "BadRequest",
        "MethodNotAllowed",
        "NotAcceptable",
        "RequestEntityTooLarge",
        "UnsupportedMediaType",
        "InternalError",
        "Expired",
        "ServiceUnavailable",
    }
)


class Outcome(StrEnum):
    ACCEPTED = "accepted"
    REJECTED = "rejected"  # the API server refused the spec: it stays refused until the spec changes
    UNAVAILABLE = "unavailable"  # no answer on the spec itself (timeout, 403, 5xx …): ask again later


class Verdict(BaseModel):
    """The API server's answer on one merged spec, named by :func:`digest_of` of the object sent."""

    model_config = ConfigDict(frozen=True)

    digest: str
    outcome: Outcome
    #: The error as the API server worded it (Go's ``err.Error()``): names the throwaway object.
    error: str = ""
    #: The refused fields, ``field: message`` joined by ``; `` (else the error): the condition's text.
    detail: str = ""

    @property
    def final(self) -> bool:
        """The answer holds for as long as the merged spec stays the same."""
        return self.outcome is not Outcome.UNAVAILABLE


def dry_run_object(name: str, namespace: str, spec: Wire) -> Wire:
    """The throwaway LLMInferenceService KServe creates with ``dryRun=All`` for a merged ``spec``.

    A generated name, never a fixed one: a fixed name would collide with a real ``<name>-validation``.
    The fields the router does not render (the workload's pod templates) lose their values that are
    still templates: KServe would judge the rendered value, and the template's text would be refused
    by a pattern (a resource quantity) that the rendered value meets."""
    sent = {k: v if k in config_merge.RENDERED_FIELDS else _without_templates(v) for k, v in spec.items()}
    return {
        "apiVersion": LLMISVC.api_version,
        "kind": LLMISVC.kind,
        "metadata": {"generateName": naming.child_name(name, NAME_SUFFIX), "namespace": namespace},
        "spec": sent,
    }


def _without_templates(value: Any) -> Any:
    """``value`` without the object fields whose value is an unrendered template (``{{ … }}``)."""
    if isinstance(value, dict):
        return {k: _without_templates(v) for k, v in value.items() if not _is_template(v)}
    if isinstance(value, list):
        return [_without_templates(v) for v in value]
    return value


def _is_template(value: Any) -> bool:
    return isinstance(value, str) and "{{" in value


def digest_of(obj: Wire) -> str:
    """A stable name for the object sent: the SHA-256 of its canonical JSON."""
    canonical = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def accepted(digest: str) -> Verdict:
    return Verdict(digest=digest, outcome=Outcome.ACCEPTED)


def unavailable(digest: str, error: str) -> Verdict:
    """No answer at all (a transport error, retries spent): the detail is the error itself."""
    return Verdict(digest=digest, outcome=Outcome.UNAVAILABLE, error=error, detail=error)


def from_refusal(digest: str, code: int, body: object, error: str) -> Verdict:
    """The verdict of a refused dry run: HTTP ``code``, the response ``body`` (a Status, or anything the
    server sent) and the error's text."""
    status = body if isinstance(body, dict) and body.get("kind") == "Status" else None
    outcome = Outcome.REJECTED if is_invalid(code, status) else Outcome.UNAVAILABLE
    return Verdict(digest=digest, outcome=outcome, error=error, detail=validation_detail(status, error))


def is_invalid(code: int, status: Wire | None) -> bool:
    """``apierrors.IsInvalid``: reason ``Invalid``, or an unknown reason with code 422."""
    reason = str(status.get("reason") or "") if status is not None else ""
    if reason == "Invalid":
        return True
    stated = status.get("code") if status is not None else None
    return reason not in KNOWN_REASONS and (stated if isinstance(stated, int) else code) == 422


def validation_detail(status: Wire | None, error: str) -> str:
    """The refused fields of a Status, ``field: message`` (or the message of a cause without a field),
    joined by ``; ``; the whole error when there are none, since it begins with the throwaway object's
    name, which the user never wrote."""
    details = status.get("details") if status is not None else None
    causes = details.get("causes") if isinstance(details, dict) else None
    if not isinstance(causes, list) or not causes:
        return error
    parts = []
    for entry in causes:
        cause = entry if isinstance(entry, dict) else {}
        field, message = str(cause.get("field") or ""), str(cause.get("message") or "")
        parts.append(f"{field}: {message}" if field else message)
    return "; ".join(parts)


def condition_message(applied: Sequence[AppliedConfig], detail: str) -> str:
    """``PresetsCombined``'s message: every config merged, as ``Source:namespace/name``, then why."""
    merged = ", ".join(f"{a.source.value}:{a.namespace}/{a.name}" for a in applied)
    return f"dry-run validation failed after merging configs [{merged}]: {detail}"
