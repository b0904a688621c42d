"""Every Czech-Bench benchmark: the first scored item's prompt, character for character, against
the reference's template filled from the same record (read here by hand, the reference's way)
with the same five exemplars. Hub-only benchmarks use the hand-made fixtures in the Hub's
layout (tests/fixtures/czech_bench_hub), loaded through ``datasets`` from a local folder."""

from __future__ import annotations

import ast
import csv
import json

import pytest

from czech_bench_ref import hub_root, jsonl, reference_dir, reference_prompt

pytest.importorskip("datasets")


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return hub_root(tmp_path_factory.mktemp("cb"))


@pytest.fixture()
def task_of(root, monkeypatch):
    monkeypatch.setenv("GLOTBENCH_DATA", str(root))
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    from glotbench.tasks.registry import resolve

    return lambda name: resolve([name])[0]


def _shared(rel: str):
    from glotbench.paths import resolve_data_file

    p = resolve_data_file(rel)
    if not p.exists():
        pytest.skip(f"{rel} not in the shared data")
    return p


def _check(task, key: str, **variables) -> None:
    plain, system, user = reference_prompt(key, **variables)
    sample = task.samples(limit=1)[0]
    assert task.plain_prompt(sample) == plain
    assert task.chat_messages(sample) == [{"role": "system", "content": system}, {"role": "user", "content": user}]


def _hub(root, key, *parts):
    return root / "czech_bench" / "hf" / key / "/".join(parts)


def test_agree(root, task_of):
    rec = json.loads((root / "czech_bench/agree/test.json").read_text(encoding="utf-8"))[0]
    _check(task_of("czech_bench.agree"), "agree", sentence=rec["sentence"], choices=rec["choices"])


@pytest.mark.parametrize("key,path,ctx,claim", [
    ("anli", ("test.jsonl",), "evidence", "claim"),
    ("anli_en", ("plain_text", "test_r3-00000-of-00001.jsonl"), "premise", "hypothesis"),
    ("snli", ("test.jsonl",), "evidence", "claim"),
    ("snli_en", ("plain_text", "test-00000-of-00001.jsonl"), "premise", "hypothesis"),
    ("ctkfacts_en", ("test.jsonl",), "evidence", "claim"),
])
def test_nli(root, task_of, key, path, ctx, claim):
    rec = jsonl(_hub(root, key, *path))[0]
    _check(task_of(f"czech_bench.{key}"), key, context=rec[ctx], claim=rec[claim])


def test_ctkfacts_real_record(task_of):
    path = _shared("czech_bench/ctkfacts/export_08-30-2021_0200am_173.jsonl")
    rec = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    evidence = "\n".join(" ".join(p) for p in rec["evidence"])  # the offline copy's join (see the task description)
    _check(task_of("czech_bench.ctkfacts_full"), "ctkfacts", context=evidence, claim=rec["claim"])


@pytest.mark.parametrize("key,cfg", [("arc_challenge", "ARC-Challenge"), ("arc_easy", "ARC-Easy"),
                                     ("arc_challenge_en", "ARC-Challenge"), ("arc_easy_en", "ARC-Easy")])
def test_arc(root, task_of, key, cfg):
    rec = jsonl(_hub(root, key, cfg, "test-00000-of-00001.jsonl"))[0]
    sel = "".join(f"{lab}) {txt}\n" for lab, txt in zip(rec["choices"]["label"], rec["choices"]["text"]))
    _check(task_of(f"czech_bench.{key}"), key, question=rec["question"], choices=sel)


@pytest.mark.parametrize("key,split", [("belebele", "ces_Latn"), ("belebele_en", "eng_Latn")])
def test_belebele_exemplars_excluded(root, task_of, key, split):
    rows = jsonl(_hub(root, key, "data", f"{split}.jsonl"))
    scored = [r for i, r in enumerate(rows) if i not in {0, 3, 5, 4, 8}]
    rec = scored[0]
    task = task_of(f"czech_bench.{key}")
    _check(task, key, context=rec["flores_passage"], question=rec["question"], option1=rec["mc_answer1"],
           option2=rec["mc_answer2"], option3=rec["mc_answer3"], option4=rec["mc_answer4"])
    assert [s.vars["question"] for s in task.samples()] == [r["question"] for r in scored]


