"""Czech-Bench Hub sets in the layouts the Hub serves today (tests/fixtures/hub_mirror): SNLI's -1
rows scored as the reference scores them, Belebele read from today's per-language configs and
from the layout before 2024-08."""

from __future__ import annotations

import pytest

from czech_bench_ref import MIRROR, mirror_root

pytest.importorskip("datasets")


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return mirror_root(tmp_path_factory.mktemp("mirror"))


@pytest.fixture()
def task_of(root, monkeypatch):
    monkeypatch.setenv("GLOTBENCH_DATA", str(root))
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    from glotbench.tasks.registry import resolve

    return lambda name: resolve([name])[0]


def _reference_snli(outputs: list[str], labels: list[int]) -> dict:
    """The reference's SNLI loop restated: first token, strip, strip ')', int(); an unparseable
    answer is left out; accuracy and macro-F1 (evaluate's f1 = scikit-learn's, labels seen) over
    the rest, the -1 golds included."""
    from sklearn.metrics import f1_score

    preds, golds = [], []
    for result, label in zip(outputs, labels):
        parts = result.split()
        res = parts[0].strip().strip(")") if parts else result
        try:
            pred = int(res)
        except ValueError:
            continue
        preds.append(pred)
        golds.append(label)
    return {"accuracy": sum(p == g for p, g in zip(preds, golds)) / len(golds),
            "macro_f1": f1_score(golds, preds, average="macro"), "count": len(golds)}


@pytest.mark.parametrize("name", ["czech_bench.snli", "czech_bench.snli_en"])
def test_snli_no_gold_rows_scored_as_the_reference(task_of, name):
    from glotbench.engine.aggregate import summarise_task
    from glotbench.models.base import GenResult

    task = task_of(name)
    samples = task.samples()
    golds = [int(s.target) for s in samples]
    assert len(samples) == 8 and golds.count(-1) == 2  # the -1 rows are kept, not dropped
    outputs = ["0", "1)", "2 because", "x", "1", "2", "0", ""]
    recs = []
    for s, text in zip(samples, outputs):
        sc = task.score(s, [GenResult(text=text)], mode="generate")
        recs.append({"status": "scored", "gold": s.target, "pred": sc.pred, "values": sc.values, "metadata": s.metadata})
    got = summarise_task(recs, task.metric_names("generate"), task.spec.slice_by, len(recs), n_boot=20)["metrics"]
    ref = _reference_snli(outputs, golds)
    assert ref["count"] == 6 and -1 in golds
    assert got["cb_accuracy"]["value"] == pytest.approx(ref["accuracy"], abs=1e-6)
    assert got["cb_macro_f1"]["value"] == pytest.approx(ref["macro_f1"], abs=1e-6)
    assert got["cb_parsed"]["value"] == pytest.approx(6 / 8)
    assert got["cb_macro_f1"]["value"] < got["cb_accuracy"]["value"]  # the -1 class (F1 0) pulls macro-F1 down
    # glotbench's named variant beside them: the same rule over the rows that have a gold label
    kept = [(o, g) for o, g in zip(outputs, golds) if g != -1]
    ref_l = _reference_snli([o for o, _ in kept], [g for _, g in kept])
    assert got["cb_accuracy_labelled"]["value"] == pytest.approx(ref_l["accuracy"], abs=1e-6)
    assert got["cb_macro_f1_labelled"]["value"] == pytest.approx(ref_l["macro_f1"], abs=1e-6)
    # glotbench's own accuracy beside it: every row in the denominator (unparseable and -1 wrong)
    hits = sum(1 for s, t in zip(samples, outputs) if t.split() and t.split()[0].strip(")") == str(s.target))
    assert got["accuracy"]["value"] == pytest.approx(hits / 8)


