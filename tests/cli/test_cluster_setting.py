"""``LLMISVC_ROUTER_CLUSTER`` and ``--cluster``: validated before anything starts, one line naming the
variable or the flag (exit status 2)."""

from __future__ import annotations

import pytest

from llmisvc_runtime.settings import OrchestratorSettings, SettingsError


def test_the_cluster_name_defaults_to_none_and_comes_from_the_environment() -> None:
    assert OrchestratorSettings.from_env({}).cluster == ""
    assert OrchestratorSettings.from_env({"LLMISVC_ROUTER_CLUSTER": "eu-1"}).cluster == "eu-1"
    assert OrchestratorSettings.from_env({}).with_flags(cluster="us-2").cluster == "us-2"


def test_a_cluster_name_that_is_no_dns_label_names_the_variable() -> None:
    refused = r"^LLMISVC_ROUTER_CLUSTER: 'EU_1' is not a DNS-1123 label"
    with pytest.raises(SettingsError, match=refused) as err:
        OrchestratorSettings.from_env({"LLMISVC_ROUTER_CLUSTER": "EU_1"})
    assert err.value.code == 2


def test_a_cluster_flag_that_is_no_dns_label_names_the_flag() -> None:
    with pytest.raises(SettingsError, match=r"^--cluster: 'eu/1' is not a DNS-1123 label"):
        OrchestratorSettings.from_env({}).with_flags(cluster="eu/1")
