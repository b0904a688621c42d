"""Which rows Czech-Bench scores: the reference's subset rules, applied to the whole split
before the per-record function. Each task names its rule in ``options.subset`` (YAML).

* ``exclude_indices``: drop rows at these positions (Belebele: its five few-shot exemplars).
* ``exclude_questions``: drop rows whose question is one of the exemplars' (Klokánek, whose
  offline copy has no Hub row numbers).
* ``skip_first``: drop the first N rows (TruthfulQA: ``validation[5:]``).
* ``first_n``: keep the first N rows (SQuAD 2.0-cs: the first 4,000 dev questions).
* ``czech_news``: categories 1, 2, 3, 4, 7; 200 per category drawn with pandas ``sample``
  (``random_state`` 42) per category in category order; 7 renamed 5; then the rows shuffled
  as ``datasets.Dataset.shuffle(seed=42)`` does.
* ``mmlu``: topics in the reference's category order (``professional_law`` left out); each
  topic's few-shot block built from the first rows of the dev split.
"""

from __future__ import annotations

import unicodedata
from typing import Any

from glotbench.errors import TaskSpecError


def exclude_indices(rows: list[dict], indices: list[int]) -> list[dict]:
    drop = set(indices)
    return [r for i, r in enumerate(rows) if i not in drop]


def _question_key(text: str) -> str:
    # the exemplars were retyped: "KAN - GAR" in the prompt is "KAN − GAR" (U+2212) in the data
    return " ".join(unicodedata.normalize("NFKC", text).replace("\u2212", "-").split())


def exclude_questions(rows: list[dict], questions: list[str], key: str = "question") -> list[dict]:
    drop = {_question_key(q) for q in questions}
    return [r for r in rows if _question_key(str(r.get(key, ""))) not in drop]


def czech_news(rows: list[dict], categories: list[int], per_category: int, seed: int, rename: dict) -> list[dict]:
    import numpy as np

    from glotbench.data.hub_folder import require_hub

    require_hub("CZE-NEC's per-category draw (pandas sample, as the reference)", "pandas")
    import pandas as pd

    df = pd.DataFrame([r for r in rows if r.get("category") in categories])
    parts = [g.sample(per_category, random_state=seed).reset_index(drop=True) for _, g in df.groupby("category")]
    df = pd.concat(parts, ignore_index=True)
    df["category"] = df["category"].replace({int(k): int(v) for k, v in rename.items()})
    order = np.random.default_rng(seed).permutation(len(df))
    return [{k: (v.item() if hasattr(v, "item") else v) for k, v in df.iloc[int(i)].to_dict().items()} for i in order]


def mmlu(test_rows: list[dict], dev_rows: list[dict], opts: dict[str, Any], render_shot) -> list[dict]:
    """Rows in the reference's order (category, then topic), each with its topic's shot block."""
    out: list[dict] = []
    translations = opts.get("topic_names") or {}
    one_shot = set(opts.get("one_shot_topics") or [])
    for category, topics in opts["categories"].items():
        for topic in topics:
            dev = [r for r in dev_rows if r["subject"] == topic]
            n = 1 if topic in one_shot else int(opts.get("shots", 5))
            shots = "".join(render_shot(r) for r in dev[:n])
            text = translations.get(topic) if translations else topic.replace("_", " ")
            k = 0
            for r in test_rows:
                if r["subject"] == topic:
                    out.append({**r, "_topic_text": text, "_shots": shots, "_category": category, "_topic_pos": k})
                    k += 1
    return out


def apply(rows: list[dict], subset: dict[str, Any] | None, where: str) -> list[dict]:
    if not subset:
        return rows
    rule = subset.get("rule")
    if rule == "exclude_indices":
        return exclude_indices(rows, subset["indices"])
    if rule == "exclude_questions":
        return exclude_questions(rows, subset["questions"])
    if rule == "skip_first":
        return rows[int(subset["n"]):]
    if rule == "first_n":
        return rows[: int(subset["n"])]
    if rule == "czech_news":
        return czech_news(rows, subset["categories"], subset["per_category"], subset["seed"], subset.get("rename", {}))
    raise TaskSpecError(f"{where}: field 'options.subset.rule': unknown rule {rule!r}")
