"""Fault injection: rules matched against each proxied request that fail, delay, hang or drop it.

A rule matches on verb / resource (plural, optionally group) / namespace / name / subresource /
User-Agent prefix and fires ``times`` times (``None``: forever) with a ``probability``;
``exclude_user_agent`` (comma-separated User-Agent prefixes) spares some clients, e.g. a test's own
requests. Firing can add a ``delay``, ``hang`` until :meth:`FaultInjector.release` (or
``hang_timeout``), answer a ``status`` code as the real server's ``Status`` (429 carries
``Retry-After``), optionally after forwarding the write (``commit=True``: a real server can fail after
committing), or end a watch stream after ``drop_watch_after`` events, cleanly or (``drop_abruptly``)
by cutting the connection. Rules are plain data so they cross process boundaries as JSON; the model is
the one the retired API stand-in had, so tests move over by changing their fixture only.
"""

from __future__ import annotations

import dataclasses
import itertools
import random
import threading
from dataclasses import dataclass, field
from typing import Any

from llmisvc_devstack.proxy.requestinfo import RequestInfo
from llmisvc_devstack.proxy.status import ApiError, too_many_requests

_ids = itertools.count(1)


@dataclass
class FaultRule:
    verb: str | None = None  # get, list, watch, create, update, patch, delete, deletecollection; "a,b" ok
    resource: str | None = None
    group: str | None = None
    namespace: str | None = None
    name: str | None = None
    subresource: str | None = None  # "" matches the main resource only, None any
    user_agent: str | None = None  # a prefix of the request's User-Agent: one client's requests only
    times: int | None = None
    probability: float = 1.0
    status: int | None = None
    message: str | None = None
    retry_after: int | None = None
    delay: float = 0.0
    hang: bool = False
    hang_timeout: float = 60.0
    drop_watch_after: int | None = None
    drop_abruptly: bool = False
    commit: bool = False
    exclude_user_agent: str | None = None
    id: str = field(default_factory=lambda: f"fault-{next(_ids)}")
    fired: int = 0
    released: threading.Event = field(default_factory=threading.Event, repr=False, compare=False)

    def matches(self, info: RequestInfo, user_agent: str = "") -> bool:
        if self.user_agent is not None and not user_agent.startswith(self.user_agent):
            return False
        if self.exclude_user_agent and user_agent.startswith(
            tuple(p.strip() for p in self.exclude_user_agent.split(",") if p.strip())
        ):
            return False
        if self.verb is not None and info.verb not in {v.strip() for v in self.verb.split(",")}:
            return False
        wanted = (
            (self.resource, info.resource),
            (self.group, info.group),
            (self.namespace, info.namespace or ""),
            (self.name, info.name),
            (self.subresource, info.subresource),
        )
        return all(rule_value is None or rule_value == actual for rule_value, actual in wanted)

    @property
    def exhausted(self) -> bool:
        return self.times is not None and self.fired >= self.times

    def error(self) -> ApiError | None:
        if self.status is None:
            return None
        if self.status == 429:
            return too_many_requests(self.retry_after if self.retry_after is not None else 1)
        headers = {"Retry-After": str(self.retry_after)} if self.retry_after is not None else None
        message = self.message or f"injected fault {self.id}"
        return ApiError(self.status, message, headers=headers)

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "released"}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FaultRule:
        known = {f.name for f in dataclasses.fields(cls)} - {"released", "fired"}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown fault rule fields: {sorted(unknown)}")
        for name, value in data.items():
            _check_type(name, value)
        return cls(**data)


# What each field may hold when a rule arrives as JSON: a wrong type would otherwise surface only
# when the rule is matched, failing every request the proxy serves.
_JSON_TYPES: dict[str, tuple[type, ...]] = {
    **dict.fromkeys(
        ("verb", "resource", "group", "namespace", "name", "subresource", "user_agent", "message"),
        (str, type(None)),
    ),
    "exclude_user_agent": (str, type(None)),
    **dict.fromkeys(("times", "status", "retry_after", "drop_watch_after"), (int, type(None))),
    **dict.fromkeys(("probability", "delay", "hang_timeout"), (int, float)),
    **dict.fromkeys(("hang", "drop_abruptly", "commit"), (bool,)),
    "id": (str,),
}


def _check_type(name: str, value: object) -> None:
    allowed = _JSON_TYPES[name]
    numeric_bool = isinstance(value, bool) and bool not in allowed  # JSON true is no number
    if numeric_bool or not isinstance(value, allowed):
        wanted = " or ".join("null" if t is type(None) else t.__name__ for t in allowed)
        raise ValueError(f"fault rule field {name!r} must be {wanted}, not {value!r}")


class FaultInjector:
    def __init__(self, seed: int | None = None) -> None:
        self._lock = threading.Lock()
        self._rules: list[FaultRule] = []
        self._random = random.Random(seed)

    def add(self, rule: FaultRule) -> FaultRule:
        with self._lock:
            self._rules.append(rule)
        return rule

    def inject(self, **fields: Any) -> FaultRule:
        """Shorthand: ``injector.inject(verb="create", resource="httproutes", status=500, times=1)``."""
        return self.add(FaultRule(**fields))

    def rules(self) -> list[FaultRule]:
        with self._lock:
            return list(self._rules)

    def remove(self, rule_id: str) -> bool:
        with self._lock:
            rule = next((r for r in self._rules if r.id == rule_id), None)
            if rule is None:
                return False
            self._rules.remove(rule)
        rule.released.set()
        return True

    def clear(self) -> None:
        with self._lock:
            rules, self._rules = self._rules, []
        for rule in rules:
            rule.released.set()  # nobody stays hung on a rule that no longer exists

    def release(self, rule_id: str | None = None) -> int:
        """Let requests hung by one rule (or all rules) go on; returns how many rules were released."""
        rules = [r for r in self.rules() if rule_id is None or r.id == rule_id]
        for rule in rules:
            rule.released.set()
        return len(rules)

    def evaluate(self, info: RequestInfo, user_agent: str = "") -> FaultRule | None:
        """The first matching rule that fires for this request (its ``fired`` count is bumped)."""
        with self._lock:
            for rule in self._rules:
                if rule.exhausted or not rule.matches(info, user_agent):
                    continue
                if rule.probability < 1.0 and self._random.random() >= rule.probability:
                    continue
                rule.fired += 1
                return rule
        return None
