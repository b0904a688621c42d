"""Files no upstream source serves (OpenHuEval's prompts and Chinese SimpleQA's grader, Python
constants upstream) ship in the package and are read from there; a judged run checks its grader
before any request; the repository has the LICENSE and NOTICE.md its files cite."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from glotbench.paths import benchmark_file, packaged_file, resolve_data_file

REPO = Path(__file__).resolve().parents[1]
BENCHMARKS = REPO / "src" / "glotbench" / "benchmarks"
PACKAGED_FILES = BENCHMARKS  # every shipped file lies in a benchmark package's files/ folder
OPENHUEVAL = ["HuMatchingFIB_prompts.json", "HuProverbRea_prompts.json", "HuSimpleQA_infer_prompts.json",
              "HuSimpleQA_judge_prompt.json", "HuStandardFIB_prompts.json", "HuWildBench_judge_prompts.json",
              "HuWildBench_task_groups.json"]
CSQA = ["chinese_simpleqa_eval_grader.json", "judge_chinese_simpleqa_easy.json"]
RELS = [f"openhueval/prompts/{n}" for n in OPENHUEVAL] + [f"chinese_simpleqa/prompts/{n}" for n in CSQA]


@pytest.mark.parametrize("rel", RELS)
def test_prompt_file_ships_in_the_package(rel):
    p = benchmark_file(rel)
    assert p.is_relative_to(PACKAGED_FILES) and p.is_file()
    assert isinstance(json.loads(p.read_text(encoding="utf-8")), dict)
    shared = resolve_data_file(rel)
    if shared.is_file() and not shared.is_relative_to(PACKAGED_FILES):  # same bytes as the extracted copy
        assert p.read_bytes() == shared.read_bytes()


def test_loaders_read_the_packaged_files(tmp_path, monkeypatch):
    from glotbench.tasks.judging.prompts import load_grader
    from glotbench.benchmarks.openhueval.common import load_prompts

    monkeypatch.setenv("GLOTBENCH_DATA", str(tmp_path))  # a data root with no prompt files
    for name in ("chinese_simpleqa", "chinese_simpleqa_en", "husimpleqa"):
        assert load_grader(name).path.is_relative_to(PACKAGED_FILES)
    for name in OPENHUEVAL:
        assert load_prompts(name)


def test_every_packaged_file_has_its_notice():
    notice = (BENCHMARKS / "NOTICE.md").read_text(encoding="utf-8")
    files = sorted(str(p.relative_to(root)) for root in BENCHMARKS.glob("*/files") for p in root.rglob("*.json"))
    assert files == sorted(RELS)
    for rel in files:
        assert f"`{rel}`" in notice, rel
    assert "Apache-2.0" in notice and "MIT" in notice and "Copyright (c) 2024 OpenAI" in notice


def test_repository_license_and_notice_agree_with_their_citations():
    lic = (REPO / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in lic and "Version 2.0, January 2004" in lic and "END OF TERMS AND CONDITIONS" in lic
    assert len(lic.splitlines()) > 190  # the full text, not a pointer to it
    assert 'license = "Apache-2.0"' in (REPO / "pyproject.toml").read_text(encoding="utf-8")
    cited = set()
    for p in BENCHMARKS.glob("*/tasks/**/*.yaml"):
        cited |= set(re.findall(r"\b(NOTICE(?:\.md)?)\b", p.read_text(encoding="utf-8")))
    assert cited == {"NOTICE.md"}
    notice = (REPO / "NOTICE.md").read_text(encoding="utf-8")
    assert "Czech-Bench" in notice and "src/glotbench/benchmarks/NOTICE.md" in notice


def test_judged_run_checks_its_grader_before_any_request(tmp_path, stub_server, monkeypatch):
    """A grader prompt that cannot be read stops the run before the model is called (it used to
    surface only after every model request)."""
    import httpx

    from glotbench.engine.config import RunConfig
    from glotbench.engine.session import run_evaluation
    from glotbench.errors import DataError
    from glotbench.tasks.judging import prompts

    if not resolve_data_file("chinese_simpleqa/chinese_simpleqa.jsonl").is_file():
        pytest.skip("Chinese SimpleQA data not in the shared data")
    spec = dataclasses.replace(prompts.GRADERS["chinese_simpleqa"], file="chinese_simpleqa/prompts/absent.json")
    monkeypatch.setitem(prompts.GRADERS, "chinese_simpleqa", spec)
    base = stub_server("--answer", "A")
    cfg = RunConfig(tasks=["chinese_simpleqa"], model="openai:stub", base_url=base, judge="openai:stub",
                    judge_base_url=base, limit=2, output=str(tmp_path / "run"))
    with pytest.raises(DataError, match="absent.json: grading prompt file for 'chinese_simpleqa' not found"):
        run_evaluation(cfg, show_progress=False)
    assert httpx.get(base.replace("/v1", "/_log"), timeout=10).json()["log"] == []
