from pathlib import Path

import pytest

from ingest.config import interpolate, load_config
from ingest.errors import ConfigError

pytestmark = pytest.mark.unit


def test_interpolation_reads_environment_and_defaults(monkeypatch):
    monkeypatch.setenv("PGPASS", "s3cret")
    monkeypatch.delenv("MISSING_VAR", raising=False)
    assert interpolate({"a": "${PGPASS}", "b": ["x${MISSING_VAR:-dflt}"]}) == {"a": "s3cret", "b": ["xdflt"]}


def test_missing_variable_names_the_variable_not_a_value(monkeypatch):
    monkeypatch.delenv("NOPE_NOT_SET", raising=False)
    with pytest.raises(ConfigError, match="NOPE_NOT_SET"):
        interpolate({"database.password": "${NOPE_NOT_SET}"})


def test_defaults_without_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for var in ("LAKECDC_CONFIG", "LAKECDC_PROFILE", "LAKECDC_WAREHOUSE"):
        monkeypatch.delenv(var, raising=False)
    config = load_config()
    assert config.engine.profile == "local"
    assert config.engine.warehouse == (tmp_path / "warehouse").resolve()
    assert config.sources == {}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("engine: {profile: nosuch}", "unknown profile 'nosuch'"),
        ("engine: {profile: remote, remote: http://x}", "Spark Connect URL"),
        ("engine: {wharehouse: x}", "unknown setting"),
        ("bogus: 1", "unknown top-level key"),
        ("sources: {s1: {database.hostname: h}}", "needs a 'connector'"),
        ("sources: {'bad name': {connector: postgresql}}", "not a valid source name"),
        ("engine: [1, 2", "not valid YAML"),
        # where: file:line:column, and a key given twice is refused
        ("sources:\n  s1: {connector: postgresql}\n  s2: {connector: postgresql\n",
         r"lakecdc\.yml:\d+:\d+: not valid YAML"),
        ("sources:\n  s1: {connector: postgresql}\n  s1: {connector: mariadb}\n",
         r"lakecdc\.yml:3:3: not valid YAML \(key 's1' given twice \(first on line 2\)\)"),
        ("sources:\n  s1:\n    connector: postgresql\n    topic.prefix: a\n    topic.prefix: b\n",
         r"lakecdc\.yml:5:5: .*key 'topic\.prefix' given twice"),
    ],
)
def test_bad_configuration_is_one_clear_error(tmp_path: Path, monkeypatch, text: str, message: str):
    monkeypatch.delenv("LAKECDC_PROFILE", raising=False)
    monkeypatch.delenv("SPARK_REMOTE", raising=False)
    path = tmp_path / "lakecdc.yml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message):
        load_config(path)


def test_relative_warehouse_is_relative_to_the_config_file(tmp_path: Path, monkeypatch):
    monkeypatch.delenv("LAKECDC_WAREHOUSE", raising=False)
    path = tmp_path / "proj" / "lakecdc.yml"
    path.parent.mkdir()
    path.write_text("engine: {warehouse: wh}\nsources: {inv: {connector: postgresql, topic.prefix: inv}}\n")
    config = load_config(path)
    assert config.engine.warehouse == (tmp_path / "proj" / "wh").resolve()
    assert config.source("inv").properties == {"topic.prefix": "inv"}
    with pytest.raises(ConfigError, match="unknown source 'other'"):
        config.source("other")
