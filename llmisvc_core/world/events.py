"""The Events a pass decides on besides its writes and status changes: what it would tell about the
service in ``kubectl describe`` (KServe's ``r.Eventf`` inside the reconcile). Pure: a plan lists them,
``plan`` prints them and the activities record them (``activities.events``)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

WARNING = "Warning"
#: The longest note the API server accepts on an Event; a note is cut there when planned, so a plan
#: stays small whatever the spec holds.
NOTE_LIMIT = 1024


class PlannedEvent(BaseModel):
    """One Event on the service: ``type`` Normal or Warning, ``reason`` in CamelCase, ``note`` in words."""

    model_config = ConfigDict(frozen=True)

    type: str
    reason: str
    note: str

    @classmethod
    def warning(cls, reason: str, note: str) -> PlannedEvent:
        return cls(type=WARNING, reason=reason, note=note[:NOTE_LIMIT])
