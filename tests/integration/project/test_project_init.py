"""`lakecdc init`: a project of the user's own, outside the repository, using lakecdc's dbt package.

End to end (sources, `run`, `generate`, `dbt build` in an init'ed project) is covered by
tests/integration/project/test_e2e_silver.py (PostgreSQL and MariaDB, every project there is made by
`lakecdc init`) and, from the built wheel, by the new-user walkthrough in
tests/integration/project/test_wheel.py."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml

from ingest.config import load_config
from ingest.connectors import registry
from ingest.dbt_runner import DBT_PACKAGE_DIR, _packages_missing
from ingest.errors import LakecdcError
from ingest.project_init import TEMPLATE_DIR, dbt_project_name, init_project
from tests.conftest import ROOT, run_lakecdc

PROJECT_FILES = ["dbt_project.yml", "lakecdc.yml", "profiles.yml", "packages.yml", "macros/generate_schema_name.sql",
                 "expectations/project.yml", ".gitignore"]


@pytest.mark.parametrize(("folder", "name"), [
    ("shop", "shop"), ("My-Shop", "my_shop"), ("2024 data", "project_2024_data"), ("lakecdc", "lakecdc_project"),
    ("--", "project"), ("x.y.z", "x_y_z"), ("Überdata", "berdata"),
])
def test_dbt_project_name_from_the_folder(folder: str, name: str) -> None:
    assert dbt_project_name(Path("/tmp") / folder) == name
    assert re.fullmatch(r"[a-z][a-z0-9_]*", name)


def test_init_writes_a_project_and_never_overwrites(tmp_path: Path) -> None:
    folder = tmp_path / "new" / "shop"
    written = init_project(folder)
    assert sorted(str(p.relative_to(folder)) for p in written) == sorted(PROJECT_FILES)
    project = yaml.safe_load((folder / "dbt_project.yml").read_text())
    assert project["name"] == "shop" and project["profile"] == "lakecdc"
    assert project["dispatch"] == [{"macro_namespace": "dbt", "search_order": ["shop", "lakecdc", "dbt"]}]
    packages = yaml.safe_load((folder / "packages.yml").read_text())
    assert packages == {"packages": [{"local": DBT_PACKAGE_DIR.as_posix()}]}
    assert (folder / "models" / "silver").is_dir()
    config = load_config(folder / "lakecdc.yml")
    assert config.sources == {} and config.engine.warehouse == folder / "warehouse"

    (folder / "lakecdc.yml").write_text("# mine\n")
    (folder / "packages.yml").write_text("packages: []\n")
    with pytest.raises(LakecdcError, match=r"already has .*lakecdc\.yml.*nothing written"):
        init_project(folder)
    assert (folder / "lakecdc.yml").read_text() == "# mine\n"
    assert init_project(folder, refresh=True) == [folder / "packages.yml"]
    assert yaml.safe_load((folder / "packages.yml").read_text()) == packages
    assert (folder / "lakecdc.yml").read_text() == "# mine\n"   # --refresh touches packages.yml only


def test_refresh_needs_a_project_and_init_needs_a_folder(tmp_path: Path) -> None:
    with pytest.raises(LakecdcError, match="not a lakecdc project"):
        init_project(tmp_path, refresh=True)
    (tmp_path / "file").write_text("x")
    with pytest.raises(LakecdcError, match="is a file, not a folder"):
        init_project(tmp_path / "file")


def _example_blocks(text: str) -> dict[str, str]:
    """The commented source examples of the template: name -> YAML of that source, uncommented."""
    blocks: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        head = re.match(r"#  (\w+):", line)
        if head:
            current = head.group(1)
            blocks[current] = []
        elif current and line.startswith("#    "):
            blocks[current].append(line[1:].split(" #")[0].rstrip())
        else:
            current = None
    return {name: f"  {name}:\n" + "\n".join(lines) + "\n" for name, lines in blocks.items()}


def test_every_example_source_of_the_template_is_a_valid_configuration(tmp_path: Path, monkeypatch) -> None:
    """Uncommented as they stand, the examples pass the same property checks `run` and `doctor` make."""
    text = (TEMPLATE_DIR / "lakecdc.yml").read_text()
    blocks = _example_blocks(text)
    assert set(blocks) == {"shop", "inventory", "legacy"}
    connectors = set()
    for name in ("SHOP_PASSWORD", "INVENTORY_PASSWORD"):
        monkeypatch.setenv(name, "secret")
    (tmp_path / "landing" / "legacy").mkdir(parents=True)
    for name, block in blocks.items():
        path = tmp_path / f"{name}.yml"
        path.write_text(text.replace("sources: {}\n", "sources:\n" + block, 1))
        config = load_config(path)
        source = config.sources[name]
        connectors.add(source.connector)
        registry.create(source, base_dir=tmp_path).close()   # raises a ConfigError naming every bad property
    assert connectors == {"postgresql", "mariadb", "debezium-json"}


def test_template_files_are_the_repository_project_files() -> None:
    """The repository is a lakecdc project too: its profile and quality settings are the ones init writes."""
    assert (TEMPLATE_DIR / "profiles.yml").read_text() == (ROOT / "profiles.yml").read_text()
    assert (TEMPLATE_DIR / "expectations" / "project.yml").read_text() == \
        (ROOT / "expectations" / "project.yml").read_text()


def test_cli_init_installs_the_dbt_package_and_dbt_reinstalls_it_when_missing(tmp_path: Path) -> None:
    result = run_lakecdc("init", "proj", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    project = tmp_path / "proj"
    link = project / "dbt_packages" / "lakecdc"
    assert (link / "dbt_project.yml").is_file() and (link / "macros" / "lakecdc_cdc.sql").is_file()
    assert "cd proj" in result.stdout and "lakecdc run --until-caught-up" in result.stdout
    again = run_lakecdc("init", "proj", cwd=tmp_path)
    assert again.returncode == 2 and "already has" in again.stderr and "Traceback" not in again.stderr

    # a fresh clone of the user's project has no dbt_packages: `lakecdc dbt` installs them first

    shutil.rmtree(project / "dbt_packages")
    assert _packages_missing(project)
    parsed = run_lakecdc("dbt", "parse", cwd=project)
    assert parsed.returncode == 0, parsed.stdout + parsed.stderr
    assert "installing dbt packages (dbt deps)" in parsed.stdout
    assert (link / "dbt_project.yml").is_file() and not _packages_missing(project)
