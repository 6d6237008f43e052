"""`lakecdc init [DIR]`: a new lakecdc project in a folder of its own, outside any checkout.

It writes lakecdc.yml (commented examples per connector), a dbt project (dbt_project.yml, profiles.yml,
packages.yml naming lakecdc's dbt package inside the installed lakecdc, the one root-only macro), the quality
settings (expectations/project.yml) and a .gitignore, then installs the dbt package (`dbt deps`). Existing
files are never overwritten: `--refresh` rewrites only packages.yml (after lakecdc moved or was upgraded).
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from ingest.config import ProjectConfig
from ingest.dbt_runner import DBT_PACKAGE_DIR, install_dbt_packages
from ingest.errors import LakecdcError

TEMPLATE_DIR = Path(__file__).resolve().parent / "project_template"
# template file -> file in the new project
TEMPLATE_FILES = {
    "lakecdc.yml": "lakecdc.yml",
    "profiles.yml": "profiles.yml",
    "packages.yml": "packages.yml",
    "macros/generate_schema_name.sql": "macros/generate_schema_name.sql",
    "expectations/project.yml": "expectations/project.yml",
    "gitignore": ".gitignore",
}


def dbt_project_name(folder: Path) -> str:
    """A dbt project name from the folder's name: lower case letters, digits and _, starting with a letter,
    never `lakecdc` (the package's own name)."""
    name = re.sub(r"[^a-z0-9_]+", "_", folder.name.lower()).strip("_")
    if not name or not name[0].isalpha():
        name = f"project_{name}".rstrip("_")
    return "lakecdc_project" if name == "lakecdc" else name


def dbt_project_yml(name: str) -> str:
    return f"""# The dbt project of this lakecdc project. `lakecdc generate` writes models/staging and models/silver;
# your own gold models go in models/ too. lakecdc's macros come from its dbt package (packages.yml).
name: {name}
version: "1.0.0"
config-version: 2
profile: lakecdc

model-paths: ["models"]
macro-paths: ["macros"]
target-path: "target"
clean-targets: ["target", "dbt_packages"]

# dbt-spark's table DDL takes lakecdc's location clause (every table at <warehouse>/<schema>/<table>)
dispatch:
  - macro_namespace: dbt
    search_order: ["{name}", "lakecdc", "dbt"]

vars:
  # where Delta tables live; `lakecdc dbt` sets LAKECDC_WAREHOUSE to the engine's warehouse
  lakecdc_warehouse: "{{{{ env_var('LAKECDC_WAREHOUSE', 'warehouse') }}}}"
  lakecdc_delete_mode: hard            # hard | soft (docs/silver.md)
  lakecdc_engine: sail                 # sail | databricks | spark: how schema changes are applied
  # lakecdc_merge_strategy: overwrite  # overwrite (Sail's default) | merge (Databricks' and Spark's); docs/silver.md
  lakecdc_variable_decimal_type: string  # numeric without precision: string keeps every digit

models:
  {name}:
    +file_format: delta
    silver:
      +schema: silver
    gold:
      +schema: gold
"""


def _render(template: str, package_dir: Path) -> str:
    text = (TEMPLATE_DIR / template).read_text()
    return text.replace("{package_dir}", package_dir.as_posix()) if template == "packages.yml" else text


def init_project(folder: Path, refresh: bool = False) -> list[Path]:
    """Create the project files in `folder` (created if missing); returns the files written. Raises if any of
    them exists (nothing is written then), unless `refresh`, which rewrites packages.yml only."""
    folder = folder.resolve()
    if folder.exists() and not folder.is_dir():
        raise LakecdcError(f"{folder} is a file, not a folder")
    if not (DBT_PACKAGE_DIR / "dbt_project.yml").is_file():
        raise LakecdcError(f"lakecdc's dbt package is missing from this installation ({DBT_PACKAGE_DIR}); "
                           "reinstall lakecdc")
    if refresh:
        if not (folder / "dbt_project.yml").is_file():
            raise LakecdcError(f"{folder} is not a lakecdc project (no dbt_project.yml): run `lakecdc init` first")
        target = folder / "packages.yml"
        target.write_text(_render("packages.yml", DBT_PACKAGE_DIR))
        return [target]
    contents = {folder / "dbt_project.yml": dbt_project_yml(dbt_project_name(folder))}
    contents.update({folder / dest: _render(src, DBT_PACKAGE_DIR) for src, dest in TEMPLATE_FILES.items()})
    existing = sorted(str(p.relative_to(folder)) for p in contents if p.exists())
    if existing:
        raise LakecdcError(f"{folder} already has {', '.join(existing)}: nothing written "
                           "(`lakecdc init --refresh` only points packages.yml at this lakecdc)")
    for path, text in contents.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    for empty in ("models/silver", "models/gold"):
        (folder / empty).mkdir(parents=True, exist_ok=True)
    return list(contents)


def cmd_init(args: argparse.Namespace, config: ProjectConfig) -> int:
    folder = Path(args.directory)
    written = init_project(folder, refresh=args.refresh)
    for path in written:
        print(f"wrote {path}", flush=True)
    install_dbt_packages(folder.resolve())
    print(f"installed lakecdc's dbt package into {folder.resolve() / 'dbt_packages' / 'lakecdc'}", flush=True)
    if not args.refresh:
        where = "" if folder.resolve() == Path.cwd().resolve() else f"cd {folder}\n  "
        print("next:\n"
              f"  {where}edit lakecdc.yml (uncomment a source)\n"
              "  lakecdc doctor\n"
              "  lakecdc run --until-caught-up\n"
              "  lakecdc generate\n"
              "  lakecdc dbt build\n"
              "  lakecdc quality", flush=True)
    return 0


def add_commands(sub: argparse._SubParsersAction) -> None:
    init = sub.add_parser("init", help="create a new lakecdc project (lakecdc.yml, dbt project, quality settings)",
                          description="Create a lakecdc project in DIRECTORY (default: the current folder): "
                                      "lakecdc.yml with an example per connector, a dbt project using lakecdc's "
                                      "dbt package, expectations/project.yml. Never overwrites a file.")
    init.add_argument("directory", nargs="?", default=".", help="project folder (created if missing)")
    init.add_argument("--refresh", action="store_true",
                      help="only rewrite packages.yml to point at this lakecdc installation")
    init.set_defaults(func=cmd_init)
