"""The bound on what the activities put into the workflow history, enforced where each payload is made.

A pass plans from the service's spec, so without a bound the spec decides how large the plan is: a
100 KB model name is copied into every rule of the route and into the status, and makes a 1.2 MB plan.
Temporal refuses payloads over 2 MB (``PayloadsTooLarge``), warns from 512 KB, and keeps every one for
the life of the history; pydantic's JSON parser refuses documents nested deeper than about 200 levels
(and its serializer 255), which fails the workflow task that decodes the result. Either way the pass
would fail the same way on every re-check, and nothing would reach the service's status.

So a plan is measured before it leaves ``fetch_gateways``: one over :data:`PAYLOAD_BOUND` bytes or
:data:`DEPTH_BOUND` levels is replaced by a small plan that writes nothing and sets ``Ready`` and
``RouterReady`` False with reason :data:`TOO_LARGE`, naming the longest (or deepest) value of the spec;
the workflow then waits for the service to change (or the next re-check). A spec nested deeper than
:data:`DEPTH_BOUND` gets the same answer before it is planned, since planning copies it through pydantic.
Free text from the API server is clipped to :data:`MESSAGE_BOUND` characters, so every other payload
(writes are a part of the plan; results and the workflow's state carry messages and names) stays far
below the bound too.
"""

from __future__ import annotations

import logging
from typing import Any

from pydantic import BaseModel
from temporalio.contrib.pydantic import pydantic_data_converter

from activities import invalid_spec
from activities.models import ConditionState, Planned
from llmisvc_core.planner.plan import Outcome
from llmisvc_core.world import status_merge

#: The largest payload the router puts into a history, in bytes, codec included (Temporal's own limits:
#: a warning at 512 KB, a refusal at 2 MB).
PAYLOAD_BOUND = 128 * 1024
#: Room left for what an encryption codec adds (``llmisvc_runtime.codec``: key id, nonce, tag, metadata).
CODEC_MARGIN = 1024
#: The deepest nesting a payload may have: well under the ~200 levels pydantic's parser accepts.
DEPTH_BOUND = 100
#: The longest message (the API server's, or one made from it) that travels in a payload.
MESSAGE_BOUND = 8 * 1024
#: The reason of ``Ready``/``RouterReady`` when a service's plan is over the bound.
TOO_LARGE = "ObjectTooLarge"
_PATH_SEGMENTS = 8  # of a path named in a message; a deep one is cut

log = logging.getLogger(__name__)


def clip(text: str, limit: int = MESSAGE_BOUND) -> str:
    """``text`` cut to ``limit`` characters, saying how much was left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit} more characters)"


def depth(value: Any) -> int:
    """How deeply dicts, lists and models nest in ``value`` (a scalar is 0), one level at a time: the value
    may be nested deeper than Python's recursion limit, and this runs on every pass."""
    deepest, level = 0, [value]
    while True:
        below: list[Any] = []
        containers = 0
        for item in level:
            kind = type(item)
            if kind is str or item is None:
                continue
            if kind is dict:
                below.extend(item.values())
            elif kind is list or kind is tuple:
                below.extend(item)
            elif isinstance(item, BaseModel):
                below.extend(item.__dict__.values())
            else:
                continue
            containers += 1
        if not containers:
            return deepest
        deepest, level = deepest + 1, below


def encoded_size(model: BaseModel) -> int:
    """The bytes of ``model`` as the worker's data converter puts it into the history."""
    (payload,) = pydantic_data_converter.payload_converter.to_payloads([model])
    return payload.ByteSize()


def problem(model: BaseModel) -> str | None:
    """Why ``model`` cannot travel in a history payload, or None when it can."""
    levels = depth(model)
    if levels > DEPTH_BOUND:
        return f"nested {levels} levels deep, more than the {DEPTH_BOUND} a workflow history payload may be"
    limit = PAYLOAD_BOUND - CODEC_MARGIN
    if encoded_size(model) > limit:
        # Not the size itself: the digest of what the pass read varies by a few bytes from pass to pass,
        # and the status should change only when the answer does (the log says how large).
        return f"larger than the {limit} bytes a workflow history payload may hold"
    return None


