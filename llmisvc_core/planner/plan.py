"""What a pass outputs: the plan (objects to apply and delete, the new status, how the pass ended) and
the writes of each phase the orchestrator carries out.

``PassPlan.to_document`` is the ``plan`` command's output; activities, workflows and the CLI pass these types
around, so they sit apart from the planner that makes them.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from llmisvc_core.models.kube import ObjectKey, key_of, type_of
from llmisvc_core.world.events import PlannedEvent


class Outcome(StrEnum):
    """How a pass ended: the planner's four outcomes, and the three the workflow ends a pass with without
    a plan (the service gone, handed off to another deployment, a pass that could not complete)."""

    RECONCILED = "reconciled"
    PRECONDITION_NOT_MET = "precondition-not-met"
    INVALID_REFERENCES = "invalid-references"
    FAILED = "failed"
    GONE = "gone"
    ERROR = "error"
    HANDED_OFF = "handed-off"  # the service left this deployment's selection (activities.management)

    @property
    def settled(self) -> bool:
        """Nothing left to retry: the next pass waits for a trigger or the resync."""
        return self in (Outcome.RECONCILED, Outcome.GONE, Outcome.HANDED_OFF)


class ObjectRef(BaseModel):
    model_config = ConfigDict(frozen=True, populate_by_name=True)

    api_version: str = Field(alias="apiVersion")
    kind: str
    namespace: str | None = None
    name: str

    @classmethod
    def of(cls, key: ObjectKey) -> ObjectRef:
        return cls(
            api_version=key.type.api_version,
            kind=key.type.kind,
            namespace=key.namespace or None,
            name=key.name,
        )

    def key(self) -> ObjectKey:
        type_ = type_of(self.api_version, self.kind)
        if type_ is None:
            raise ValueError(f"{self.api_version} {self.kind} is not a kind the router writes")
        return ObjectKey(type_, self.namespace or "", self.name)


class PassPlan(BaseModel):
    """What one pass decided: objects to create/update and delete, the new status, how it ended, and the
    Events its rules decided on (besides those of its writes and status changes)."""

    model_config = ConfigDict(populate_by_name=True)

    apply: list[dict[str, Any]] = Field(default_factory=list)
    delete: list[ObjectRef] = Field(default_factory=list)
    status: dict[str, Any] = Field(default_factory=dict)
    outcome: Outcome = Outcome.RECONCILED
    message: str | None = None
    #: Set when the pass stopped for want of the API server's verdict on the merged spec (KServe #5918):
    #: the throwaway object to create with ``dryRun=All`` (``llmisvc_core.merge.rendered_validation``).
    dry_run: dict[str, Any] | None = None
    events: list[PlannedEvent] = Field(default_factory=list)

    def to_document(self) -> dict[str, Any]:
        """The ``plan`` command's output document (``message`` only when the pass failed, ``events`` only
        when there are some)."""
        doc: dict[str, Any] = {
            "apply": self.apply,
            "delete": [ref.model_dump(by_alias=True, exclude_none=True) for ref in self.delete],
            "status": self.status,
            "outcome": self.outcome.value,
        }
        if self.message is not None:
            doc["message"] = self.message
        if self.events:
            doc["events"] = [event.model_dump() for event in self.events]
        return doc


class Phase(StrEnum):
    SCHEDULER = "scheduler"
    ROUTES = "routes"
    MIGRATION = "migration"


class WriteOp(BaseModel):
    """One write: a full manifest to create/update, or an object to delete."""

    apply: dict[str, Any] | None = None
    delete: ObjectRef | None = None

    def key(self) -> ObjectKey:
        """The object written; a plan only writes kinds the router knows."""
        if self.delete is not None:
            return self.delete.key()
        key = key_of(self.apply or {})
        if key is None:
            raise ValueError(f"a plan cannot write {self.describe()}")
        return key

    def ref(self) -> ObjectRef:
        return self.delete if self.delete is not None else ObjectRef.of(self.key())

    def describe(self) -> str:
        if self.delete is not None:
            return f"delete {self.delete.kind} {self.delete.namespace}/{self.delete.name}"
        meta = (self.apply or {}).get("metadata", {})
        verb = "update" if meta.get("resourceVersion") else "create"
        return f"{verb} {(self.apply or {}).get('kind')} {meta.get('namespace')}/{meta.get('name')}"
