"""``fewshot_config``'s own prompt fields (``doc_to_text``, ``doc_to_target``, ``doc_to_choice``,
``target_delimiter``, ``fewshot_delimiter``: lm-eval's FewshotConfig) write the shots, the task's own
fields the item, as lm-eval's ``fewshot_context`` does. mmlu_prox_lite_cs_health as shipped in the
lm-eval wheel (5 shots ``first_n`` from the validation split, written by lm-eval's own
``fewshot_to_text`` with an empty ``doc_to_target``; the item by ``doc_to_text``; ``process_docs``
keeping one subject; a ``regex`` answer filter) is converted with ``--lm-eval-hooks`` and run by the
CLI against the stub: every prompt equals lm-eval's ConfigurableTask's on the same records. A task file
with template overrides and its own delimiters is compared in-process, plain and multi-turn chat."""

from __future__ import annotations

import json

import pytest
from test_lm_eval_zoo_import import _tasks_dir, cli, lm_eval_requests

N = 8


def _prox(i: int, split: str) -> dict:
    opts = {f"option_{k}": (f"Možnost {k} ({split} {i})" if k < 4 + i % 3 else None) for k in range(10)}
    return {"question_id": i, "question": f"Otázka číslo {i} ({split} q{i})?", **opts, "answer": "ABCD"[i % 4],
            "answer_index": i % 4, "cot_content": f"A: Přemýšlejme krok za krokem. Důvod {i}. Odpověď je ({'ABCD'[i % 4]}).",
            "category": "health" if i % 4 != 3 else "law", "src": "x"}


def test_mmlu_prox_shots_written_by_fewshot_configs_own_hook(tmp_path):
    from glotbench.testing.servers import start_stub, stop

    tasks_dir = _tasks_dir()
    rel = "mmlu_prox/cs/mmlu_prox_lite_cs_health.yaml"
    (tmp_path / "data").mkdir()
    files = {}
    for split in ("validation", "test"):
        files[split] = tmp_path / "data" / f"mmlu_prox_lite_cs_health_{split}.jsonl"
        files[split].write_text("".join(json.dumps(_prox(i, split), ensure_ascii=False) + "\n" for i in range(N)),
                                encoding="utf-8")
    c = cli("tasks", "import", str(tasks_dir / rel), "--lm-eval-hooks", "--data-dir", "data", "--language", "cs",
            "-o", "prox.yaml", cwd=tmp_path)
    assert c.returncode == 0, c.stderr
    import yaml

    spec = yaml.safe_load((tmp_path / "prox.yaml").read_text(encoding="utf-8"))
    assert spec["options"]["fewshot_format"] == {"doc_to_target": ""}
    assert "fewshot_doc_to_text" in spec["options"]["lm_eval_hooks"]
    base, proc = start_stub("--answer", "Odpověď je (B).")
    try:
        r = cli("run", "-m", "openai:stub", "--base-url", base, "-M", "chat=false", "-t", "prox.yaml", "-o", "run",
                "--no-progress", "--bootstrap", "20", "--max-retries", "0", cwd=tmp_path)
    finally:
        stop(proc)
    assert r.returncode == 0, r.stderr[-2000:]
    theirs = lm_eval_requests(tasks_dir, rel, 5, files)
    ours = {int(x["idx"]): x["prompt"] for x in map(json.loads, (tmp_path / "run" / "samples.jsonl").read_text().splitlines())}
    assert len(theirs) == len(ours) == 6  # process_docs kept the health questions only
    for k, (doc_id, reqs) in enumerate(sorted(theirs.items())):
        assert list(ours.values())[k] == reqs[0][0], f"doc {doc_id}"
    first = reqs[0][0]
    assert first.count("Důvod") == 5 and "Odpověď: Přemýšlejme krok za krokem. Důvod 0." in first  # the shots' CoT
    assert first.endswith("Odpověď: Přemýšlejme krok za krokem.")  # the item without its answer


def test_fewshot_config_templates_and_delimiters_write_the_shots(tmp_path, monkeypatch):
    _tasks_dir()
    import yaml
    from lm_eval.api.task import ConfigurableTask

    from glotbench.tasks.lm_eval_import import convert, dump
    from glotbench.tasks.registry import resolve

    src = {"task": "fs_format", "dataset_path": "json", "output_type": "multiple_choice", "test_split": "test",
           "fewshot_split": "train", "doc_to_text": "Q: {{q}}\nA:", "doc_to_target": "{{gold}}",
           "doc_to_choice": "{{opts}}", "num_fewshot": 3, "description": "Pick.\n\n",
           "fewshot_config": {"sampler": "first_n", "doc_to_text": "Example {{q}} ->", "doc_to_target": "{{gold}}",
                              "doc_to_choice": "{{opts | map('upper') | list}}", "target_delimiter": " :: ",
                              "fewshot_delimiter": "\n---\n"}}
    (tmp_path / "data").mkdir()
    files = {}
    for split in ("train", "test"):
        files[split] = tmp_path / "data" / f"fs_format_{split}.jsonl"
        files[split].write_text("".join(json.dumps({"q": f"{split} {i}?", "opts": [f"yes {i}", "no"], "gold": i % 2})
                                        + "\n" for i in range(5)), encoding="utf-8")
    spec, problems = convert(src, language="en", data_dir="data")
    assert not [p for p in problems if p.startswith("cannot run")]
    (tmp_path / "ours.yaml").write_text(dump(spec, "lm.yaml"), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    [ours] = resolve([str(tmp_path / "ours.yaml")])
    cfg = {**src, "dataset_kwargs": {"data_files": {s: str(p) for s, p in files.items()}}}
    plain_task, chat_task = ConfigurableTask(config=dict(cfg)), ConfigurableTask(config=dict(cfg))
    for s, doc in zip(ours.samples(), plain_task.eval_docs):
        plain = plain_task.fewshot_context(doc, 3)
        chat = chat_task.fewshot_context(doc, 3, apply_chat_template=True, fewshot_as_multiturn=True,
                                         chat_template=lambda msgs, add_generation_prompt=True: msgs)
        assert ours.plain_prompt(s, 3) == plain
        assert ours.chat_messages(s, 3) == chat
    assert "Example train 1? -> :: NO\n---\n" in plain and plain.endswith("Q: test 4?\nA:")


def test_a_fewshot_hook_without_the_flag_is_refused(tmp_path):
    r = cli("tasks", "import", str(_tasks_dir() / "mmlu_prox/cs/mmlu_prox_lite_cs_health.yaml"), "-o", "o.yaml",
            cwd=tmp_path)
    assert r.returncode == 2 and not (tmp_path / "o.yaml").exists()
    assert "fewshot_config.doc_to_text: !function utils.fewshot_to_text" in r.stderr


@pytest.fixture(autouse=True)
def _offline(monkeypatch):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
