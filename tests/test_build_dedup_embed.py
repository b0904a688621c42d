"""`build dedup --embed DIR` (issue 55; OpenHuEval App. B.2's embedding dedup): a tiny random BERT
built offline (transformers' config, a word-level tokenizer, saved to tmp; no network). The kept
set and the pairs equal a plain loop over all pairs of embeddings computed independently (the
model's hidden states mean-pooled by hand, numpy cosine); the CLI runs in a fresh process, lists
the duplicates side by side and refuses a missing encoder in one line."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

SRC = str(Path(__file__).resolve().parents[1] / "src")
QUESTIONS = [("1", "Kolik metrů měří Sněžka ?"), ("2", "Sněžka měří kolik metrů ?"), ("3", "Kde pramení Vltava ?"),
             ("4", "Kolik metrů měří Lysá hora ?"), ("5", "Kde pramení řeka Vltava ?"), ("6", "Kdo napsal Babičku ?")]


@pytest.fixture(scope="module")
def tiny_encoder(tmp_path_factory) -> Path:
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import BertConfig, BertModel, PreTrainedTokenizerFast

    out = tmp_path_factory.mktemp("tiny-bert")
    words = sorted({w for _, q in QUESTIONS for w in q.split()} | {"Praha", "hora"})
    vocab = {w: i for i, w in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", *words])}
    tk = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tk.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    fast = PreTrainedTokenizerFast(tokenizer_object=tk, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]", sep_token="[SEP]")
    fast.save_pretrained(out)
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=len(vocab), hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32,
                     max_position_embeddings=32)
    BertModel(cfg).eval().save_pretrained(out)
    return out


def _plain_embeddings(path: Path, texts: list[str]):
    """Each text alone (no padding), mean over its tokens, normalised: the independent restatement."""
    import numpy as np
    from transformers import AutoModel, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
    model = AutoModel.from_pretrained(str(path), local_files_only=True).eval()
    rows = []
    for t in texts:
        with torch.no_grad():
            h = model(**tok(t, return_tensors="pt")).last_hidden_state[0].numpy()
        v = h.mean(axis=0)
        rows.append(v / np.linalg.norm(v))
    return np.array(rows)


def test_pairs_equal_a_plain_loop_over_all_pairs(tiny_encoder):
    import numpy as np

    from glotbench.build.embed_dedup import embed_dedup, encode

    items = [{"id": i, "question": q} for i, q in QUESTIONS]
    vecs = encode([q for _, q in QUESTIONS], tiny_encoder, batch_size=4)
    plain = _plain_embeddings(tiny_encoder, [q for _, q in QUESTIONS])
    assert np.allclose(vecs, plain, atol=1e-5)  # padding in batches does not move a text's embedding
    sims = plain @ plain.T
    for threshold in sorted({round(float(x), 3) for x in sims[np.triu_indices(len(items), 1)]})[::2] + [0.999]:
        kept, pairs = embed_dedup(items, vecs, threshold)
        want_kept, want_pairs = [], {}
        for i in range(len(items)):  # plain loop: compare with every item kept so far
            hits = [(sims[i, j], j) for j in want_kept if sims[i, j] >= threshold - 1e-6]
            if hits:
                want_pairs[items[i]["id"]] = items[max(hits)[1]]["id"]
            else:
                want_kept.append(i)
        assert [k["id"] for k in kept] == [items[i]["id"] for i in want_kept]
        assert {p["item"]["id"]: p["other"]["id"] for p in pairs} == want_pairs
    # within groups (OpenHuEval B.2: per secondary tag): an identical text in another group is kept
    twin = [{"id": "a", "question": QUESTIONS[0][1], "tag": "x"}, {"id": "b", "question": QUESTIONS[0][1], "tag": "y"},
            {"id": "c", "question": QUESTIONS[0][1], "tag": "x"}]
    tv = encode([t["question"] for t in twin], tiny_encoder)
    kept, pairs = embed_dedup(twin, tv, 0.99, group_field="tag")
    assert [k["id"] for k in kept] == ["a", "b"] and [(p["item"]["id"], p["other"]["id"]) for p in pairs] == [("c", "a")]
    assert [k["id"] for k in embed_dedup(twin, tv, 0.99)[0]] == ["a"]


def test_cli_embed_within_and_against_side_by_side(tiny_encoder, tmp_path):
    import numpy as np

    (tmp_path / "new.jsonl").write_text("".join(json.dumps({"id": i, "question": q}, ensure_ascii=False) + "\n"
                                                for i, q in QUESTIONS), encoding="utf-8")
    (tmp_path / "old.jsonl").write_text(json.dumps({"id": "o1", "q": "Kdo napsal Babičku ?"}, ensure_ascii=False) + "\n",
                                        encoding="utf-8")
    plain = _plain_embeddings(tiny_encoder, [q for _, q in QUESTIONS])
    cos = float(plain[0] @ plain[1])  # items 1 and 2: the same words in another order
    env = {**os.environ, "PYTHONPATH": SRC}
    args = [sys.executable, "-m", "glotbench", "build", "dedup", "-i", "new.jsonl", "-o", "d.jsonl", "--embed",
            str(tiny_encoder), "--cosine", f"{cos - 1e-4:.6f}", "--against", "old.jsonl", "--against-field", "q"]
    done = subprocess.run(args, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    dropped = {d["id"]: d for d in (json.loads(x) for x in (tmp_path / "d.dropped.jsonl").read_text(encoding="utf-8").splitlines())}
    assert dropped["2"]["duplicate_of"] == "1" and dropped["2"]["removed_by"] == "dedup_embed"
    assert dropped["6"]["duplicate_of"] == "o1" and dropped["6"]["duplicate_in"] == "old.jsonl"  # identical text: cosine 1
    with (tmp_path / "d.duplicates.csv").open(encoding="utf-8") as fh:
        rows = {r["id"]: r for r in csv.DictReader(fh)}
    assert rows["2"]["other_text"] == "Kolik metrů měří Sněžka ?" and rows["2"]["text"] == "Sněžka měří kolik metrů ?"
    assert rows["6"]["other_file"] == "old.jsonl" and float(rows["6"]["similarity"]) == pytest.approx(1.0, abs=1e-4)
    assert float(rows["2"]["similarity"]) == pytest.approx(cos, abs=1e-4)
    kept = [json.loads(x)["id"] for x in (tmp_path / "d.jsonl").read_text(encoding="utf-8").splitlines()]
    assert "1" in kept and len(kept) + len(dropped) == 6
    assert np.isfinite(cos)


def test_missing_encoder_is_one_line(tmp_path):
    (tmp_path / "new.jsonl").write_text(json.dumps({"id": "1", "question": "x"}) + "\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": SRC}
    done = subprocess.run([sys.executable, "-m", "glotbench", "build", "dedup", "-i", "new.jsonl", "-o", "d.jsonl", "--embed",
                           str(tmp_path / "no-such-encoder")], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    err = [x for x in done.stderr.splitlines() if x.strip()]
    assert done.returncode != 0 and len(err) == 1 and "not a local encoder directory" in err[0], done.stderr
    assert not (tmp_path / "d.jsonl").exists()


def test_without_torch_the_step_is_refused_in_one_line(tmp_path, tiny_encoder, monkeypatch):
    from glotbench.build import embed_dedup
    from glotbench.errors import GlotbenchError

    monkeypatch.setattr("importlib.util.find_spec", lambda name, *a: None if name == "torch" else object())
    with pytest.raises(GlotbenchError, match=r"build dedup --embed needs pip install 'glotbench\[embed\]' \(no module 'torch'\)"):
        embed_dedup.encoder_dir(tiny_encoder)
