"""README's first install line installs what its first command needs; the Hub-hosted Czech-Bench
sets (read through `datasets`, CZE-NEC's draw through pandas) are the extra `hub`, which README
names and .ci/run installs; without it each such task says so in one line (tests/test_hub_extra.py)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SUITES_NEED = {"datasets", "pandas"}


def _name(req: str) -> str:
    return re.split(r"[<>=!~\[; ]", req, maxsplit=1)[0].strip().lower()


def _installed_by(line: str, meta: dict) -> set[str]:
    """The distributions `pip install ... -e .[extras]` (or `.`) of this project brings in."""
    specs = re.findall(r"pip install[^&;]*?-e\s+['\"]?\.(\[[^\]'\"]*\])?", line)
    assert specs, f"no `pip install -e .` in: {line}"
    names = {_name(r) for r in meta["project"]["dependencies"]}
    for extras in specs:
        for extra in filter(None, extras.strip("[]").split(",")):
            names |= {_name(r) for r in meta["project"]["optional-dependencies"][extra.strip()]}
    return names


def test_first_install_line_brings_what_the_builtin_suites_need():
    meta = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    first = re.search(r"```bash\n(.*?)\n```", readme, re.S).group(1)
    assert "pip install" in first and "glotbench run" in first  # it is the install line
    assert {"llama-cpp-python", "numpy"} <= _installed_by(first, meta)
    assert "czech_bench" not in first  # the first command needs no Hub-format task
    assert SUITES_NEED == {_name(r) for r in meta["project"]["optional-dependencies"]["hub"]}
    assert "pip install 'glotbench[hub]'" in readme or "'.[serve,plots,analysis,cs,hub]'" in readme
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    ci_line = next(ln for ln in ci.splitlines() if re.search(r"pip install[^#]*-e\s+['\"]?\.", ln))
    assert SUITES_NEED <= _installed_by(ci_line, meta)
