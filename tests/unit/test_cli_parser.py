"""The command line's shape (issue 20 item 7): `--config` is accepted before and after the command, as docs
and users write it; dbt's own arguments are left to dbt."""

from __future__ import annotations

import pytest

from ingest.cli import build_parser

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("argv", [
    ["--config", "p.yml", "run", "--source", "s"],
    ["run", "--config", "p.yml", "--source", "s"],
    ["run", "--source", "s", "--config", "p.yml"],
    ["status", "--config", "p.yml"],
    ["doctor", "--config", "p.yml"],
])
def test_config_before_or_after_the_command(argv: list[str]) -> None:
    assert build_parser().parse_args(argv).config == "p.yml"


def test_without_config_the_default_stays() -> None:
    assert build_parser().parse_args(["run"]).config is None
    assert build_parser().parse_args(["dbt", "build", "--config", "x"]).dbt_args == ["build", "--config", "x"]
