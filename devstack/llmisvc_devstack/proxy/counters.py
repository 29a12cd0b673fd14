"""Request counters: every proxied request, by verb, group, resource, subresource and response code.

Tests and benchmarks read them to assert "no hot loop" or "0 writes on a no-op pass". A bounded log
of recent requests (with the User-Agent, so a test can tell the product's requests from its own)
backs the detailed queries; each write in it keeps the body sent, so a test can compare what a pass
wrote with what ``plan`` printed (the control endpoint's log leaves the bodies out). The code is the one
finally answered to the client: an injected fault's, else the upstream's. Control-endpoint requests are
not counted, nor ``dryRun=All`` writes, which store nothing: those are in the log only, marked
``dry_run``.
"""

from __future__ import annotations

import json
import threading
from collections import Counter, deque
from dataclasses import asdict, dataclass
from typing import Any

from llmisvc_devstack.proxy.requestinfo import WRITE_VERBS


@dataclass(frozen=True)
class RequestRecord:
    verb: str
    group: str
    resource: str
    subresource: str
    namespace: str
    name: str
    code: int
    method: str
    path: str
    user_agent: str
    time: float
    version: str = ""
    dry_run: bool = False  # ``dryRun=All``: the API server checked the write and stored nothing
    body: bytes = b""  # a write's body as sent (reads: none)

    def document(self) -> Any:
        """The body as JSON (every write the product sends is JSON: an object, a patch, DeleteOptions)."""
        return json.loads(self.body) if self.body else None

    def matches(self, **filters: Any) -> bool:
        """``user_agent`` matches as a prefix, a collection as "one of", anything else by equality."""
        for key, wanted in filters.items():
            if wanted is None:
                continue
            actual = getattr(self, key)
            if key == "user_agent":
                ok = str(actual).startswith(wanted)
            elif isinstance(wanted, (set, frozenset, list, tuple)):
                ok = actual in wanted
            else:
                ok = actual == wanted
            if not ok:
                return False
        return True


_KEY_FIELDS = ("verb", "group", "resource", "subresource", "code", "user_agent")
CountKey = tuple[str, str, str, str, int, str]


def _key_matches(key: CountKey, wanted: tuple[object, ...], agent: str | None, not_agent: str | None) -> bool:
    if any(w is not None and w != actual for w, actual in zip(wanted, key[:5], strict=True)):
        return False
    if agent is not None and not key[5].startswith(agent):
        return False
    return not_agent is None or not key[5].startswith(not_agent)


class RequestCounter:
    def __init__(self, keep: int = 20_000) -> None:
        self._lock = threading.Lock()
        self._counts: Counter[CountKey] = Counter()
        self._recent: deque[RequestRecord] = deque(maxlen=keep)

    def record(self, record: RequestRecord) -> None:
        key = (record.verb, record.group, record.resource, record.subresource, record.code, record.user_agent)
        with self._lock:
            if not record.dry_run:
                self._counts[key] += 1
            self._recent.append(record)

    def count(
        self,
        verb: str | None = None,
        resource: str | None = None,
        group: str | None = None,
        subresource: str | None = None,
        code: int | None = None,
        user_agent: str | None = None,
        exclude_user_agent: str | None = None,
    ) -> int:
        """Requests since the last reset matching every filter given (None: any), dry runs left out.

        ``user_agent`` / ``exclude_user_agent`` are prefixes: e.g. leave out a test's own requests
        with ``exclude_user_agent="integration-test"``.
        """
        wanted = (verb, group, resource, subresource, code)
        with self._lock:
            items = list(self._counts.items())
        return sum(n for key, n in items if _key_matches(key, wanted, user_agent, exclude_user_agent))

    def writes(
        self,
        resource: str | None = None,
        group: str | None = None,
        user_agent: str | None = None,
        exclude_user_agent: str | None = None,
    ) -> int:
        """Create, update, patch, delete and deletecollection requests (any response code) that could store
        something: not dry runs."""
        return sum(
            self.count(
                verb=v,
                resource=resource,
                group=group,
                user_agent=user_agent,
                exclude_user_agent=exclude_user_agent,
            )
            for v in WRITE_VERBS
        )

    def records(self, **filters: Any) -> list[RequestRecord]:
        """Recent requests matching ``filters``: fields of :class:`RequestRecord`, ``user_agent`` a prefix;
        dry runs included (``dry_run=False`` leaves them out)."""
        with self._lock:
            recent = list(self._recent)
        return [r for r in recent if r.matches(**filters)]

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            items = sorted(self._counts.items())
        rows = [{**dict(zip(_KEY_FIELDS, key, strict=True)), "count": n} for key, n in items]
        return {"total": sum(n for _, n in items), "counts": rows}

    def recent(self, limit: int = 1000) -> list[dict[str, Any]]:
        with self._lock:
            recent = list(self._recent)[-limit:]
        return [{k: v for k, v in asdict(r).items() if k != "body"} for r in recent]

    def reset(self) -> None:
        with self._lock:
            self._counts.clear()
            self._recent.clear()
