"""The control endpoint (``/_proxy/...``, a prefix no Kubernetes path has) and a client for it.

POST   /_proxy/faults              add a rule (JSON fields of FaultRule) -> 201 the rule
GET    /_proxy/faults              the rules, with how often each fired
DELETE /_proxy/faults[/<id>]       remove all rules (releasing hung requests) or one
POST   /_proxy/faults/release      release hung requests (body {"id": ...} for one rule)
GET    /_proxy/requests            request counters (?recent=N adds the last N requests)
DELETE /_proxy/requests            reset the counters
POST   /_proxy/watches/cut         end every open watch stream ({"abruptly": true}: no final chunk)
GET    /_proxy/healthz             "ok"

Control requests are neither faulted nor counted. The client serves tests and tools in another process
(the chaos suite, benchmarks) and keeps the names of the API stand-in's client.
"""

from __future__ import annotations

import json
import ssl
import urllib.request
from typing import Any, Protocol
from urllib.parse import parse_qs

from llmisvc_devstack.proxy.counters import RequestCounter
from llmisvc_devstack.proxy.faults import FaultInjector, FaultRule
from llmisvc_devstack.proxy.status import ApiError, bad_request, not_found

PREFIX = "/_proxy/"


class Controlled(Protocol):
    faults: FaultInjector
    counter: RequestCounter

    def cut_watches(self, abruptly: bool = False) -> int: ...


def _json(body: bytes) -> Any:
    try:
        return json.loads(body) if body.strip() else {}
    except ValueError as exc:
        raise bad_request(f"invalid JSON: {exc}") from exc


def _faults(target: Controlled, method: str, rest: list[str], body: bytes) -> tuple[int, Any]:
    if method == "GET" and not rest:
        return 200, {"rules": [r.to_dict() for r in target.faults.rules()]}
    if method == "POST" and not rest:
        try:
            rule = target.faults.add(FaultRule.from_dict(_json(body)))
        except (TypeError, ValueError) as exc:
            raise bad_request(str(exc)) from exc
        return 201, rule.to_dict()
    if method == "POST" and rest == ["release"]:
        return 200, {"released": target.faults.release(_json(body).get("id"))}
    if method == "DELETE" and not rest:
        target.faults.clear()
        return 200, {"removed": "all"}
    if method == "DELETE" and len(rest) == 1:
        if not target.faults.remove(rest[0]):
            raise ApiError(404, f"no fault rule {rest[0]!r}")
        return 200, {"removed": rest[0]}
    raise not_found(PREFIX + "faults/" + "/".join(rest))


def _requests(target: Controlled, method: str, query: str) -> tuple[int, Any]:
    if method == "DELETE":
        target.counter.reset()
        return 200, {"reset": True}
    body = target.counter.snapshot()
    recent = parse_qs(query).get("recent", [""])[-1]
    if recent:
        try:
            body["recent"] = target.counter.recent(int(recent))
        except ValueError as exc:
            raise bad_request(f"recent must be a number: {recent!r}") from exc
    return 200, body


def handle(target: Controlled, method: str, path: str, query: str, body: bytes) -> tuple[int, Any]:
    """The code and JSON body answering one control request (``path`` starts with :data:`PREFIX`)."""
    parts = [p for p in path[len(PREFIX) :].split("/") if p]
    try:
        if parts == ["healthz"]:
            return 200, "ok"
        if parts[:1] == ["faults"]:
            return _faults(target, method, parts[1:], body)
        if parts == ["requests"] and method in ("GET", "DELETE"):
            return _requests(target, method, query)
        if parts == ["watches", "cut"] and method == "POST":
            return 200, {"cut": target.cut_watches(bool(_json(body).get("abruptly")))}
        raise not_found(path)
    except ApiError as exc:
        return exc.code, exc.status()


class ControlClient:
    """Drives a proxy in another process: ``ControlClient("https://127.0.0.1:PORT", ca_file=...)``."""

    def __init__(self, url: str, ca_file: str | None = None, timeout: float = 10.0) -> None:
        self.url = url.rstrip("/")
        self.timeout = timeout
        self._context = ssl.create_default_context(cafile=ca_file) if url.startswith("https:") else None

    def _call(self, method: str, path: str, body: Any = None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(f"{self.url}{PREFIX}{path}", data=data, method=method)
        request.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(request, timeout=self.timeout, context=self._context) as response:
            return json.loads(response.read())

    def add_fault(self, **rule: Any) -> dict[str, Any]:
        """Add a rule (fields of :class:`FaultRule`); the rule as stored, with its ``id``."""
        result: dict[str, Any] = self._call("POST", "faults", rule)
        return result

    def faults(self) -> list[dict[str, Any]]:
        return list(self._call("GET", "faults")["rules"])

    def clear_faults(self) -> None:
        self._call("DELETE", "faults")

    def remove_fault(self, rule_id: str) -> None:
        self._call("DELETE", f"faults/{rule_id}")

    def release(self, rule_id: str | None = None) -> None:
        self._call("POST", "faults/release", {"id": rule_id} if rule_id else {})

    def requests(self, recent: int = 0) -> dict[str, Any]:
        """``{"total": n, "counts": [{verb, group, resource, subresource, code, user_agent, count}]}``,
        with ``"recent"`` (the last ``recent`` requests' records) when asked."""
        result: dict[str, Any] = self._call("GET", f"requests?recent={recent}" if recent else "requests")
        return result

    def count(self, **filters: Any) -> int:
        """Like :meth:`RequestCounter.count`: verb, group, resource, subresource, code; ``user_agent``
        and ``exclude_user_agent`` as prefixes."""
        agent = filters.pop("user_agent", None)
        spared = filters.pop("exclude_user_agent", None)
        return sum(
            row["count"]
            for row in self.requests()["counts"]
            if all(v is None or row[k] == v for k, v in filters.items())
            and (agent is None or str(row["user_agent"]).startswith(agent))
            and (spared is None or not str(row["user_agent"]).startswith(spared))
        )

    def reset_requests(self) -> None:
        self._call("DELETE", "requests")

    def cut_watches(self, abruptly: bool = False) -> int:
        """End every watch stream open now; how many there were."""
        return int(self._call("POST", "watches/cut", {"abruptly": abruptly})["cut"])

    def healthy(self) -> bool:
        try:
            return bool(self._call("GET", "healthz") == "ok")
        except OSError:
            return False
