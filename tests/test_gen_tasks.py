"""The tasks the Czech-Bench thesis planned (§5.5): ČSFD sentiment, CsFEVER NLI, WikiLingua cs/en
summarisation, ÚFAL abstracts and WMT newstest2018 translation. Each runs on its hand-made fixture
(tests/fixtures/czech_bench_planned, the source's own record format and file layout) through the
stub server in a fresh process, and every number is recomputed here from the fixture records and
the canned answers: scikit-learn for the classification metrics, sacrebleu and rouge-score for
BLEU/chrF/ROUGE, and a plain re-statement of SumeCzech's rouge_raw.py for ROUGE_RAW."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FIX = REPO / "tests" / "fixtures" / "czech_bench_planned"
HF = FIX / "czech_bench" / "hf"
CLASSIFICATION = ("czech_bench.csfd_reviews", "czech_bench.csfever_nli")
GENERATIVE = ("czech_bench.wiki_lingua_cs", "czech_bench.wiki_lingua_en", "czech_bench.ufal_abstracts_cs_en",
              "czech_bench.ufal_abstracts_en_cs", "czech_bench.wmt18_cs_en", "czech_bench.wmt18_en_cs")
NEW = CLASSIFICATION + GENERATIVE


def _env(**extra) -> dict:
    import glotbench

    src = Path(glotbench.__file__).resolve().parents[1]  # the glotbench this test imports (REPO/src)
    env = {**os.environ, "PYTHONPATH": str(src), "GLOTBENCH_DATA": str(FIX), "HF_DATASETS_OFFLINE": "1",
           "GLOTBENCH_OFFLINE": "1", "OPENAI_API_KEY": "x", "COLUMNS": "250"}
    env.update(extra)
    return env


def _cli(*args, timeout=300, **env):
    return subprocess.run([sys.executable, "-m", "glotbench", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, env=_env(**env), cwd=str(REPO))


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def _run_stub(stub_server, tmp_path, task: str, canned: list[dict], name: str = "run") -> tuple[dict, list[dict], str]:
    """``task`` on the stub answering ``canned`` ({match, response}); (task results, samples, stdout)."""
    path = tmp_path / f"{name}.canned.jsonl"
    path.write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in canned), encoding="utf-8")
    base = stub_server("--responses", str(path), "--answer", "UNMATCHED")
    out = tmp_path / name
    r = _cli("run", "--model", "openai:stub", "--base-url", base, "--tasks", task, "-o", out, "--no-progress")
    assert r.returncode == 0, r.stderr[-3000:]
    res = json.loads((out / "results.json").read_text(encoding="utf-8"))
    return res["tasks"][task], _jsonl(out / "samples.jsonl"), r.stdout


def _value(res: dict, metric: str) -> float:
    return res["metrics"][metric]["value"]


# ------------------------------------------------------------------ listing and sources


def test_every_new_task_lists_in_a_fresh_process():
    r = _cli("tasks", "--suite", "czech_bench_planned")
    assert r.returncode == 0, r.stderr
    rows = {ln.split("\t")[0]: ln.split("\t") for ln in r.stdout.splitlines() if ln.startswith("czech_bench.")}
    present = [t for t in NEW if t in rows]
    assert set(present) == set(NEW), sorted(set(NEW) - set(rows))
    # the item counts on the fixtures, counted here from the files
    assert rows["czech_bench.csfd_reviews"][2] == str(len(_jsonl(HF / "csfd_reviews" / "test.jsonl")))
    assert rows["czech_bench.csfever_nli"][2] == str(len(_jsonl(HF / "csfever_nli" / "data" / "paper_test.jsonl")))


def test_each_task_declares_its_source_and_licence():
    from glotbench.tasks.registry import resolve

    for task in resolve(list(NEW)):
        src = task.spec.source
        assert src.license and src.url and src.fetch, task.name
        for origin in src.fetch:
            assert origin.kind == "hf" and origin.repo and origin.revision and origin.include, task.name
        assert "czech_bench_planned" in task.spec.suites and "czech_bench" not in task.spec.suites


# ------------------------------------------------------------------ classification


def _csfd_gold(rating: int) -> str:
    return "-1" if rating in (0, 1) else ("0" if rating in (2, 3) else "1")


def _reference_int(text: str):
    """Czech-Bench's int rule, restated: the first whitespace token, ')' stripped, int()."""
    parts = text.split()
    tok = parts[0].strip().strip(")") if parts else text
    try:
        return int(tok)
    except ValueError:
        return None


