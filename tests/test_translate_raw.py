"""`glotbench translate --raw` with a translation model: a tiny Marian model made offline
(glotbench.testing.tiny_hf.make_tiny_marian: random weights, the byte tokenizer with NLLB-style language
tokens), run in a fresh process. Each sentence is sent alone (read back from the journal), the target
language token is forced as the first generated token (the answer equals a plain ``model.generate`` with
``forced_bos_token_id``, the token cut), the language is part of the model id, and an unknown language
token is one line before any request. Slow: each process imports torch and transformers."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.slow
_missing = [m for m in ("torch", "transformers", "pysbd") if __import__("importlib").util.find_spec(m) is None]
if _missing:
    pytestmark = [pytestmark, pytest.mark.skip(reason=f"needs {', '.join(_missing)} (pip install 'glotbench[hf,cs]')")]

SRC = str(Path(__file__).resolve().parents[1] / "src")
SENTENCES = ["The cat sleeps.", "Where is the station?"]


@pytest.fixture(scope="module")
def marian(tmp_path_factory) -> Path:
    from glotbench.testing.tiny_hf import make_tiny_marian

    return make_tiny_marian(tmp_path_factory.mktemp("marian"))


@pytest.fixture()
def task(tmp_path) -> Path:
    (tmp_path / "qa.jsonl").write_text("".join(json.dumps({"id": str(k), "question": q, "answer": "x"}) + "\n"
                                               for k, q in enumerate(SENTENCES)), encoding="utf-8")
    spec = {"name": "tiny_en_qa", "version": "1", "language": "en",
            "dataset": {"format": "jsonl", "splits": {"test": "qa.jsonl"}},
            "fields": {"id": "id", "question": "question", "target": "answer"},
            "prompt": {"user": "{{ question }}"}, "scorer": "exact_match", "metrics": ["accuracy"]}
    path = tmp_path / "tiny_en_qa.yaml"
    path.write_text(yaml.safe_dump(spec), encoding="utf-8")
    return path


def glot(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": SRC, "HF_HUB_OFFLINE": "1", "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "glotbench", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=600)


def requests_of(out: Path) -> list[tuple[dict, dict]]:
    con = sqlite3.connect(out / "journal.sqlite")
    try:
        return [(json.loads(q), json.loads(r)) for q, r in con.execute("SELECT request, response FROM responses")]
    finally:
        con.close()


def direct(marian: Path, sentence: str, forced: str | None, max_new: int) -> str:
    """A plain ``model.generate`` of the sentence (greedy), the forced token cut, decoded."""
    import torch
    from transformers import AutoTokenizer, MarianMTModel

    tok = AutoTokenizer.from_pretrained(marian)
    model = MarianMTModel.from_pretrained(marian).eval()
    enc = tok([sentence], return_tensors="pt")
    kw = {"forced_bos_token_id": tok.convert_tokens_to_ids(forced)} if forced else {}
    with torch.inference_mode():
        seq = model.generate(**enc, max_new_tokens=max_new, do_sample=False, **kw)[0].tolist()[1:]
    if forced:
        assert seq[0] == tok.convert_tokens_to_ids(forced)
        seq = seq[1:]
    if tok.eos_token_id in seq:
        seq = seq[: seq.index(tok.eos_token_id)]
    return tok.decode(seq, skip_special_tokens=True)


def test_raw_sentences_with_a_forced_target_language(tmp_path, task, marian):
    out = tmp_path / "mt"
    done = glot(tmp_path, "translate", "--task", str(task), "--to", "cs", "--field", "question", "--raw",
                "--model", f"hf:{marian}", "-M", "tgt_lang=ces_Latn", "--max-tokens", "12", "-o", str(out), "-j", "1")
    assert done.returncode == 0, done.stderr[-3000:]
    rows = requests_of(out)
    assert sorted(q["prompt"] for q, _ in rows) == sorted(SENTENCES)  # the sentence alone, no instruction
    assert all(q["messages"] is None and "+tgt=ces_Latn@" in q["model"] for q, _ in rows)
    for q, r in rows:
        assert r["text"] == direct(marian, q["prompt"], "ces_Latn", 12)
    data = [json.loads(x) for x in (out / "data.jsonl").read_text(encoding="utf-8").splitlines()]
    by_source = {q["prompt"]: r["text"].strip() for q, r in rows}
    assert [d["question"] for d in data] == [(by_source[s].split("\n\n")[0].strip() or s) for s in SENTENCES]
    again = glot(tmp_path, "translate", "--task", str(task), "--to", "cs", "--field", "question", "--raw",
                 "--model", f"hf:{marian}", "-M", "tgt_lang=ces_Latn", "--max-tokens", "12", "-o", str(out), "-j", "1")
    assert again.returncode == 0 and f"requests sent 0 · from the journal {len(SENTENCES)}" in again.stdout


def test_an_unknown_language_token_is_one_line_before_any_request(tmp_path, task, marian):
    out = tmp_path / "mt"
    done = glot(tmp_path, "translate", "--task", str(task), "--to", "cs", "--field", "question", "--raw",
                "--model", f"hf:{marian}", "-M", "forced_bos_token=ces_Cyrl", "-o", str(out))
    assert done.returncode != 0
    lines = [x for x in done.stderr.splitlines() if "ces_Cyrl" in x]
    assert len(lines) == 1 and "forced_bos_token" in lines[0] and "not a token of its tokenizer" in lines[0]
    assert not (out / "journal.sqlite").exists() or requests_of(out) == []


def test_without_raw_the_sentence_is_wrapped_and_the_languages_are_in_the_settings(tmp_path, task, marian):
    from glotbench.models.hf import HFModel

    m = HFModel(str(marian), forced_bos_token="hun_Latn")
    assert m.settings()["forced_bos_token"] == "hun_Latn" and "+bos=hun_Latn@" in m.model_id
    assert "forced_bos_token" not in HFModel(str(marian)).settings()  # unset: the old model fingerprint
    out = tmp_path / "mt"
    done = glot(tmp_path, "translate", "--task", str(task), "--to", "cs", "--field", "question", "--limit", "1",
                "--model", f"hf:{marian}", "--max-tokens", "4", "-o", str(out))
    assert done.returncode == 0, done.stderr[-3000:]
    (q, _), = requests_of(out)
    assert q["messages"][0]["content"].startswith("Translate the following English text into Czech.")