def fit_plan(planned: Planned, raw: dict[str, Any], now: str) -> Planned:
    """``planned`` if it fits in a payload; else a plan without writes whose status says why."""
    if planned.message is not None:  # it travels on, in the workflow's state
        planned = planned.model_copy(update={"message": clip(planned.message)})
    why = problem(planned)
    if why is None:
        return planned
    meta, levels = raw.get("metadata") or {}, depth(planned)
    size = f"{encoded_size(planned)} bytes" if levels <= DEPTH_BOUND else "too deep to encode"
    log.warning(
        "LLMInferenceService %s/%s: a plan of %s, nested %d levels, is not carried out",
        meta.get("namespace"), meta.get("name"), size, levels,
    )  # fmt: skip
    return _refused(planned, raw, now, f"the plan of a pass would be {why}")


def _refused(planned: Planned, raw: dict[str, Any], now: str, why: str) -> Planned:
    meta = raw.get("metadata") or {}
    message = clip(
        f"LLMInferenceService {meta.get('namespace')}/{meta.get('name')} is too large to handle: {why}; "
        f"{_culprit(raw.get('spec'))}"
    )
    stored = raw.get("status") or {}
    generation = meta.get("generation")
    merged = invalid_spec.invalid_spec_status(
        stored, message, invalid_spec.parse_time(now), TOO_LARGE, generation
    )
    # The routing fields stay as they are: this pass found no new ones; the generation is answered.
    status = invalid_spec.router_part(stored, merged)
    owned = status["conditions"]
    fitted = Planned(
        uid=planned.uid,
        generation=planned.generation,
        outcome=Outcome.FAILED,
        message=message,
        status=status if status_merge.merge_status(stored, status) != stored else None,
        status_basis=planned.status_basis,
        conditions={
            str(c.get("type", "")): ConditionState(status=str(c.get("status", "")), reason=c.get("reason"))
            for c in owned
        },
        url=clip(str(stored["url"])) if stored.get("url") else None,
        reads=planned.reads,
        reads_left_out=planned.reads_left_out,
        live_reads=planned.live_reads,
    )
    if fitted.status is not None and problem(fitted) is not None:
        # The stored routing fields are what is too large (written before the bound existed): the
        # conditions alone say why, and the next pass that fits writes the fields anew.
        fitted.status = {"conditions": owned}
        if "observedGeneration" in merged:
            fitted.status["observedGeneration"] = merged["observedGeneration"]
        fitted.url = None
    return fitted


def _culprit(spec: Any) -> str:
    """What to shorten: the spec's longest string, or its deepest value when nothing is long."""
    longest: tuple[int, list[str]] = (-1, [])
    deepest: list[str] = []
    stack: list[tuple[Any, list[str]]] = [(spec, ["spec"])]
    while stack:
        item, path = stack.pop()
        if isinstance(item, dict):
            stack.extend((v, [*path, str(k)]) for k, v in item.items())
        elif isinstance(item, list):
            stack.extend((v, [*path[:-1], f"{path[-1]}[{i}]"]) for i, v in enumerate(item))
        elif isinstance(item, str) and len(item) > longest[0]:
            longest = (len(item), path)
        deepest = path if len(path) > len(deepest) else deepest
    if len(deepest) > DEPTH_BOUND // 2:
        return f"its deepest value is {_dotted(deepest)}, {len(deepest)} levels deep; flatten it"
    if longest[0] >= 0:
        return f"its longest value is {_dotted(longest[1])} ({longest[0]} characters); shorten it"
    return "make its spec smaller"


def _dotted(path: list[str]) -> str:
    if len(path) <= _PATH_SEGMENTS:
        return ".".join(path)
    half = _PATH_SEGMENTS // 2
    return f"{'.'.join(path[:half])}.….{'.'.join(path[-half:])}"
