"""`glotbench compare --crosslingual` gives the Czech-Bench thesis' average relative gap (§6.4: GPT-3.5
Turbo 10%, Claude 3 Haiku 6.3%, Llama 3 8B 10.9%) from the thesis' own tables (eval_results.md,
imported as published runs), and averages headline metrics only: no parse rate (``cb_parsed``), no
second rule's copy of the same statistic (``accuracy`` beside ``cb_accuracy``); ``--metric`` picks one."""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from glotbench.report.analysis.crosslingual import relative_gap
from glotbench.paths import resolve_data_file

SRC = Path(__file__).resolve().parents[1] / "src"
EVAL_RESULTS = "czech_bench/reference/eval_results.md"

# The thesis' benchmark names -> glotbench tasks; its "Acc" / "F1" rows -> the reference-rule metrics.
TASK = {"Klokánek": "czech_bench.klokanek", "SQuAD(Generation)": "czech_bench.squad", "SQuAD (No-Answer Detection)": "czech_bench.squad"}
METRIC = {("MMLU", "Acc"): "cb_topic_accuracy", ("SQAD", "Acc"): "cb_em_raw", ("SQAD", "F1"): "cb_f1_raw",
          ("SQuAD(Generation)", "Acc"): "cb_em_raw", ("SQuAD(Generation)", "F1"): "cb_f1_raw",
          ("SQuAD (No-Answer Detection)", "Acc"): "cb_na_accuracy", ("SQuAD (No-Answer Detection)", "F1"): "cb_na_macro_f1"}


def glot(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, "-m", "glotbench", *args], capture_output=True, text=True, cwd=cwd, env=env,
                          timeout=300)


def thesis_rows(md: str) -> list[dict]:
    """Every score cell of eval_results.md's two tables as {model, benchmark (thesis name), metric, score text}."""
    rows: list[dict] = []
    models: list[str] = []
    bench = ""
    for line in md.splitlines():
        if not line.startswith("|"):
            models = [] if not line.strip() else models
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[0] == "Benchmark":
            models = cells[2:]
            continue
        if set(cells[0]) <= set("-: ") and cells[0]:
            continue
        bench = cells[0] or bench
        for model, cell in zip(models, cells[2:]):
            text = cell.replace("**", "").replace("\\", "").strip()
            rows.append({"model": model, "benchmark": bench, "metric": cells[1], "score": text or "-"})
    return rows


def published_csv(tmp_path: Path) -> tuple[Path, list[dict]]:
    path = resolve_data_file(EVAL_RESULTS)
    if not path.is_file():
        pytest.skip(f"Czech-Bench reference results not found ({EVAL_RESULTS} under the data root)")
    rows = thesis_rows(path.read_text(encoding="utf-8"))
    out = tmp_path / "czech_bench_thesis.csv"
    with out.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["model", "benchmark", "metric", "score"])
        for r in rows:
            task = TASK.get(r["benchmark"], "czech_bench." + r["benchmark"].lower().replace(" ", "_"))
            base = r["benchmark"].removesuffix(" EN")  # an English twin is scored as its Czech original
            metric = METRIC.get((base, r["metric"]), {"Acc": "cb_accuracy", "F1": "cb_macro_f1"}[r["metric"]])
            w.writerow([r["model"], task, metric, r["score"]])
    return out, rows


def plain_average(rows: list[dict], model: str) -> float:
    """The thesis' statistic restated: mean |en - cs| / max(en, cs) over its Acc and F1 rows with both scores."""
    def num(s):
        s = s.rstrip("*")
        return None if s in ("-", "") else float(s)

    score = {(r["benchmark"], r["metric"]): num(r["score"]) for r in rows if r["model"] == model}
    gaps = [abs(relative_gap(cs, score[(b + " EN", m)])) for (b, m), cs in score.items()
            if (b + " EN", m) in score and cs is not None and score[(b + " EN", m)] is not None]
    assert len(gaps) in (13, 14)
    return sum(gaps) / len(gaps)


def test_crosslingual_reproduces_the_thesis_from_eval_results(tmp_path):
    csv_path, rows = published_csv(tmp_path)
    done = glot("runs", "compare", "--crosslingual", "--published", str(csv_path), "--json", str(tmp_path / "x.json"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    got = json.loads((tmp_path / "x.json").read_text())["crosslingual"]["models"]
    expected = {"GPT-3.5 turbo": ("10.0%", 14), "Claude 3 Haiku": ("6.3%", 14), "Llama 3 8B Instruct": ("10.9%", 13)}
    for model, (printed, n_pairs) in expected.items():
        g = got[model]
        assert g["n_pairs"] == n_pairs
        assert g["average_relative_gap"] == pytest.approx(plain_average(rows, model))
        assert f"{100 * g['average_relative_gap']:.1f}%" == printed
        line = next(ln for ln in done.stdout.splitlines() if ln.lstrip("│ ").startswith(model) and "%" in ln
                    and re.search(rf"│\s*{n_pairs}\s*│", ln))
        assert f" {printed} " in line, line
    assert got["Llama 3 8B Instruct"]["n_missing"] == 1  # GSM8K EN is "-" (invalid) in the thesis


def _run_dir(root: Path, label: str, tasks: dict) -> Path:
    d = root / label
    d.mkdir()
    (d / "results.json").write_text(json.dumps({"model": {"model_id": label}, "fingerprint": "x", "tasks": tasks}),
                                    encoding="utf-8")
    return d


def _task(language: str, counterpart: str, **metrics: float) -> dict:
    return {"language": language, "counterpart": counterpart, "status": "ok",
            "metrics": {m: {"value": v} for m, v in metrics.items()}}


def test_average_uses_headline_metrics_and_metric_option(tmp_path):
    """A Czech-Bench pair reports cb_accuracy, cb_macro_f1, accuracy, macro_f1 and cb_parsed (the order
    of its YAML): the default average is over cb_accuracy and cb_macro_f1 only; --metric accuracy
    averages accuracy only."""
    cs = {"cb_accuracy": 0.60, "cb_macro_f1": 0.40, "accuracy": 0.30, "macro_f1": 0.20, "cb_parsed": 0.50}
    en = {"cb_accuracy": 0.80, "cb_macro_f1": 0.50, "accuracy": 0.70, "macro_f1": 0.35, "cb_parsed": 1.00}
    run = _run_dir(tmp_path, "m", {"czech_bench.anli": _task("cs", "czech_bench.anli_en", **cs),
                                   "czech_bench.anli_en": _task("en", "czech_bench.anli", **en)})
    done = glot("runs", "compare", "--crosslingual", str(run), "--json", str(tmp_path / "a.json"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    got = json.loads((tmp_path / "a.json").read_text())["crosslingual"]["models"]["m"]
    plain = (abs(0.80 - 0.60) / 0.80 + abs(0.50 - 0.40) / 0.50) / 2  # 22.5%
    assert got["n_pairs"] == 2 and got["average_relative_gap"] == pytest.approx(plain)
    assert f"{100 * plain:.1f}%" in done.stdout
    done = glot("runs", "compare", "--crosslingual", str(run), "--metric", "accuracy", "--json", str(tmp_path / "b.json"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    got = json.loads((tmp_path / "b.json").read_text())["crosslingual"]["models"]["m"]
    assert got["n_pairs"] == 1 and got["average_relative_gap"] == pytest.approx((0.70 - 0.30) / 0.70)