def test_czech_news_subset(root, task_of):
    import pandas as pd
    from datasets import Dataset

    rows = jsonl(_hub(root, "czech_news", "test.jsonl"))
    # the reference's filter_data, restated with the same libraries
    df = pd.DataFrame([r for r in rows if r["category"] in [1, 2, 3, 4, 7]])
    df = df.groupby("category", group_keys=True).apply(lambda x: x.sample(200, random_state=42).reset_index(drop=True))
    if "category" not in df.columns:  # pandas >= 2.2 leaves the grouping column in the index only
        df = df.reset_index(level=0)
    df["category"] = df["category"].replace(7, 5)
    ds = Dataset.from_pandas(df).shuffle(seed=42)
    task = task_of("czech_bench.czech_news")
    _check(task, "czech_news", brief=ds[0]["brief"])
    samples = task.samples()
    assert len(samples) == 1000
    assert [s.vars["brief"] for s in samples] == ds["brief"]
    assert [s.target for s in samples] == [str(c) for c in ds["category"]]


def test_facebook_real_record(task_of):
    folder = _shared("czech_bench/facebook_comments")
    posts = (folder / "gold-posts.txt").read_text(encoding="utf-8").splitlines()
    labels = (folder / "gold-labels.txt").read_text(encoding="utf-8").splitlines()
    first = next(p for p, lab in zip(posts, labels) if lab.strip() != "b")
    task = task_of("czech_bench.facebook_comments_full")
    _check(task, "facebook_comments", text=first)
    assert len(task.raw_records("test")) == sum(lab.strip() != "b" for lab in labels) == 9752


def test_mall_real_record(task_of):
    path = _shared("czech_bench/mall_reviews/data_test.csv")
    with path.open(encoding="utf-8", newline="") as fh:
        first = next(csv.DictReader(fh))
    task = task_of("czech_bench.mall_reviews_full")
    _check(task, "mall_reviews", text=first["text"])
    assert task.samples(limit=1)[0].target == str(int(first["label"]) - 1)


def test_gsm8k_cs(root, task_of):
    rec = jsonl(_hub(root, "gsm8k", "test.jsonl"))[0]
    _check(task_of("czech_bench.gsm8k"), "gsm8k", question=rec["question"])


def test_gsm8k_en_real_record(task_of):
    rec = jsonl(_shared("gsm8k_en/test.jsonl"))[0]
    task = task_of("czech_bench.gsm8k_en")
    _check(task, "gsm8k_en", question=rec["question"])
    assert task.samples(limit=1)[0].target == int(rec["answer"].split("####")[-1].strip().replace(",", ""))


def test_klokanek_real_record(task_of):
    import unicodedata

    from glotbench.benchmarks.czech_bench.klokanek import load_klokanek

    _shared("czech_klokanek/dataset.json")
    few = reference_dir() / "klokanek" / "prompts.py"
    text = next(ast.literal_eval(n.value) for n in ast.parse(few.read_text(encoding="utf-8")).body
                if isinstance(n, ast.Assign) and n.targets[0].id == "few_shot")
    norm = lambda s: " ".join(unicodedata.normalize("NFKC", s).replace("\u2212", "-").split())  # noqa: E731
    exemplars = {norm(block.split("\n")[0]) for block in text.split("Úloha:\n")[1:]}
    usable = [it for it in load_klokanek() if it.usable]
    scored = [it for it in usable if norm(it.question) not in exemplars]
    assert len(usable) - len(scored) == 5  # each of the five exemplars found once among the usable items
    task = task_of("czech_bench.klokanek")
    it = scored[0]
    _check(task, "klokanek", question=it.question, **{f"option{k}": v for k, v in it.options.items()})
    assert len(task.samples()) == len(scored) == 872


