"""`glotbench estimate` on a converted lm-eval task that delegates a filter to lm-eval's own class
(mmlu_flan_cot_zeroshot_anatomy with ``--lm-eval-hooks``: its flexible-extract is ``multi_choice_regex``).
Such a task keeps the whole dataset record for lm-eval's code at scoring (``_lm_eval_doc``); the
estimate counts the item's words once, as rendered (lm-eval's ``doc_to_text``, the target and the
choices), not the record a second time, and the prompt's words are those of lm-eval's own contexts.
A fresh process; lm-eval (``pip install --no-deps lm-eval``) with ``datasets`` is needed."""

from __future__ import annotations

import json

from test_lm_eval_filters import CASES
from test_lm_eval_zoo_import import _tasks_dir, cli, lm_eval_requests


def test_estimate_counts_a_delegating_tasks_item_once(tmp_path):
    import os

    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    from lm_eval.api.task import ConfigurableTask
    from lm_eval.tasks._yaml_loader import load_yaml

    from glotbench.estimate.words import count_words

    tasks_dir = _tasks_dir()
    rel, shots, make, outputs, flags = CASES["mmlu_flan_cot_zeroshot_anatomy"]
    n = len(outputs)
    (tmp_path / "data").mkdir()
    files = {}
    for split in ("dev", "validation", "test"):
        files[split] = tmp_path / "data" / f"mmlu_flan_cot_zeroshot_anatomy_{split}.jsonl"
        files[split].write_text("".join(json.dumps(make(i, split)) + "\n" for i in range(n)), encoding="utf-8")
    c = cli("tasks", "import", str(tasks_dir / rel), *flags, "--data-dir", "data", "-o", "t.yaml", cwd=tmp_path)
    assert c.returncode == 0, c.stderr
    assert "_lm_eval_doc" not in c.stderr
    e = cli("runs", "estimate", "-m", "openai:gpt-4o", "-t", "t.yaml", "--plain", "--json", "est.json", cwd=tmp_path)
    assert e.returncode == 0, e.stderr
    est = json.loads((tmp_path / "est.json").read_text())
    [lang] = est["per_language"].values()

    cfg = load_yaml(tasks_dir / rel, resolve_func=True)
    cfg.update(dataset_path="json", dataset_name=None, num_fewshot=shots,
               dataset_kwargs={"data_files": {s: str(p) for s, p in files.items()}})
    task = ConfigurableTask(config=cfg)
    docs = list(task.eval_docs)
    assert len(docs) == n
    want_items = 0
    for doc in docs:  # the item as lm-eval renders it: doc_to_text, the target, the choices
        target = task.doc_to_target(doc)
        choices = task.doc_to_choice(doc) if cfg.get("doc_to_choice") else []
        answer = choices[target] if choices and isinstance(target, int) else target
        want_items += count_words("\n".join([task.doc_to_text(doc), str(answer), *map(str, choices)]))
    contexts = [args[0][0] for args in lm_eval_requests(tasks_dir, rel, shots, files).values()]
    assert len(contexts) == n
    assert lang["prompt"]["words"] == sum(count_words(x) for x in contexts)
    assert lang["items"]["words"] == want_items
