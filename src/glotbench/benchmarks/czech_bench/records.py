"""Czech-Bench records: readers for the offline copies and one small record function per
benchmark that turns a row (Hub format, or the offline copy's) into the prompt variables the
task YAML names. Which split/subset is scored lives in :mod:`glotbench.benchmarks.czech_bench.subsets`.

Every function here takes one row dict and returns one dict (or None to drop the row). The
returned keys are the reference's prompt variables (``context``, ``claim``, ``question``...),
``target`` (the gold answer in the form the reference compares: an int for numeric answers, a
letter for ARC/Klokánek), and for multiple-choice views ``choices``/``labels``.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

from glotbench.errors import DataError

# ----------------------------------------------------------------------------- offline readers


def read_facebook_txt(folder: Path) -> list[dict]:
    """kysely/sentiment-analysis-czech ``gold-posts.txt`` + ``gold-labels.txt`` (line i = line i).
    Labels n/0/p -> -1/0/1 (the HF set's ``sentiment_int``); ``b`` (bipolar) rows are dropped,
    as the label-balanced HF version has no such class."""
    posts = (folder / "gold-posts.txt").read_text(encoding="utf-8").splitlines()
    labels = (folder / "gold-labels.txt").read_text(encoding="utf-8").splitlines()
    if len(posts) != len(labels):
        raise DataError(f"{folder}: gold-posts.txt has {len(posts)} lines but gold-labels.txt has {len(labels)}")
    mapping = {"n": -1, "0": 0, "p": 1}
    out = []
    for i, (post, lab) in enumerate(zip(posts, labels)):
        lab = lab.strip()
        if lab == "b":
            continue
        if lab not in mapping:
            raise DataError(f"{folder / 'gold-labels.txt'}: line {i + 1}: unknown label {lab!r} (expected n, 0, p or b)")
        out.append({"id": str(i), "comment": post, "sentiment_int": mapping[lab]})
    return out


def read_mall_csv(path: Path) -> list[dict]:
    """JanPalasek/sentiment-analysis-czech ``data_test.csv`` (text,label 0/1/2) -> HF shape
    ``comment``/``rating_int`` in -1/0/1."""
    out = []
    with path.open(encoding="utf-8", newline="") as fh:
        for i, row in enumerate(csv.DictReader(fh)):
            try:
                lab = int(row["label"]) - 1
            except (KeyError, ValueError):
                raise DataError(f"{path}: record {i}: field 'label' must be 0, 1 or 2") from None
            out.append({"id": str(i), "comment": row.get("text", ""), "rating_int": lab})
    return out


CTKFACTS_LABELS = {"REFUTES": 0, "NOT ENOUGH INFO": 1, "SUPPORTS": 2}


def read_ctkfacts_jsonl(path: Path) -> list[dict]:
    """aic-factcheck/ctkfacts export snapshot -> HF ``ctu-aic/ctkfacts_nli`` shape
    (``evidence`` one string: the evidence paragraphs joined by a newline; ``label`` 0/1/2 as
    the prompt defines: 0 refutes, 1 not enough info, 2 supports)."""
    out = []
    with path.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            rec = json.loads(line)
            if rec.get("label") not in CTKFACTS_LABELS:
                raise DataError(f"{path}: line {n}: field 'label' must be one of {', '.join(CTKFACTS_LABELS)}")
            paras = [" ".join(p) if isinstance(p, list) else str(p) for p in rec.get("evidence") or []]
            out.append({"id": str(rec.get("id", n)), "claim": rec["claim"], "evidence": "\n".join(paras),
                        "label": CTKFACTS_LABELS[rec["label"]]})
    return out


def read_hf_arrow(path: Path) -> list[dict]:
    """A ``datasets`` ``save_to_disk`` data file (one Arrow IPC stream, ``data-00000-of-00001.arrow``):
    the rows as stored. Czech-Bench keeps the splits the thesis scored in this form
    (``benchmarks/<task>/data/test/``), which its evaluators read with ``load_from_disk``."""
    try:
        import pyarrow as pa
    except ImportError:
        raise DataError(f"{path}: reading an Arrow file needs pyarrow (installed with `datasets`)") from None
    try:
        with pa.memory_map(str(path)) as src:
            table = pa.ipc.open_stream(src).read_all()
    except (pa.ArrowInvalid, OSError) as err:
        raise DataError(f"{path}: not an Arrow stream as `datasets` save_to_disk writes it: "
                        f"{str(err).splitlines()[0] if str(err) else type(err).__name__}") from None
    return table.to_pylist()


def read_json_array(path: Path) -> list[dict]:
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, list):
        raise DataError(f"{path}: expected a JSON array of records")
    return data


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def read_squad_v2_json(path: Path) -> list[dict]:
    """A SQuAD 2.0 file (``{"data": [{"title", "paragraphs": [{"context", "qas": [...]}]}]}``),
    flattened in file order into ``{id, title, context, question, answers: {text, answer_start}}``
    (the rows the ``squad_v2`` loading script yields)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    out = []
    for art in data.get("data", []):
        for para in art.get("paragraphs", []):
            for qa in para.get("qas", []):
                answers = qa.get("answers") or []
                out.append({"id": qa["id"], "title": art.get("title", ""), "context": para["context"],
                            "question": qa["question"],
                            "answers": {"text": [a["text"] for a in answers],
                                        "answer_start": [a["answer_start"] for a in answers]}})
    return out


def read_klokanek_raw(path: Path) -> list[dict]:
    """hynky1999/Klokan ``dataset.json`` -> the ``hynky/klokan-qa`` row shape
    (``question, A..E, correct_answer, category``), keeping only the items the existing loader
    finds usable (no picture, options intact, kept by the author's review)."""
    from glotbench.benchmarks.czech_bench.klokanek import load_klokanek

    return [{"id": it.id, "question": it.question, **it.options, "correct_answer": it.answer,
             "category": it.category, "year": it.year} for it in load_klokanek(path) if it.usable]


READERS = {
    "facebook_txt": read_facebook_txt,
    "mall_csv": read_mall_csv,
    "ctkfacts_jsonl": read_ctkfacts_jsonl,
    "json": read_json_array,
    "jsonl": read_jsonl,
    "squad_v2_json": read_squad_v2_json,
    "klokanek_raw": read_klokanek_raw,
    "hf_arrow": read_hf_arrow,
}

# ----------------------------------------------------------------------------- record functions


def _ids(rec: dict, *keys: str) -> str | None:
    for k in keys:
        if rec.get(k) is not None:
            return str(rec[k])
    return None


def _cls(rec: dict, text_vars: dict, label_key: str, labels: list[int]) -> dict:
    gold = rec[label_key]
    return {"id": _ids(rec, "id", "uid", "comment_id", "_pos"), **text_vars, "target": str(int(gold)),
            "choices": [str(x) for x in labels], "labels": [str(x) for x in labels]}


def nli_cs(rec: dict) -> dict:
    """ANLI-cs, CTKFacts (cs, en), SNLI-cs: ``evidence``/``claim``/``label`` 0..2."""
    return _cls(rec, {"context": rec["evidence"], "claim": rec["claim"]}, "label", [0, 1, 2])


def nli_en(rec: dict) -> dict:
    """ANLI-en (facebook/anli), SNLI-en (stanfordnlp/snli): ``premise``/``hypothesis``/``label``."""
    return _cls(rec, {"context": rec["premise"], "claim": rec["hypothesis"]}, "label", [0, 1, 2])


def agree(rec: dict) -> dict:
    return {"id": _ids(rec, "id", "_pos"), "sentence": rec["sentence"], "choices": list(rec["choices"]),
            "labels": ["1", "2", "3", "4", "5"], "target": str(int(rec["answer_idx"]) + 1)}


def arc(rec: dict) -> dict | None:
    """ARC (cs, en). The reference skips rows whose label and text lists differ in length and
    shows the options as ``<label>) <text>`` lines, each ending in a newline."""
    texts, labels = rec["choices"]["text"], rec["choices"]["label"]
    if len(texts) != len(labels):
        return None
    block = "".join(f"{lab}) {txt}\n" for lab, txt in zip(labels, texts))
    return {"id": _ids(rec, "id", "_pos"), "question": rec["question"], "choice_selection": block,
            "choices": list(texts), "labels": [str(x) for x in labels], "target": str(rec["answerKey"])}


def belebele(rec: dict) -> dict:
    opts = [rec[f"mc_answer{k}"] for k in (1, 2, 3, 4)]
    return {"id": _ids(rec, "_pos"), "context": rec["flores_passage"], "question": rec["question"],
            "option1": opts[0], "option2": opts[1], "option3": opts[2], "option4": opts[3],
            "choices": opts, "labels": ["1", "2", "3", "4"], "target": str(int(rec["correct_answer_num"]))}


def czech_news(rec: dict) -> dict:
    return _cls(rec, {"brief": rec["brief"]}, "category", [1, 2, 3, 4, 5])


def facebook_comments(rec: dict) -> dict:
    return _cls(rec, {"text": rec["comment"]}, "sentiment_int", [-1, 0, 1])


def mall_reviews(rec: dict) -> dict:
    return _cls(rec, {"text": rec["comment"]}, "rating_int", [-1, 0, 1])


def subjectivity(rec: dict) -> dict:
    return _cls(rec, {"text": rec["text"]}, "label", [0, 1])


_GSM_FINAL = re.compile(r"#### ([\d,-]+)$")


def gsm8k(rec: dict) -> dict:
    """GSM8K (cs, en). ``answer`` is the int (CIIRC-NLP/gsm8k-cs) or the solution text ending in
    ``#### N`` (the original ``gsm8k`` rows, which the reference maps the same way)."""
    ans = rec["answer"]
    if not isinstance(ans, int):
        m = _GSM_FINAL.search(str(ans))
        if not m:
            raise DataError(f"GSM8K record {rec.get('_pos')}: field 'answer' has no final '#### N'")
        ans = int(m.group(1).replace(",", ""))
    return {"id": _ids(rec, "id", "_pos"), "question": rec["question"], "target": ans}


def klokanek(rec: dict) -> dict:
    return {"id": _ids(rec, "id", "_pos"), "question": rec["question"],
            **{f"option{k}": rec[k] for k in "ABCDE"}, "choices": [rec[k] for k in "ABCDE"],
            "labels": list("ABCDE"), "target": rec["correct_answer"], "category": rec["category"]}


def mmlu(rec: dict) -> dict | None:
    """MMLU (cs, en); ``topic``/``shots``/``category`` were added by the subset step. The
    reference skips rows without exactly four options."""
    if len(rec["choices"]) != 4:
        return None
    return {"id": f"{rec['subject']}-{rec['_topic_pos']}", "question": rec["question"], "options": list(rec["choices"]),
            "topic": rec["_topic_text"], "shots": rec["_shots"], "subject": rec["subject"], "category": rec["_category"],
            "choices": list(rec["choices"]), "labels": ["1", "2", "3", "4"], "target": str(int(rec["answer"]) + 1)}


def sqad(rec: dict) -> dict:
    return {"id": _ids(rec, "item_id", "id", "_pos"), "context": rec["context"], "question": rec["question"],
            "target": list(rec["answers"])}


def squad(rec: dict) -> dict:
    return {"id": _ids(rec, "id", "_pos"), "context": rec["context"], "question": rec["question"],
            "target": list(rec["answers"]["text"])}


def truthfulqa(rec: dict) -> dict | None:
    """TruthfulQA mc1 (cs, en): options shuffled with scikit-learn's ``shuffle`` seeded by the
    row's position in the scored subset, numbered ``1) ...`` lines each ending in a newline."""
    from sklearn.utils import shuffle

    choices, flags = rec["mc1_targets"]["choices"], rec["mc1_targets"]["labels"]
    if len(choices) != len(flags):
        return None
    choices, flags = shuffle(list(choices), list(flags), random_state=rec["_pos"])
    block = "".join(f"{k + 1}) {c}\n" for k, c in enumerate(choices))
    return {"id": _ids(rec, "_pos"), "question": rec["question"], "choice_selection": block, "choices": list(choices),
            "labels": [str(k + 1) for k in range(len(choices))], "target": str(flags.index(1) + 1)}