def _check_classification(res: dict, golds: list[str], answers: list[str], ours: list):
    from sklearn.metrics import accuracy_score, f1_score

    ref = [_reference_int(a) for a in answers]
    kept = [(g, str(p)) for g, p in zip(golds, ref) if p is not None]
    assert _value(res, "cb_parsed") == pytest.approx(len(kept) / len(golds), abs=1e-6)
    assert _value(res, "cb_accuracy") == pytest.approx(accuracy_score(*zip(*kept)), abs=1e-6)
    assert _value(res, "cb_macro_f1") == pytest.approx(f1_score(*zip(*kept), average="macro"), abs=1e-6)
    preds = ["<unparseable>" if p is None else str(p) for p in ours]
    assert _value(res, "accuracy") == pytest.approx(accuracy_score(golds, preds), abs=1e-6)
    # glotbench's macro-F1: over the gold labels, unparseable counted wrong (docs/scorers-and-metrics.md)
    assert _value(res, "macro_f1") == pytest.approx(
        f1_score(golds, preds, labels=sorted(set(golds)), average="macro", zero_division=0), abs=1e-6)


def test_csfd_on_its_fixture(stub_server, tmp_path):
    recs = _jsonl(HF / "csfd_reviews" / "test.jsonl")
    golds = [_csfd_gold(r["rating_int"]) for r in recs]
    answers = ["-1", "0", "0", "1", "1", "1", "nevím", "-1", "0)"]
    ours = [-1, 0, 0, 1, 1, 1, None, -1, 0]  # glotbench's number extractor on the same answers
    assert len(answers) == len(recs)
    res, samples, _ = _run_stub(stub_server, tmp_path, "czech_bench.csfd_reviews",
                                [{"match": r["comment"], "response": a} for r, a in zip(recs, answers)])
    assert res["n_scored"] == len(recs)
    assert [s["gold"] for s in samples] == golds  # 0-1 negative, 2-3 neutral, 4-5 positive
    _check_classification(res, golds, answers, ours)
    assert set(res["slices"]["rating"]) == {str(r["rating_int"]) for r in recs}


def test_csfever_on_its_fixture(stub_server, tmp_path):
    recs = _jsonl(HF / "csfever_nli" / "data" / "paper_test.jsonl")
    golds = [str(["REFUTES", "NOT ENOUGH INFO", "SUPPORTS"].index(r["label"])) for r in recs]
    answers = ["2", "0", "2", "2", "1", "1", "Klasifikace: 2"]
    ours = [2, 0, 2, 2, 1, 1, 2]  # the reference cannot read the last one; glotbench's extractor can
    res, samples, _ = _run_stub(stub_server, tmp_path, "czech_bench.csfever_nli",
                                [{"match": r["claim"], "response": a} for r, a in zip(recs, answers)])
    assert [s["gold"] for s in samples] == golds
    _check_classification(res, golds, answers, ours)


def test_record_functions_name_the_bad_field():
    from glotbench.benchmarks.czech_bench.planned import csfd_sentiment, csfever_nli
    from glotbench.errors import DataError

    with pytest.raises(DataError, match="rating_int"):
        csfd_sentiment({"review_id": "x", "comment": "c", "rating_int": 6})
    with pytest.raises(DataError, match="'label'"):
        csfever_nli({"id": "1", "evidence": "e", "claim": "c", "label": "MAYBE"})
    # the ClassLabel's int form reads the same as its name
    assert csfever_nli({"id": "1", "evidence": "e", "claim": "c", "label": 1})["target"] == \
        csfever_nli({"id": "1", "evidence": "e", "claim": "c", "label": "NOT ENOUGH INFO"})["target"] == "1"


# ------------------------------------------------------------------ WikiLingua items


def _fixture_source():
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_fixtures", FIX / "make_fixtures.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_wiki_lingua_items_are_the_sections_and_english_is_filtered_to_czech():
    from glotbench.benchmarks.czech_bench.planned import wiki_lingua_items

    src = _fixture_source()
    expected_cs = [(f"{eu}#{en}", sec["document"], sec["summary"]) for _, secs in src.CS_ARTICLES for sec, eu, en in secs]
    cs, notes = wiki_lingua_items(HF / "wiki_lingua_cs", "cs")
    assert [(i["id"], i["document"], i["summary"]) for i in cs] == expected_cs and notes == []
    en, notes = wiki_lingua_items(HF / "wiki_lingua_en", "en")
    by_key = {f"{url}#{sec['section_name']}": sec for url, secs in src.EN_ARTICLES.items() for sec in secs}
    assert [(i["id"], i["document"], i["summary"]) for i in en] == \
        [(k, by_key[k]["document"], by_key[k]["summary"]) for k, _, _ in expected_cs]
    assert not any("Tie-a-Tie" in i["id"] for i in en)  # an English article no Czech one is aligned to
    assert notes == []