def _old_belebele(folder, lang: str, rows_from) -> None:
    """facebook/belebele before 2024-08: one default config, one split per language."""
    (folder / "data").mkdir(parents=True)
    (folder / "data" / f"{lang}.jsonl").write_bytes((rows_from / "data" / f"{lang}.jsonl").read_bytes())
    (folder / "README.md").write_text("---\nconfigs:\n- config_name: default\n  data_files:\n"
                                      f"  - split: {lang}\n    path: data/{lang}.jsonl\n"
                                      "  - split: zul_Latn\n    path: data/zul_Latn.jsonl\n---\n", encoding="utf-8")
    (folder / "data" / "zul_Latn.jsonl").write_bytes((rows_from / "data" / f"{lang}.jsonl").read_bytes())


@pytest.mark.parametrize("name,lang", [("czech_bench.belebele", "ces_Latn"), ("czech_bench.belebele_en", "eng_Latn")])
def test_belebele_today_and_old_layout(task_of, root, tmp_path, monkeypatch, name, lang):
    from czech_bench_ref import jsonl

    rows = jsonl(MIRROR / "facebook/belebele/data" / f"{lang}.jsonl")
    scored = [r["question"] for i, r in enumerate(rows) if i not in {0, 3, 4, 5, 8}]
    today = task_of(name)
    assert [s.vars["question"] for s in today.samples()] == scored
    assert [s.target for s in today.samples()] == [r["correct_answer_num"] for i, r in enumerate(rows) if i not in {0, 3, 4, 5, 8}]
    # the same task on a snapshot taken before the repo had one config per language
    old = tmp_path / "old"
    (old / "czech_bench" / "hf").mkdir(parents=True)
    key = name.split(".")[1]
    _old_belebele(old / "czech_bench" / "hf" / key, lang, MIRROR / "facebook/belebele")
    monkeypatch.setenv("GLOTBENCH_DATA", str(old))
    from glotbench.tasks.registry import resolve

    assert [s.vars["question"] for s in resolve([name])[0].samples()] == scored


def test_belebele_folder_without_the_language_is_one_line(task_of, tmp_path, monkeypatch):
    from glotbench.errors import DataError

    folder = tmp_path / "d" / "czech_bench" / "hf" / "belebele"
    (folder / "data").mkdir(parents=True)
    (folder / "data" / "x.jsonl").write_text('{"a": 1}\n', encoding="utf-8")
    (folder / "README.md").write_text("---\nconfigs:\n- config_name: zul_Latn\n  data_files:\n  - split: test\n"
                                      "    path: data/x.jsonl\n---\n", encoding="utf-8")
    monkeypatch.setenv("GLOTBENCH_DATA", str(tmp_path / "d"))
    from glotbench.tasks.registry import resolve

    with pytest.raises(DataError) as e:
        resolve(["czech_bench.belebele"])[0].samples()
    msg = str(e.value)
    assert "\n" not in msg and "'ces_Latn'" in msg and "zul_Latn" in msg and str(folder) in msg


# ---------------------------------------------------------------- MMLU-cs: one config per subject
def _topics() -> list[str]:
    from glotbench.tasks.registry import resolve

    cats = resolve(["czech_bench.mmlu"])[0].spec.options["mmlu"]["categories"]
    return [t for ts in cats.values() for t in ts]


def test_mmlu_cs_fixture_is_per_subject_without_default():
    import datasets

    names = datasets.get_dataset_config_names(str(MIRROR / "CIIRC-NLP/mmlu-cs"))
    assert "default" not in names and sorted(names) == sorted(_topics()) and len(names) == 56
    assert not (MIRROR / "CIIRC-NLP/mmlu-cs/data").exists()


