"""Plans for unit tests: a snapshot of wire objects, one pass of the real planner over it, and readers of
the plan (a condition, the applied manifests, the cluster after the plan is carried out)."""

from __future__ import annotations

from llmisvc_core.models.kube import KNOWN_TYPES, ResourceType
from llmisvc_core.models.llmisvc import LLMInferenceService
from llmisvc_core.planner.passes import plan_pass
from llmisvc_core.planner.plan import PassPlan
from llmisvc_core.world.config import Environment
from llmisvc_core.world.snapshot import Snapshot, snapshot_of
from tests.builders import NOW, Wire


def snapshot(*objects: Wire, installed: set[ResourceType] | None = None) -> Snapshot:
    return snapshot_of(objects, installed if installed is not None else set(KNOWN_TYPES.values()))


def run(
    svc: Wire,
    *objects: Wire,
    installed: set[ResourceType] | None = None,
    env: Environment | None = None,
    now: str = NOW,
) -> PassPlan:
    model = LLMInferenceService.model_validate(svc)
    return plan_pass(model, snapshot(svc, *objects, installed=installed), env or Environment(), now)


def condition(plan: PassPlan, type_: str) -> Wire | None:
    for cond in plan.status.get("conditions", []):
        if cond["type"] == type_:
            return dict(cond)
    return None


def applied(plan: PassPlan, kind: str, name: str | None = None) -> list[Wire]:
    return [o for o in plan.apply if o["kind"] == kind and (name is None or o["metadata"]["name"] == name)]


def apply_plan(objects: list[Wire], plan: PassPlan, svc_key: tuple[str, str]) -> list[Wire]:
    """What the cluster holds after a plan is carried out: applied objects stored (status kept, generation
    bumped on spec changes), deleted ones gone, the service's status replaced."""
    by_key = {
        (o["kind"], o["apiVersion"], o["metadata"].get("namespace", ""), o["metadata"]["name"]): o
        for o in objects
    }
    for manifest in plan.apply:
        key = (
            manifest["kind"],
            manifest["apiVersion"],
            manifest["metadata"].get("namespace", ""),
            manifest["metadata"]["name"],
        )
        stored = dict(manifest)
        stored["metadata"] = dict(manifest["metadata"])
        old = by_key.get(key)
        if old is not None:
            if "status" in old:
                stored["status"] = old["status"]
            generation = old["metadata"].get("generation", 1)
            stored["metadata"]["generation"] = generation + (old.get("spec") != manifest.get("spec"))
        else:
            stored["metadata"]["generation"] = 1
        by_key[key] = stored
    for ref in plan.delete:
        by_key.pop((ref.kind, ref.api_version, ref.namespace or "", ref.name), None)
    ns, name = svc_key
    svc_item = by_key[("LLMInferenceService", "serving.kserve.io/v1alpha2", ns, name)]
    by_key[("LLMInferenceService", "serving.kserve.io/v1alpha2", ns, name)] = {
        **svc_item,
        "status": plan.status,
    }
    return list(by_key.values())
