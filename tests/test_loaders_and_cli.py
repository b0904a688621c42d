"""Dataset formats (CSV, TSV, Parquet, a Hugging Face dataset read from local files), and the
`tasks` and `export` commands."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from glotbench.data.loaders import read_hf, read_records
from glotbench.tasks.registry import resolve

ROWS = [{"id": "a1", "q": "Hány lába van a póknak?", "gold": "8"}, {"id": "a2", "q": "Kétszer három?", "gold": "6"}]


def _spec(tmp_path, fmt: str, path: str, extra: str = "") -> str:
    p = tmp_path / f"t_{fmt}.yaml"
    p.write_text(f"""name: demo.{fmt}
version: "1"
language: hu
dataset:
  format: {fmt}
  splits: {{test: {path}}}
{extra}fields: {{id: id, question: q, target: gold}}
prompt: {{user: "{{{{ question }}}}"}}
extractor: {{name: number}}
scorer: numeric
metrics: [numeric_match]
""", encoding="utf-8")
    return str(p)


@pytest.mark.parametrize("fmt", ["csv", "tsv"])
def test_csv_and_tsv(tmp_path, fmt):
    sep = "," if fmt == "csv" else "\t"
    f = tmp_path / f"d.{fmt}"
    f.write_text(sep.join(ROWS[0]) + "\n" + "\n".join(sep.join(r.values()) for r in ROWS) + "\n", encoding="utf-8")
    task = resolve([_spec(tmp_path, fmt, str(f))])[0]
    s = task.samples()
    assert [x.id for x in s] == ["a1", "a2"] and s[0].target == "8"
    assert task.chat_messages(s[0]) == [{"role": "user", "content": "Hány lába van a póknak?"}]


def test_parquet(tmp_path):
    pq = pytest.importorskip("pyarrow.parquet", reason="pyarrow not installed (pip install 'glotbench[parquet]')")
    import pyarrow as pa

    f = tmp_path / "d.parquet"
    pq.write_table(pa.Table.from_pylist(ROWS), f)
    assert read_records(f, "parquet") == ROWS
    assert [x.target for x in resolve([_spec(tmp_path, "parquet", str(f))])[0].samples()] == ["8", "6"]


def test_hub_loader_on_local_files(tmp_path):
    """The Hugging Face path is real code for online users; here it reads a local dataset folder."""
    pytest.importorskip("datasets", reason="datasets not installed (pip install 'glotbench[hub]')")
    d = tmp_path / "hubdata"
    d.mkdir()
    (d / "test.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in ROWS), encoding="utf-8")
    assert read_hf(str(d), "main", None, "test") == ROWS
    spec = _spec(tmp_path, "hf", "unused", extra=f"  hf: {{id: {d}, revision: main}}\n")
    assert [x.id for x in resolve([spec])[0].samples()] == ["a1", "a2"]


def test_tasks_command_lists_language_count_metrics_version(data_root):
    out = subprocess.run([sys.executable, "-m", "glotbench", "tasks", "mm_eval.*"], capture_output=True, text=True,
                         env={**__import__("os").environ, "COLUMNS": "200"})
    assert out.returncode == 0, out.stderr
    line = next(x for x in out.stdout.splitlines() if "mm_eval.syntax" in x)  # piped: tab-separated
    assert "\tmn\t" in line and "569" in line and "accuracy" in line and "1.0" in line and "MM-Eval" in line


def test_export_writes_samples_from_the_journal(stub_server, data_root, tmp_path):
    base = stub_server("--answer", "A")
    out = tmp_path / "r"
    subprocess.run([sys.executable, "-m", "glotbench", "run", "--model", "openai:s", "--base-url", base, "--tasks",
                    "mm_eval.syntax", "--limit", "4", "-o", str(out), "--no-progress"], check=True, capture_output=True)
    (out / "samples.jsonl").unlink()
    done = subprocess.run([sys.executable, "-m", "glotbench", "runs", "export", str(out)], capture_output=True, text=True)
    assert done.returncode == 0 and "wrote 4 samples" in done.stdout
    rows = [json.loads(x) for x in (out / "samples.jsonl").read_text().splitlines()]
    assert [r["sample_id"] for r in rows] == ["0", "1", "2", "3"] and all(r["pred"] == "A" for r in rows)
    bad = subprocess.run([sys.executable, "-m", "glotbench", "runs", "export", str(tmp_path)], capture_output=True, text=True)
    assert bad.returncode == 2 and "no journal.sqlite here" in bad.stderr
