"""The folders task YAML files are searched in: those the benchmark packages declare
(``bench.tasks(folder)``, applied by the catalog) and ``GLOTBENCH_TASKS_PATH``."""

from __future__ import annotations

import os
from pathlib import Path

from glotbench.registry import require_catalog

# folders of task YAMLs the benchmark packages declare (glotbench.catalog applies bench.tasks(folder))
PACKAGE_DIRS: list[Path] = []


def add_task_dir(folder: Path) -> None:
    if folder not in PACKAGE_DIRS:
        PACKAGE_DIRS.append(folder)


def task_dirs(extra: list[Path] | None = None) -> list[Path]:
    require_catalog()
    dirs = list(PACKAGE_DIRS)
    for p in os.environ.get("GLOTBENCH_TASKS_PATH", "").split(os.pathsep):
        if p:
            dirs.append(Path(p))
    dirs.extend(extra or [])
    return dirs
