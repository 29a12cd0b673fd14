"""kubectl on the machine against the stand-in: field ownership and cascading deletion.

Expectations from Kubernetes' server-side apply documentation (conflicts with the managers of
plain writes, ``--force-conflicts``, the upgrade from client-side apply) and "Use Cascading
Deletion" (``kubectl delete --cascade=background|foreground|orphan``).
"""

from __future__ import annotations

import json

from .kubectl_session import Kubectl, service


def managers(kubectl: Kubectl, ns: str) -> dict[str, str]:
    got = kubectl("get", "llmisvc", "llm", "-n", ns, "--show-managed-fields", "-o", "json").stdout
    return {e["manager"]: e["operation"] for e in json.loads(got)["metadata"]["managedFields"]}


def test_server_side_apply_over_a_field_set_by_kubectl_patch_conflicts_unless_forced(kubectl, ns):
    kubectl("create", "-f", "-", stdin=service(ns))
    patch = '{"spec": {"model": {"uri": "hf://org/patched"}}}'
    kubectl("patch", "llmisvc", "llm", "-n", ns, "--type=merge", "-p", patch)
    # kubectl-create owned only .spec.model.uri (name and namespace are nobody's): the patch took it.
    assert managers(kubectl, ns) == {"kubectl-patch": "Update"}

    refused = kubectl("apply", "--server-side", "-f", "-", stdin=service(ns), check=False)

    assert refused.returncode != 0
    assert (
        'Apply failed with 1 conflict: conflict with "kubectl-patch" using serving.kserve.io/v1alpha2: '
        ".spec.model.uri"
    ) in refused.stderr
    forced = kubectl("apply", "--server-side", "--force-conflicts", "-f", "-", stdin=service(ns))
    assert "serverside-applied" in forced.stdout
    uri = kubectl("get", "llmisvc", "llm", "-n", ns, "-o", "jsonpath={.spec.model.uri}").stdout
    assert uri == "hf://org/model"
    assert "kubectl-patch" not in managers(kubectl, ns)  # its only field was taken


def test_client_side_apply_owns_its_fields_and_server_side_apply_upgrades_them(kubectl, ns):
    kubectl("apply", "-f", "-", stdin=service(ns))
    assert managers(kubectl, ns) == {"kubectl-client-side-apply": "Update"}

    changed = service(ns, **{"hf://org/model": "hf://org/other"})
    applied = kubectl("apply", "--server-side", "-f", "-", stdin=changed)

    # The server forgives manager "kubectl" the conflicts on fields of the last-applied annotation,
    # then kubectl (1.26+) moves kubectl-client-side-apply's fields to its own apply entry.
    assert "serverside-applied" in applied.stdout
    # (kubectl also keeps the annotation up to date as "kubectl-last-applied".)
    assert managers(kubectl, ns) == {"kubectl": "Apply", "kubectl-last-applied": "Apply"}


def test_server_side_apply_with_another_manager_conflicts_with_client_side_apply(kubectl, ns):
    kubectl("apply", "-f", "-", stdin=service(ns))
    changed = service(ns, **{"hf://org/model": "hf://org/other"})

    refused = kubectl("apply", "--server-side", "--field-manager=ci", "-f", "-", stdin=changed, check=False)

    assert refused.returncode != 0
    assert 'conflict with "kubectl-client-side-apply" using serving.kserve.io/v1alpha2: .spec.model.uri' in (
        refused.stderr
    )


def owner_and_dependent(kubectl: Kubectl, ns: str) -> None:
    """An LLMInferenceService ``llm`` and a ConfigMap ``dep`` it owns (blocking its deletion)."""
    kubectl("apply", "-f", "-", stdin=service(ns))
    uid = kubectl("get", "llmisvc", "llm", "-n", ns, "-o", "jsonpath={.metadata.uid}").stdout
    ref: dict[str, object] = {
        "apiVersion": "serving.kserve.io/v1alpha2",
        "kind": "LLMInferenceService",
        "name": "llm",
    }
    ref |= {"uid": uid, "blockOwnerDeletion": True}
    dependent = {"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "b"}}
    dependent["metadata"] = {"name": "dep", "namespace": ns, "ownerReferences": [ref]}
    kubectl("apply", "-f", "-", stdin=json.dumps(dependent))


def test_delete_cascade_background_removes_the_dependent_after_the_owner(kubectl, ns):
    owner_and_dependent(kubectl, ns)
    kubectl("delete", "llmisvc", "llm", "-n", ns, "--cascade=background")
    kubectl("wait", "--for=delete", "configmap/dep", "-n", ns, "--timeout=20s")


def test_delete_cascade_foreground_removes_the_dependent_before_the_owner(kubectl, ns):
    owner_and_dependent(kubectl, ns)
    kubectl("delete", "llmisvc", "llm", "-n", ns, "--cascade=foreground")  # waits for the owner to go
    assert kubectl("get", "configmap", "dep", "-n", ns, check=False).returncode != 0


def test_delete_cascade_orphan_keeps_the_dependent_without_its_owner_reference(kubectl, ns):
    owner_and_dependent(kubectl, ns)
    kubectl("delete", "llmisvc", "llm", "-n", ns, "--cascade=orphan")  # waits for the owner to go
    refs = kubectl("get", "configmap", "dep", "-n", ns, "-o", "jsonpath={.metadata.ownerReferences}")
    assert refs.stdout == ""