def test_wiki_lingua_notes_czech_items_without_english(tmp_path):
    import shutil

    import pyarrow as pa
    import pyarrow.parquet as pq

    from glotbench.benchmarks.czech_bench.planned import wiki_lingua_items

    folder = tmp_path / "wl"
    shutil.copytree(HF / "wiki_lingua_en", folder)
    path = folder / "english" / "train-00000-of-00001.parquet"
    rows = [r for r in pq.read_table(path).to_pylist() if r["url"] != "https://www.wikihow.com/Wash-a-Car"]
    pq.write_table(pa.Table.from_pylist(rows), path)
    en, notes = wiki_lingua_items(folder, "en")
    assert len(en) == 3 and len(notes) == 1 and "2 of 5 Czech item(s) have no aligned English section" in notes[0]


# ------------------------------------------------------------------ generative: plain re-statements


def rouge_raw_tokens(text: str) -> list[str]:
    """SumeCzech's rouge_raw.py tokenisation, restated: a space at each of the first 32 word
    boundaries, then the first 32 whitespace runs made one space (the script passes re.UNICODE, 32,
    as both re.sub calls' count), split at single spaces, lowercased."""
    return [w.lower() for w in re.sub(r"\s+", " ", re.sub(r"\b", " ", text, count=32), count=32).strip().split(" ")]


def rouge_raw_f(gold: str, system: str, n: str) -> float:
    g, s = rouge_raw_tokens(gold), rouge_raw_tokens(system)
    if n == "l":
        lcs = [[0] * (len(s) + 1) for _ in range(len(g) + 1)]
        for a in range(len(g)):
            for b in range(len(s)):
                lcs[a + 1][b + 1] = lcs[a][b] + 1 if g[a] == s[b] else max(lcs[a][b + 1], lcs[a + 1][b])
        hit, tg, ts = lcs[-1][-1], len(g), len(s)
    else:
        k = int(n)
        grams = lambda ws: [tuple(ws[i:i + k]) for i in range(len(ws) - k + 1)]  # noqa: E731
        gg, sg = grams(g), grams(s)
        hit = sum(min(sg.count(x), gg.count(x)) for x in set(sg))
        tg, ts = len(gg), len(sg)
    return 2 * hit / (tg + ts) if tg + ts else 0.0


def _rouge_score(gold: str, system: str) -> dict:
    """rouge-score's F-measures without stemming, tokens = lowercased letter/digit runs (what
    glotbench's tokenizer gives on Latin text; rouge-score's default drops every accented letter)."""
    from rouge_score import rouge_scorer

    class Tok:
        def tokenize(self, text):
            return re.findall(r"[^\W_]+", text.lower())

    sc = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=False, tokenizer=Tok()).score(gold, system)
    return {k: v.fmeasure for k, v in sc.items()}


