"""The ``ModelNameCollision`` Warning (KServe #5800): the 17 cases of upstream's table as data, and where a
pass plans the Event.

Upstream at ``aaac4e294``: ``pkg/controller/v1alpha2/llmisvc/router_validation_internal_test.go``
``TestFindModelNameCollisions`` (the table), ``router_validation.go`` ``findModelNameCollisions`` and
``router.go`` ``reconcileHTTPRoutes`` (the check runs with a route spec only, before the route is written).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from llmisvc_core.httproute import collisions
from llmisvc_core.models.kube import LLMISVC
from llmisvc_core.models.llmisvc import LLMInferenceService
from llmisvc_core.world.events import NOTE_LIMIT, PlannedEvent
from llmisvc_core.world.snapshot import PassWorld, snapshot_of
from tests import builders as b
from tests.builders import Wire, plans


def svc(
    name: str,
    *,
    model: str | None = None,
    adapters: tuple[str, ...] = (),
    group: str | None = None,
    status_models: tuple[str, ...] | None = None,
    deleting: bool = False,
) -> LLMInferenceService:
    """Upstream's ``newLLMISVC`` with its options (namespace ``default``)."""
    spec_model: Wire = {}
    if model is not None:
        spec_model["name"] = model
    if adapters:
        spec_model["lora"] = {"adapters": [{"name": a} for a in adapters]}
    router = {"route": {"group": group}} if group is not None else None
    status = {"addresses": [{"models": [{"name": m} for m in status_models]}]} if status_models else None
    wire = b.service(name, "default", router=router, status=status, model=spec_model)
    if deleting:
        wire["metadata"]["deletionTimestamp"] = b.NOW
    return LLMInferenceService.model_validate(wire)


def fq(name: str) -> str:
    return f"publishers/default/models/{name}"


GPT = fq("gpt-4o")

COLLISIONS = [
    pytest.param(svc("a", model="gpt-4o"), [], [], id="no_others"),
    pytest.param(
        svc("a", model="gpt-4o"),
        [svc("b", status_models=(fq("llama"),))],
        [],
        id="no_collision_different_model_names",
    ),
    pytest.param(
        svc("a", model="gpt-4o"), [svc("b", status_models=(GPT,))], ["b"], id="base_model_collision"
    ),
    pytest.param(
        svc("a", model="gpt-4o"),
        [svc("c", status_models=(GPT,)), svc("b", status_models=(GPT,))],
        ["b", "c"],
        id="multiple_collisions_sorted",
    ),
    pytest.param(
        svc("a", model="gpt-4o", group="my-group"),
        [svc("b", group="my-group", status_models=(GPT,))],
        [],
        id="same_group_excluded",
    ),
    pytest.param(
        svc("a", model="gpt-4o", group="g1"),
        [svc("b", group="g2", status_models=(GPT,))],
        ["b"],
        id="different_groups_collide",
    ),
    pytest.param(
        svc("a", model="gpt-4o", group="g1"),
        [svc("b", status_models=(GPT,))],
        ["b"],
        id="self_grouped_other_standalone_collision",
    ),
    pytest.param(
        svc("a", model="gpt-4o"),
        [svc("b", group="g1", status_models=(GPT,))],
        ["b"],
        id="self_standalone_other_grouped_collision",
    ),
    pytest.param(
        svc("shared-name"),
        [svc("b", status_models=(fq("shared-name"),))],
        ["b"],
        id="nil_model_name_defaults_to_metadata_name",
    ),
    pytest.param(
        svc("a", model="gpt-4o"), [svc("a", status_models=(GPT,))], [], id="self_excluded_from_results"
    ),
    pytest.param(
        svc("a", model="gpt-4o"),
        [svc("b", deleting=True, status_models=(GPT,))],
        [],
        id="peer_being_deleted_skipped",
    ),
    pytest.param(
        svc("a", model="gpt-4o"),
        [svc("b", model="gpt-4o")],
        ["b"],
        id="peer_with_empty_status_falls_back_to_spec_model_name",
    ),
    pytest.param(
        svc("a", model="gpt-4o"),
        [svc("b", model="llama")],
        [],
        id="peer_with_empty_status_and_different_model_name_no_collision",
    ),
    pytest.param(
        svc("a", model="base", adapters=("shared-adapter",)),
        [svc("b", status_models=(fq("shared-adapter"),))],
        ["b"],
        id="lora_adapter_on_self_collides_with_base_model_on_peer",
    ),
    pytest.param(
        svc("a", model="gpt-4o"),
        [svc("b", status_models=(fq("other-base"), GPT))],
        ["b"],
        id="lora_adapter_on_peer_collides_with_base_model_on_self",
    ),
    pytest.param(
        svc("a", model="gpt-4o", adapters=("adapter-a",)),
        [svc("b", status_models=(fq("llama"), fq("adapter-b")))],
        [],
        id="no_collision_when_peer_model_routing_names_differ",
    ),
    pytest.param(
        svc("a", model="base"),
        [svc("b", model="other", adapters=("base",))],
        ["b"],
        id="peer_with_empty_status_lora_adapter_fallback_catches_collision",
    ),
]