@pytest.mark.parametrize("key", ["mmlu", "mmlu_en"])
def test_mmlu_topic_shots(root, task_of, key):
    test = jsonl(_hub(root, key, "all", "test-00000-of-00001.jsonl"))
    dev = jsonl(_hub(root, key, "all", "dev-00000-of-00001.jsonl"))
    tree = ast.parse((reference_dir() / key / "topics.py").read_text(encoding="utf-8"))
    consts = {n.targets[0].id: ast.literal_eval(n.value) for n in tree.body if isinstance(n, ast.Assign)}
    topic = next(t for cat in consts["topics"].values() for t in cat if any(r["subject"] == t for r in test))
    assert topic == "formal_logic"  # Humanities come first
    cs = key == "mmlu"
    shots = ""
    for r in [d for d in dev if d["subject"] == topic][:5]:
        shots += (f"Otázka:\n{r['question']}\nMožnosti:\n" if cs else f"Question:\n{r['question']}\nChoices:\n")
        shots += "".join(f"{j + 1}) {r['choices'][j]}\n" for j in range(4))
        shots += (f"Odpověď:\n{r['answer']}\n\n" if cs else f"Answer:\n{r['answer']}\n\n")
    rec = next(r for r in test if r["subject"] == topic)
    name = consts["topic_translations"][topic] if cs else topic.replace("_", " ")
    task = task_of(f"czech_bench.{key}")
    _check(task, key, topic=name, shots=shots, question=rec["question"], options=rec["choices"])
    samples = task.samples()
    assert "professional_law" not in {s.vars["subject"] for s in samples}
    sec = next(s for s in samples if s.vars["subject"] == "security_studies")
    assert sec.vars["shots"].count("\n\n") == 1  # one exemplar for security_studies


def test_sqad(root, task_of):
    rec = jsonl(_hub(root, "sqad", "test.jsonl"))[0]
    _check(task_of("czech_bench.sqad"), "sqad", context=rec["context"], question=rec["question"])


def test_squad(root, task_of):
    data = json.loads((root / "czech_bench/squad_cs/dev-v2.0.json").read_text(encoding="utf-8"))
    para = data["data"][0]["paragraphs"][0]
    _check(task_of("czech_bench.squad"), "squad", context=para["context"], question=para["qas"][0]["question"])


@pytest.mark.parametrize("key", ["subjectivity", "subjectivity_en"])
def test_subjectivity(root, task_of, key):
    rec = jsonl(_hub(root, key, "test.jsonl"))[0]
    _check(task_of(f"czech_bench.{key}"), key, text=rec["text"])


@pytest.mark.parametrize("key", ["truthfulqa", "truthfulqa_en"])
def test_truthfulqa_seeded_shuffle(root, task_of, key):
    from sklearn.utils import shuffle

    rows = jsonl(_hub(root, key, "multiple_choice", "validation-00000-of-00001.jsonl"))[5:]
    task = task_of(f"czech_bench.{key}")
    for i, (rec, sample) in enumerate(zip(rows, task.samples())):
        choices, labels = shuffle(rec["mc1_targets"]["choices"], rec["mc1_targets"]["labels"], random_state=i)
        sel = "".join(f"{k + 1}) {c}\n" for k, c in enumerate(choices))
        plain, _, _ = reference_prompt(key, question=rec["question"], choices=sel)
        assert task.plain_prompt(sample) == plain
        assert sample.target == str(labels.index(1) + 1)
    assert len(task.samples()) == len(rows)


def test_system_prompt_override_replaces_the_reference_system_text(task_of):
    """--system-prompt reaches Czech-Bench's exact prompts (chat and plain), the user text unchanged."""
    from glotbench.tasks.request_settings import RequestSettings

    _shared("czech_bench/mall_reviews/data_test.csv")
    task = task_of("czech_bench.mall_reviews_full")
    sample = task.samples(limit=1)[0]
    own = task.chat_messages(sample)
    [chat] = task.requests(sample, mode="generate", chat=True, settings=RequestSettings(system_prompt="Jsi hodnotitel."))
    assert list(chat.messages) == [{"role": "system", "content": "Jsi hodnotitel."}, own[1]]
    [plain] = task.requests(sample, mode="generate", chat=False, settings=RequestSettings(system_prompt="S: "))
    assert plain.prompt == "S: " + own[1]["content"]
