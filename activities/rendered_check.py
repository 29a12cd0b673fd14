"""Planning with the API server's verdict on the merged spec (KServe #5918): the dry-run create.

The workflow keeps the last final verdict and hands it to every ``fetch_gateways``. While the merged spec
keeps its digest, a pass asks nothing, so an idle pass still reads only the cache. A merged spec with no
verdict (the spec, a config or the ingress settings changed) costs one request, made here, inside the
pass that needs it: the core hands over the throwaway object
(:func:`llmisvc_core.merge.rendered_validation.dry_run_object`), it is created with ``dryRun=All``, and
the pass is planned again, from the same cache, with the answer. The check thus judges exactly the spec
that pass routes by, and the history records the verdict in the pass's own marker.

Every answer is a verdict, as in KServe: a 422 ``Invalid`` rejects the spec; any other failure (no
answer, 5xx, 403 …) means it was not checked, so ``PresetsCombined`` is ``Unknown`` and the re-check
asks again (fast failures were already tried again inside the request, ``llmisvc_kube.client``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from activities import errors
from activities.errors import ErrorType
from activities.payload_guard import clip
from llmisvc_core.merge import rendered_validation
from llmisvc_core.merge.rendered_validation import Verdict
from llmisvc_core.models.kube import LLMISVC
from llmisvc_core.planner.plan import PassPlan
from llmisvc_kube.api import ApiError, ClusterApi, Wire

#: Plans a pass with the verdicts given (None: skip the check).
Planner = Callable[[Mapping[str, Verdict] | None], PassPlan]
#: A merged spec that changes under the pass this often (the cache moving between two plans) is left
#: to the activity's retry.
MAX_ROUNDS = 3


def plan_checked(
    api: ClusterApi, plan: Planner, known: Verdict | None, *, checked: bool
) -> tuple[PassPlan, Verdict | None]:
    """The pass planned with the workflow's verdict ``known``, asking the API server when the merged
    spec has none; and the verdict asked for, if one was (None: ``known`` still holds, or the check
    is skipped). ``checked`` False (shadow mode) skips the check: shadow mode sends nothing but reads."""
    if not checked:
        return plan(None), None
    verdicts = {known.digest: known} if known is not None else {}
    asked: Verdict | None = None
    for _ in range(MAX_ROUNDS):
        result = plan(verdicts)
        if result.dry_run is None:
            return result, asked
        asked = judge(api, result.dry_run)
        verdicts[asked.digest] = asked
    raise errors.transient(
        ErrorType.TRANSIENT, "the merged spec kept changing while the API server checked it"
    )


def judge(api: ClusterApi, dry_run: Wire) -> Verdict:
    """The API server's verdict on ``dry_run``, created with ``dryRun=All`` (nothing is stored)."""
    digest = rendered_validation.digest_of(dry_run)
    try:
        api.create_dry_run(LLMISVC, dry_run)
    except ApiError as err:
        verdict = rendered_validation.from_refusal(digest, err.status, err.body, err.message)
        # A 422 may quote every value it refused: bounded, as every API error kept in the history is.
        return verdict.model_copy(update={"error": clip(verdict.error), "detail": clip(verdict.detail)})
    return rendered_validation.accepted(digest)