def test_5800_the_table_has_upstreams_17_cases() -> None:
    assert len(COLLISIONS) == 17


@pytest.mark.parametrize(("self_", "others", "want"), COLLISIONS)
def test_5800_find_model_name_collisions(
    self_: LLMInferenceService, others: list[LLMInferenceService], want: list[str]
) -> None:
    assert collisions.colliding(self_, map(collisions.claimant, others)) == want


def namespace_of(*others: LLMInferenceService) -> PassWorld:
    return PassWorld(snapshot_of([o.to_wire() for o in others], [LLMISVC]))


@pytest.mark.parametrize(("self_", "others", "want"), COLLISIONS)
def test_5800_the_stored_services_read_off_the_wire_give_the_tables_answers(
    self_: LLMInferenceService, others: list[LLMInferenceService], want: list[str]
) -> None:
    """The pass reads what it compares off the stored objects, without building their models."""
    assert collisions.stored_collisions(namespace_of(*others), self_) == want


def test_5800_a_thousand_services_claiming_one_name_all_collide() -> None:
    """Issue 21's peer mix: every service claims the builders' model name, so each pass of one of them
    compares it with all the others (building their models was 40 % of the worker's CPU at 304)."""
    fleet = [svc(f"s{i:04d}", model="gpt-4o") for i in range(1000)]
    found = collisions.stored_collisions(namespace_of(*fleet), svc("a", model="gpt-4o"))
    assert found == [f"s{i:04d}" for i in range(1000)]


def test_5800_a_plain_stored_service_claims_its_names_whatever_else_it_holds() -> None:
    """A stored object whose names read plainly claims them even when a field the check does not read is
    one the model rejects: the API server admitted it, and KServe's typed cache would hold it."""
    peer = svc("b", model="gpt-4o").to_wire()
    peer["status"] = {"conditions": "none"}
    with pytest.raises(ValidationError):
        LLMInferenceService.model_validate(peer)
    world = PassWorld(snapshot_of([peer], [LLMISVC]))
    assert collisions.stored_collisions(world, svc("a", model="gpt-4o")) == ["b"]


def test_5800_a_stored_service_of_odd_shape_is_left_to_its_model() -> None:
    """A group that is not a string: the model decides, and an object it cannot build is left out."""
    peer = svc("b", model="gpt-4o").to_wire()
    peer["spec"]["router"] = {"route": {"group": 7}}
    assert collisions.stored_claimant(peer) is None
    world = PassWorld(snapshot_of([peer], [LLMISVC]))
    assert collisions.stored_collisions(world, svc("a", model="gpt-4o")) == []


NAMES = st.sampled_from(["gpt-4o", "a", "b", ""])
ODD: st.SearchStrategy[Any] = st.one_of(st.sampled_from([None, 0, 1, "", "x"]), st.builds(list))