def _degrade(ref: str, k: int) -> str:
    """A different imperfect answer per item: exact, last word dropped, first half, words swapped, unrelated."""
    words = ref.split()
    return [ref, " ".join(words[:-1]), " ".join(words[: max(1, len(words) // 2)]),
            " ".join(words[1:2] + words[:1] + words[2:]), "Nic z toho není pravda."][k % 5]


def _translation_records(task: str) -> tuple[list[str], list[str]]:
    import pyarrow.parquet as pq

    src_lang, tgt_lang = task.rsplit("_", 2)[-2:]
    if "ufal_abstracts" in task:
        recs = _jsonl(HF / "ufal_abstracts" / "train.jsonl")
        return [r[f"abstract_{src_lang}"] for r in recs], [r[f"abstract_{tgt_lang}"] for r in recs]
    rows = pq.read_table(HF / "wmt19_cs_en" / "cs-en" / "validation-00000-of-00001.parquet").to_pylist()
    return [r["translation"][src_lang] for r in rows], [r["translation"][tgt_lang] for r in rows]


@pytest.mark.parametrize("task", [t for t in GENERATIVE if "wiki_lingua" not in t])
def test_translation_on_its_fixture(stub_server, tmp_path, task):
    import sacrebleu

    sources, refs = _translation_records(task)
    hyps = [_degrade(r, k) for k, r in enumerate(refs)]
    res, samples, stdout = _run_stub(stub_server, tmp_path, task,
                                     [{"match": s, "response": h} for s, h in zip(sources, hyps)])
    assert [s["gold"] for s in samples] == refs and [s["pred"] for s in samples] == hyps
    assert _value(res, "bleu") == pytest.approx(sacrebleu.BLEU().corpus_score(hyps, [refs]).score, abs=1e-4)
    assert _value(res, "chrf") == pytest.approx(sacrebleu.CHRF().corpus_score(hyps, [refs]).score, abs=1e-4)
    assert res["headline"] == "chrf"
    assert "nrefs:1" in res["metric_definitions"]["bleu"]["signature"]  # sacrebleu's signature in results.json
    assert "bleu" in stdout and "chrf" in stdout


def _wiki_items(side: str) -> list[tuple[str, str]]:
    from glotbench.benchmarks.czech_bench.planned import wiki_lingua_items

    items, _ = wiki_lingua_items(HF / f"wiki_lingua_{side}", side)
    return [(i["document"], i["summary"]) for i in items]


def test_wiki_lingua_pair_values_and_crosslingual_compare(stub_server, tmp_path):
    canned, expected = [], {}
    for side in ("cs", "en"):
        pairs = _wiki_items(side)
        hyps = [_degrade(summ, k) for k, (_, summ) in enumerate(pairs)]
        canned += [{"match": doc, "response": h} for (doc, _), h in zip(pairs, hyps)]
        golds = [summ for _, summ in pairs]
        exp = {f"rouge_raw_{n}": sum(rouge_raw_f(g, h, n) for g, h in zip(golds, hyps)) / len(golds) for n in ("1", "2", "l")}
        rs = [_rouge_score(g, h) for g, h in zip(golds, hyps)]
        exp.update({k: sum(r[k] for r in rs) / len(rs) for k in ("rouge1", "rouge2", "rougeL")})
        expected[f"czech_bench.wiki_lingua_{side}"] = exp
    path = tmp_path / "canned.jsonl"
    path.write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in canned), encoding="utf-8")
    base = stub_server("--responses", str(path), "--answer", "UNMATCHED")
    out = tmp_path / "run"
    r = _cli("run", "--model", "openai:stub", "--base-url", base, "--tasks", "czech_bench.wiki_lingua_cs",
             "--tasks", "czech_bench.wiki_lingua_en", "-o", out, "--no-progress")
    assert r.returncode == 0, r.stderr[-3000:]
    tasks = json.loads((out / "results.json").read_text(encoding="utf-8"))["tasks"]
    for name, exp in expected.items():
        assert tasks[name]["headline"] == "rouge_raw_l" and tasks[name]["counterpart"]
        for metric, value in exp.items():
            assert _value(tasks[name], metric) == pytest.approx(value, abs=1e-5), (name, metric)
    # paired items share ids: the English item is the section the Czech one is aligned to
    ids = {side: [json.loads(x)["sample_id"] for x in (out / "samples.jsonl").read_text(encoding="utf-8").splitlines()
                  if f"wiki_lingua_{side}" in x] for side in ("cs", "en")}
    assert ids["cs"] == ids["en"] and len(ids["cs"]) == 5
    cmp = _cli("runs", "compare", "--crosslingual", out, "--metric", "rouge_raw_l")
    assert cmp.returncode == 0, cmp.stderr[-3000:]
    text = cmp.stdout
    assert "rouge_raw_l" in text and "wiki_lingua" in text
    # each side's ROUGE_RAW-L with the interval its run states (results.json's ci95)
    for side in ("cs", "en"):
        res = tasks[f"czech_bench.wiki_lingua_{side}"]["metrics"]["rouge_raw_l"]
        lo, hi = res["ci95"]
        assert lo <= res["value"] <= hi and lo < hi
        shown = f"{expected[f'czech_bench.wiki_lingua_{side}']['rouge_raw_l']:.3f} [{lo:.3f}, {hi:.3f}]"
        assert shown in text, (shown, text)


def test_crosslingual_compare_prints_each_runs_interval(stub_server, tmp_path):
    """`compare --crosslingual` shows each side's score with the 95% interval its run states
    (an ČSFD twin pair, so the check needs no text metric)."""
    import yaml

    from glotbench.tasks.registry import all_specs

    spec = yaml.safe_load(all_specs()["czech_bench.csfd_reviews"][1].read_text(encoding="utf-8"))
    folder = tmp_path / "tasks"
    folder.mkdir()
    for name, lang, other in (("xl.csfd_cs", "cs", "xl.csfd_en"), ("xl.csfd_en", "en", "xl.csfd_cs")):
        twin = {**spec, "name": name, "language": lang, "suites": ["xl"], "counterpart": other}
        (folder / f"{name}.yaml").write_text(yaml.safe_dump(twin, allow_unicode=True), encoding="utf-8")
    recs = _jsonl(HF / "csfd_reviews" / "test.jsonl")
    canned = tmp_path / "canned.jsonl"
    canned.write_text("".join(json.dumps({"match": r["comment"], "response": a}, ensure_ascii=False) + "\n"
                              for r, a in zip(recs, ["-1", "0", "0", "1", "1", "1", "0", "-1", "1"])), encoding="utf-8")
    base = stub_server("--responses", str(canned))
    out = tmp_path / "run"
    r = _cli("run", "--model", "openai:stub", "--base-url", base, "--tasks", "xl", "-o", out, "--no-progress",
             GLOTBENCH_TASKS_PATH=str(folder))
    assert r.returncode == 0, r.stderr[-3000:]
    cmp = _cli("runs", "compare", "--crosslingual", out, "--json", tmp_path / "x.json", GLOTBENCH_TASKS_PATH=str(folder))
    assert cmp.returncode == 0, cmp.stderr[-3000:]
    tasks = json.loads((out / "results.json").read_text(encoding="utf-8"))["tasks"]
    for name in ("xl.csfd_cs", "xl.csfd_en"):
        m = tasks[name]["metrics"]["cb_accuracy"]
        lo, hi = m["ci95"]
        assert lo < hi
        assert f"{m['value']:.3f} [{lo:.3f}, {hi:.3f}]" in cmp.stdout, cmp.stdout
    got = json.loads((tmp_path / "x.json").read_text(encoding="utf-8"))["intervals"]
    row = next(x for x in got if x["pair"] == "xl.csfd_cs cb_accuracy")
    assert row["native_ci95"] == tasks["xl.csfd_cs"]["metrics"]["cb_accuracy"]["ci95"]
    assert row["counterpart_ci95"] == tasks["xl.csfd_en"]["metrics"]["cb_accuracy"]["ci95"]


# ------------------------------------------------------------------ glotbench data pull through a loopback Hub

MAIN_COMMIT = "1" * 40  # what `main` names on the mirror (wmt/wmt19 is declared at main)


def test_data_pull_fetches_every_task_from_its_declared_source_and_runs(tmp_path, stub_server):
    """Each task's source.fetch against a loopback Hub serving the fixtures in each repository's
    layout at the declared revision: `glotbench data pull czech_bench_planned` fetches exactly the
    included files, and a run reads them from the cache (no GLOTBENCH_DATA)."""
    from glotbench.tasks.registry import resolve
    from glotbench.testing.hub_mirror import start_mirror

    layouts = {"fewshot-goes-multilingual/cs_csfd-movie-reviews": "csfd_reviews", "ctu-aic/csfever_nli": "csfever_nli",
               "ufal/bilingual-abstracts-corpus": "ufal_abstracts", "wmt/wmt19": "wmt19_cs_en",
               "esdurmus/wiki_lingua": "wiki_lingua_en"}
    m = start_mirror(tmp_path / "mirror")
    try:
        specs = {t.name: t.spec for t in resolve(list(NEW))}
        for repo, folder in layouts.items():
            rev = next(o.revision for s in specs.values() for o in s.source.fetch if o.repo == repo)
            commit = MAIN_COMMIT if rev == "main" else rev
            files = {p.relative_to(HF / folder).as_posix(): p for p in (HF / folder).rglob("*") if p.is_file()}
            # files the tasks do not include, which the pull must leave on the Hub
            files["README.md"] = b"---\nlicense: other\n---\n"
            m.add_hf(repo, commit, files, refs={"main": commit})
        env = {**m.env(), "GLOTBENCH_CACHE_DIR": str(tmp_path / "cache"), "HF_HOME": str(tmp_path / "hf_home"),
               "GLOTBENCH_DATA": "", "GLOTBENCH_OFFLINE": "", "HF_DATASETS_OFFLINE": "", "HF_HUB_OFFLINE": ""}
        r = _cli("data", "pull", "czech_bench_planned", timeout=600, **env)
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
        data = tmp_path / "cache" / "data"
        for name, spec in specs.items():
            o = spec.source.fetch[0]
            got = sorted(p.relative_to(data / o.to).as_posix() for p in (data / o.to).rglob("*")
                         if p.is_file() and not any(part.startswith(".") for part in p.relative_to(data / o.to).parts))
            served = sorted(p.relative_to(HF / layouts[o.repo]).as_posix() for p in (HF / layouts[o.repo]).rglob("*") if p.is_file())
            import fnmatch

            assert got == [p for p in served if any(fnmatch.fnmatch(p, pat) for pat in o.include)], name
        base = stub_server("--answer", "1")
        out = tmp_path / "run"
        r = _cli("run", "--suite", "czech_bench_planned", "-m", "openai:stub", "--base-url", base, "-o", out,
                 "--no-progress", timeout=600, **{**env, "GLOTBENCH_OFFLINE": "1", "HF_HUB_OFFLINE": "1"})
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
        res = json.loads((out / "results.json").read_text(encoding="utf-8"))
        assert res["skipped_tasks"] == {} and sorted(res["tasks"]) == sorted(NEW)
        for name, t in res["tasks"].items():
            assert t["data"]["root_kind"] == "cache" and t["n_errors"] == 0, name
    finally:
        m.stop()


# ------------------------------------------------------------------ the embedded model (slow)


@pytest.mark.slow
def test_embedded_model_wiki_lingua_pair_and_translation(smollm2_path, tmp_path):
    """The issue's recipe on SmolLM2 (CPU): the WikiLingua pair with --limit 10 and compare
    --crosslingual print ROUGE_RAW with intervals; a translation task prints BLEU and chrF. The
    numbers are recomputed from samples.jsonl (plain ROUGE_RAW, sacrebleu)."""
    import sacrebleu

    out = tmp_path / "wiki"
    r = _cli("run", "--tasks", "czech_bench.wiki_lingua_cs", "--tasks", "czech_bench.wiki_lingua_en", "--limit", 10,
             "--model", "embedded", "--max-tokens", 64, "-o", out, "--no-progress", timeout=3000)
    assert r.returncode == 0, r.stderr[-3000:]
    print(r.stdout)
    assert "rouge_raw_l" in r.stdout
    tasks = json.loads((out / "results.json").read_text(encoding="utf-8"))["tasks"]
    samples = _jsonl(out / "samples.jsonl")
    for side in ("cs", "en"):
        name = f"czech_bench.wiki_lingua_{side}"
        mine = [s for s in samples if s["task"] == name]
        assert len(mine) == 5 and tasks[name]["n_scored"] == 5  # the fixture has five sections
        want = sum(rouge_raw_f(s["gold"], s["pred"] or "", "l") for s in mine) / len(mine)
        assert _value(tasks[name], "rouge_raw_l") == pytest.approx(want, abs=1e-5)
        assert tasks[name]["metrics"]["rouge_raw_l"].get("ci95")
    cmp = _cli("runs", "compare", "--crosslingual", out, "--metric", "rouge_raw_l")
    assert cmp.returncode == 0, cmp.stderr[-3000:]
    print(cmp.stdout)
    for side in ("cs", "en"):
        m = tasks[f"czech_bench.wiki_lingua_{side}"]["metrics"]["rouge_raw_l"]
        assert f"{m['value']:.3f} [{m['ci95'][0]:.3f}, {m['ci95'][1]:.3f}]" in cmp.stdout
    out = tmp_path / "wmt"
    r = _cli("run", "--tasks", "czech_bench.wmt18_en_cs", "--limit", 10, "--model", "embedded", "--max-tokens", 64,
             "-o", out, "--no-progress", timeout=3000)
    assert r.returncode == 0, r.stderr[-3000:]
    print(r.stdout)
    assert "bleu" in r.stdout and "chrf" in r.stdout
    res = json.loads((out / "results.json").read_text(encoding="utf-8"))["tasks"]["czech_bench.wmt18_en_cs"]
    samples = _jsonl(out / "samples.jsonl")
    hyps, refs = [s["pred"] or "" for s in samples], [s["gold"] for s in samples]
    assert _value(res, "chrf") == pytest.approx(sacrebleu.CHRF().corpus_score(hyps, [refs]).score, abs=1e-4)
    assert _value(res, "bleu") == pytest.approx(sacrebleu.BLEU().corpus_score(hyps, [refs]).score, abs=1e-4)