def test_mmlu_cs_pulled_from_a_per_subject_repo_loads_every_subject(tmp_path, monkeypatch):
    """(a) The loopback mirror serves CIIRC-NLP/mmlu-cs laid out as the Hub has it (a config per
    subject, no default config); `glotbench data pull czech_bench.mmlu` in a fresh process fetches
    what the origin declares (README + each subject's test and dev files), and the task reads all
    56 subjects, each row's subject its config, in the reference's category order."""
    import hashlib
    import os
    import subprocess
    import sys

    from glotbench.testing.hub_mirror import start_mirror

    repo_dir = MIRROR / "CIIRC-NLP/mmlu-cs"
    commit = hashlib.sha1(b"mmlu-cs per subject").hexdigest()  # noqa: S324 - a made-up commit id
    m = start_mirror(tmp_path / "mirror")
    try:
        m.add_hf("CIIRC-NLP/mmlu-cs", commit, {p.relative_to(repo_dir).as_posix(): p for p in repo_dir.rglob("*") if p.is_file()},
                 refs={"main": commit})
        # a file the loader does not read: the declared include patterns leave it on the server
        m.add_hf("CIIRC-NLP/mmlu-cs", commit, {"anatomy/validation-00000-of-00001-0000000000000000.parquet":
                                              next(repo_dir.glob("anatomy/test-*")).read_bytes()})
        env = {k: v for k, v in os.environ.items() if k not in ("GLOTBENCH_DATA", "HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE",
                                                                "GLOTBENCH_OFFLINE", "GLOTBENCH_DATA_LOCK")}
        env.update({**m.env(), "GLOTBENCH_CACHE_DIR": str(tmp_path / "cache"), "HF_HOME": str(tmp_path / "hf_home")})
        r = subprocess.run([sys.executable, "-m", "glotbench", "data", "pull", "czech_bench.mmlu"], cwd=tmp_path,
                           env=env, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stdout + r.stderr
    finally:
        m.stop()
    folder = tmp_path / "cache" / "data" / "czech_bench" / "hf" / "mmlu"
    got = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    want = sorted(p.relative_to(repo_dir).as_posix() for p in repo_dir.rglob("*") if p.is_file())
    assert got == want and not any("validation" in g for g in got)
    monkeypatch.setenv("GLOTBENCH_DATA", str(tmp_path / "cache" / "data"))
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    from glotbench.tasks.registry import resolve

    samples = resolve(["czech_bench.mmlu"])[0].samples()
    topics = _topics()
    assert len(samples) == 2 * 56
    assert [s.vars["subject"] for s in samples] == [t for t in topics for _ in range(2)]  # reference order
    assert samples[0].vars["shots"].startswith(f"Otázka:\nOtázka dev 0 ({topics[0]})?")


def test_mmlu_cs_older_default_layout_and_missing_subjects(tmp_path, monkeypatch):
    """A snapshot from before the per-subject upload (one default config with a subject column)
    still reads; a per-subject folder lacking subjects the reference reports is one line naming them."""
    import shutil

    from glotbench.errors import DataError
    from glotbench.tasks.registry import resolve

    rows_from = MIRROR / "CIIRC-NLP/mmlu-cs"
    old = tmp_path / "old" / "czech_bench" / "hf" / "mmlu" / "data"
    old.mkdir(parents=True)
    import pyarrow as pa
    import pyarrow.parquet as pq

    for split in ("test", "dev"):
        tables = [pq.read_table(p) for p in sorted(rows_from.glob(f"*/{split}-*.parquet"))]
        pq.write_table(pa.concat_tables(tables), old / f"{split}-00000-of-00001.parquet")
    monkeypatch.setenv("GLOTBENCH_DATA", str(tmp_path / "old"))
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    assert len(resolve(["czech_bench.mmlu"])[0].samples()) == 2 * 56

    part = tmp_path / "part" / "czech_bench" / "hf" / "mmlu"
    shutil.copytree(rows_from, part)
    readme = (part / "README.md").read_text(encoding="utf-8")
    cut = readme.index("- config_name: anatomy")
    end = readme.index("- config_name:", cut + 5)
    (part / "README.md").write_text(readme[:cut] + readme[end:], encoding="utf-8")
    monkeypatch.setenv("GLOTBENCH_DATA", str(tmp_path / "part"))
    with pytest.raises(DataError) as e:
        resolve(["czech_bench.mmlu"])[0].samples()
    assert "\n" not in str(e.value) and "no config for 1 of the 56 subjects" in str(e.value) and "(anatomy)" in str(e.value)