def mostly(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """The plain shape seven times in eight, an odd value (null, a number, a string, a list) otherwise."""
    return st.integers(1, 8).flatmap(lambda i: ODD if i == 8 else strategy)


def named() -> st.SearchStrategy[Any]:
    return st.fixed_dictionaries({}, optional={"name": mostly(NAMES)})


ADAPTERS = mostly(st.lists(mostly(named()), max_size=3))
LORA = mostly(st.fixed_dictionaries({"adapters": ADAPTERS}))
MODEL = mostly(st.fixed_dictionaries({"lora": LORA}, optional={"name": mostly(NAMES)}))
MODELS = mostly(st.lists(mostly(named()), max_size=3))
ADDRESSES = mostly(st.lists(mostly(st.fixed_dictionaries({}, optional={"models": MODELS})), max_size=2))
GROUPED_ROUTE = mostly(st.fixed_dictionaries({}, optional={"group": mostly(NAMES)}))
ROUTER = mostly(st.fixed_dictionaries({}, optional={"route": GROUPED_ROUTE}))
STORED = st.fixed_dictionaries(
    {
        "metadata": st.fixed_dictionaries(
            {"name": mostly(NAMES), "namespace": mostly(st.just("default"))},
            optional={"deletionTimestamp": mostly(st.just(b.NOW))},
        ),
        "spec": mostly(st.fixed_dictionaries({"model": MODEL}, optional={"router": ROUTER})),
    },
    optional={"status": mostly(st.fixed_dictionaries({}, optional={"addresses": ADDRESSES}))},
)


@settings(max_examples=400, deadline=None)
@given(STORED)
def test_5800_what_is_read_off_a_stored_service_is_what_its_model_claims(raw: dict[str, Any]) -> None:
    """Whenever the object builds into a service, its name, deletion, group and names read off it are its
    model's (or None, and the model decides): no collision is missed or invented by not building it."""
    read = collisions.stored_claimant(raw)
    try:
        other = LLMInferenceService.model_validate(raw)
    except ValidationError:
        return
    assert read is None or read == collisions.claimant(other)
    names = collisions.stored_claims(raw)
    assert names is None or names == collisions.advertised_names(other)


def test_5800_a_peer_with_addresses_but_no_models_claims_nothing() -> None:
    """Go falls back to the spec only when the peer has no address at all."""
    peer = LLMInferenceService.model_validate(
        b.service("b", "default", model={"name": "gpt-4o"}, status={"addresses": [{"url": "http://b"}]})
    )
    assert collisions.colliding(svc("a", model="gpt-4o"), [collisions.claimant(peer)]) == []


# --- where a pass plans the Event ------------------------------------------------------------------

ROUTE: Wire = {"route": {}, "gateway": {}}
WORLD = [b.gateway_class(), b.gateway("kserve-ingress-gateway", "kserve", addresses=["203.0.113.50"])]


def _peer(name: str = "other", **spec: Any) -> Wire:
    return b.service(name, uid=f"uid-{name}", model={"uri": b.OPT_125M, "name": "opt"}, **spec)


def _events(svc_wire: Wire, *others: Wire) -> list[PlannedEvent]:
    return plans.run(svc_wire, *WORLD, *others).events


def test_5800_a_pass_with_a_route_spec_plans_the_warning() -> None:
    events = _events(
        b.service(router=ROUTE, model={"uri": b.OPT_125M, "name": "opt"}), _peer("z"), _peer("y")
    )
    assert events == [
        PlannedEvent(
            type="Warning",
            reason="ModelNameCollision",
            note='model name "opt" is also served by y, z in namespace ns: the gateway sends the shared '
            "publisher paths and model-routing headers to only one of them; this service is still reached on "
            "its own path /ns/svc. Expected when the overlap is meant for traffic splitting",
        )
    ]


WITHOUT_WARNING = [
    pytest.param({"router": ROUTE, "stopped": True}, id="stopped"),
    pytest.param({}, id="no_router"),
    pytest.param({"router": {"scheduler": {}}}, id="no_route"),
    pytest.param({"router": {"route": {"http": {"refs": [{"name": "mine"}]}}}}, id="route_refs_only"),
]


@pytest.mark.parametrize("spec", WITHOUT_WARNING)
def test_5800_no_warning_without_a_route_spec(spec: Wire) -> None:
    own = b.http_route("mine", "ns", parents=[("kserve", "kserve-ingress-gateway")])
    assert _events(b.service(model={"uri": b.OPT_125M, "name": "opt"}, **spec), _peer(), own) == []


def test_5800_group_peers_do_not_collide_but_others_do() -> None:
    grouped = {"route": {"group": "g", "weight": 1}, "gateway": {}}
    svc_wire = b.service(router=grouped, model={"uri": b.OPT_125M, "name": "opt"})
    events = _events(svc_wire, _peer("peer", router=grouped), _peer("standalone"))
    assert [e.note.split(" in namespace")[0] for e in events] == [
        'model name "opt" is also served by standalone'
    ]


def test_5800_the_note_is_cut_at_the_api_servers_limit() -> None:
    many = [_peer(f"peer-{i:03}-{'x' * 40}") for i in range(40)]
    (event,) = _events(b.service(router=ROUTE, model={"uri": b.OPT_125M, "name": "opt"}), *many)
    assert len(event.note) == NOTE_LIMIT


def test_5800_plan_document_lists_the_events_only_when_there_are_some() -> None:
    colliding = plans.run(b.service(router=ROUTE, model={"uri": b.OPT_125M, "name": "opt"}), *WORLD, _peer())
    assert colliding.to_document()["events"][0]["reason"] == "ModelNameCollision"
    assert "events" not in plans.run(b.service(router=ROUTE), *WORLD).to_document()
