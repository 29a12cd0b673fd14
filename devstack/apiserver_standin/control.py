"""The control endpoint (``/_standin/...``) and a small client for it, for tests in another process.

POST   /_standin/faults              add a rule (JSON fields of FaultRule) -> 201 the rule
GET    /_standin/faults              the rules, with how often each fired
DELETE /_standin/faults[/<id>]       remove all rules (releasing hung requests) or one
POST   /_standin/faults/release      release hung requests (body {"id": ...} for one rule)
GET    /_standin/requests            request counters (?recent=N adds the last N requests)
DELETE /_standin/requests            reset the counters
POST   /_standin/crds                {"install": "<selection>"} or {"remove": "<selection>"}
POST   /_standin/compact             forget the watch log (watches from older versions get 410)
GET    /_standin/healthz             "ok"
"""

from __future__ import annotations

import json
import urllib.request
from typing import Any

from apiserver_standin.api import Response
from apiserver_standin.errors import ApiError, bad_request, resource_not_found
from apiserver_standin.faults import FaultRule
from apiserver_standin.state import StandinState


def _json(body: bytes) -> Any:
    try:
        return json.loads(body) if body.strip() else {}
    except ValueError as exc:
        raise bad_request(f"invalid JSON: {exc}") from exc


def _faults(app: StandinState, method: str, rest: list[str], body: bytes) -> Response:
    if method == "GET" and not rest:
        return Response(200, {"rules": [r.to_dict() for r in app.faults.rules()]})
    if method == "POST" and not rest:
        try:
            rule = app.faults.add(FaultRule.from_dict(_json(body)))
        except (TypeError, ValueError) as exc:
            raise bad_request(str(exc)) from exc
        return Response(201, rule.to_dict())
    if method == "POST" and rest == ["release"]:
        rule_id = _json(body).get("id")
        return Response(200, {"released": app.faults.release(rule_id)})
    if method == "DELETE" and not rest:
        app.faults.clear()
        return Response(200, {"removed": "all"})
    if method == "DELETE" and len(rest) == 1:
        if not app.faults.remove(rest[0]):
            raise ApiError(404, f"no fault rule {rest[0]!r}")
        return Response(200, {"removed": rest[0]})
    raise resource_not_found("/_standin/faults")


def _requests(app: StandinState, method: str, query: dict[str, str]) -> Response:
    if method == "DELETE":
        app.counter.reset()
        return Response(200, {"reset": True})
    body = app.counter.snapshot()
    if query.get("recent"):
        try:
            body["recent"] = app.counter.recent(int(query["recent"]))
        except ValueError as exc:
            raise bad_request(f"recent must be a number: {query['recent']!r}") from exc
    return Response(200, body)


def _crds(app: StandinState, body: bytes) -> Response:
    request = _json(body)
    try:
        installed = app.install_crds(request["install"]) if "install" in request else []
        removed = app.remove_crds(request["remove"]) if "remove" in request else []
    except ValueError as exc:
        raise bad_request(str(exc)) from exc
    return Response(200, {"installed": installed, "removed": removed})


def handle(app: StandinState, method: str, path: str, query: dict[str, str], body: bytes) -> Response:
    parts = [p for p in path.split("/") if p][1:]
    try:
        if parts == ["healthz"]:
            return Response(200, "ok")
        if parts[:1] == ["faults"]:
            return _faults(app, method, parts[1:], body)
        if parts == ["requests"]:
            return _requests(app, method, query)
        if parts == ["crds"] and method == "POST":
            return _crds(app, body)
        if parts == ["compact"] and method == "POST":
            app.store.compact()
            return Response(200, {"compacted": True})
        raise resource_not_found(path)
    except ApiError as exc:
        return Response(exc.code, exc.status(), exc.headers)


class ControlClient:
    """Drives a stand-in running in another process: ``ControlClient("http://127.0.0.1:PORT")``."""

    def __init__(self, url: str, timeout: float = 10.0) -> None:
        self.url = url.rstrip("/")
        self.timeout = timeout

    def _call(self, method: str, path: str, body: Any = None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(f"{self.url}/_standin/{path}", data=data, method=method)
        request.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(request, timeout=self.timeout) as response:
            return json.loads(response.read())

    def add_fault(self, **rule: Any) -> dict[str, Any]:
        result: dict[str, Any] = self._call("POST", "faults", rule)
        return result

    def faults(self) -> list[dict[str, Any]]:
        return list(self._call("GET", "faults")["rules"])

    def clear_faults(self) -> None:
        self._call("DELETE", "faults")

    def release(self, rule_id: str | None = None) -> None:
        self._call("POST", "faults/release", {"id": rule_id} if rule_id else {})

    def requests(self, recent: int = 0) -> dict[str, Any]:
        result: dict[str, Any] = self._call("GET", f"requests?recent={recent}" if recent else "requests")
        return result

    def count(self, **filters: Any) -> int:
        """Like :meth:`RequestCounter.count` (verb, group, resource, subresource, code, user_agent prefix)."""
        agent = filters.pop("user_agent", None)
        rows = self.requests()["counts"]
        return sum(
            row["count"]
            for row in rows
            if all(v is None or row[k] == v for k, v in filters.items())
            and (agent is None or str(row["user_agent"]).startswith(agent))
        )

    def reset_requests(self) -> None:
        self._call("DELETE", "requests")

    def install_crds(self, selection: str) -> list[str]:
        return list(self._call("POST", "crds", {"install": selection})["installed"])

    def remove_crds(self, selection: str) -> list[str]:
        return list(self._call("POST", "crds", {"remove": selection})["removed"])

    def compact(self) -> None:
        self._call("POST", "compact", {})
