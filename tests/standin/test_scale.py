"""The ``scale`` subresource of Deployments, through the official client (autoscaling/v1 Scale)."""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes import client

from tests.builders.kube import deployment


@pytest.fixture
def apps(api_client: client.ApiClient) -> Any:
    api: Any = client.AppsV1Api(api_client)
    api.create_namespaced_deployment("default", deployment("d", replicas=2))
    return api


def test_reading_the_scale_shows_spec_and_status_replicas_and_the_selector(apps):
    scale = apps.read_namespaced_deployment_scale("d", "default")
    assert (scale.spec.replicas, scale.status.replicas, scale.status.selector) == (2, 0, "app=d")


def test_patching_the_scale_changes_only_the_replicas(apps):
    before = apps.read_namespaced_deployment("d", "default")
    scale = apps.patch_namespaced_deployment_scale("d", "default", {"spec": {"replicas": 5}})
    after = apps.read_namespaced_deployment("d", "default")
    assert scale.spec.replicas == 5 and after.spec.replicas == 5
    assert after.spec.template == before.spec.template and after.metadata.generation == 2


def test_replacing_the_scale_with_a_stale_resource_version_is_409(apps):
    scale = apps.read_namespaced_deployment_scale("d", "default")
    apps.patch_namespaced_deployment_scale("d", "default", {"spec": {"replicas": 3}})
    with pytest.raises(client.ApiException) as exc:
        apps.replace_namespaced_deployment_scale("d", "default", scale)
    assert exc.value.status == 409


def test_negative_replicas_are_invalid(apps):
    with pytest.raises(client.ApiException) as exc:
        apps.patch_namespaced_deployment_scale("d", "default", {"spec": {"replicas": -1}})
    assert exc.value.status == 422 and "must be greater than or equal to 0" in str(exc.value.body)
