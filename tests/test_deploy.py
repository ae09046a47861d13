"""The Cloud Run deploy in cloudbuild.yaml: one process per instance, sized as measured,
probed as Orion starts (docs/operations.md, "Sizing an instance")."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from bench.burst import deployed_concurrency

ROOT = Path(__file__).resolve().parents[1]


def _deploy_args() -> list[str]:
    build = yaml.safe_load((ROOT / "cloudbuild.yaml").read_text())
    [deploy] = [step for step in build["steps"] if step.get("id") == "deploy"]
    return [str(arg) for arg in deploy["args"]]


def _flag(name: str) -> str:
    [value] = [arg.split("=", 1)[1] for arg in _deploy_args() if arg.startswith(f"--{name}=")]
    return value


def test_one_process_on_one_vcpu_at_the_concurrency_the_burst_benchmark_measures() -> None:
    assert _flag("cpu") == "1"
    assert int(_flag("concurrency")) == deployed_concurrency()
    assert not any("HTTP_WORKERS" in arg for arg in _deploy_args()), "no worker processes"
    operations = (ROOT / "docs" / "operations.md").read_text()
    assert "`--cpu=1`" in operations and f"`--concurrency={_flag('concurrency')}`" in operations


def test_traffic_waits_for_readyz_and_liveness_asks_only_healthz() -> None:
    assert re.search(r"httpGet\.path=/readyz\b", _flag("startup-probe"))
    assert re.search(r"httpGet\.path=/healthz\b", _flag("liveness-probe"))
    # The listeners run after Bolt's acknowledgement: the CPU must stay allocated.
    assert "--no-cpu-throttling" in _deploy_args()
