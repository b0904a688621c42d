"""`--model hf:` on an encoder-decoder (T5) model: a tiny ByT5-style checkpoint with random weights made
offline (glotbench.testing.tiny_hf), checked against plain transformers calls on the same inputs, and run
end to end in fresh `glotbench run` processes."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

_missing = [m for m in ("torch", "transformers") if importlib.util.find_spec(m) is None]
pytestmark = pytest.mark.skipif(bool(_missing), reason=f"the hf: backend needs {', '.join(_missing)} "
                                                       "(pip install 'glotbench[hf]')")


@pytest.fixture(scope="module")
def t5_dir(tmp_path_factory) -> Path:
    from glotbench.testing.tiny_hf import make_tiny_t5

    return make_tiny_t5(tmp_path_factory.mktemp("hub"))


@pytest.fixture(scope="module")
def t5(t5_dir):
    from glotbench.models.registry import load_model

    return load_model(f"hf:{t5_dir}", batch_size=4)


@pytest.fixture(scope="module")
def plain(t5_dir):
    """The same checkpoint through plain transformers."""
    from transformers import AutoTokenizer, T5ForConditionalGeneration

    return T5ForConditionalGeneration.from_pretrained(t5_dir).eval(), AutoTokenizer.from_pretrained(t5_dir)


PROMPTS = ["Question: what is 2+2?\nAnswer:", "Kérdés: mi a főváros?", "Асуулт: Монголын нийслэл?\nХариулт:", "x"]


def _gather(m, reqs, method="generate"):
    async def go():
        return await asyncio.gather(*(getattr(m, method)(r) for r in reqs))

    return asyncio.run(go())


def _plain_text(tok, ids: list[int]) -> str:
    """The answer of a plain generate: the decoder's tokens after its start token, up to EOS."""
    ids = ids[1:]
    if tok.eos_token_id in ids:
        ids = ids[: ids.index(tok.eos_token_id)]
    while ids and ids[-1] == tok.pad_token_id:
        ids.pop()
    return tok.decode(ids, skip_special_tokens=True)


def test_detected_from_config_and_recorded(t5, t5_dir):
    assert t5.architecture == "seq2seq" and t5.seq2seq
    assert type(t5.model).__name__ == "T5ForConditionalGeneration"
    assert t5.is_chat is False and "encoder-decoder" in t5.notice
    s = t5.settings()
    assert s["architecture"] == "seq2seq" and s["backend"] == "hf"
    assert "+seq2seq" not in t5.model_id  # the config said so: -M backend=seq2seq would change nothing
    assert t5.timeout_scale == 4  # the time limit covers a batch of 4


def test_generation_equals_plain_generate_loop(t5, plain):
    import torch

    from glotbench.models.base import GenRequest

    model, tok = plain
    reqs = [GenRequest(prompt=p, max_tokens=12) for p in PROMPTS]
    ours = _gather(t5, reqs)
    want = []
    for p in PROMPTS:
        enc = tok(p, return_tensors="pt")
        with torch.no_grad():
            out = model.generate(**enc, max_new_tokens=12, do_sample=False)
        want.append(_plain_text(tok, out[0].tolist()))
    assert [o.text for o in ours] == want
    assert any(w for w in want)
    assert [o.input_tokens for o in ours] == [len(tok(p).input_ids) for p in PROMPTS]  # bytes + </s>
    # one at a time gives the same answers as the batch of four (right-padded encoder inputs)
    alone = [_gather(t5, [r])[0].text for r in reqs]
    assert alone == want
    # a stop string ends the answer where the plain answer first holds it
    text = next(w for w in want if any(c.isascii() and c.isprintable() for c in w[1:]))
    stop = next(c for c in text[1:] if c.isascii() and c.isprintable())
    i = PROMPTS[want.index(text)]
    [cut] = _gather(t5, [GenRequest(prompt=i, max_tokens=12, stop=(stop,))])
    assert cut.text == text[: text.index(stop)] and cut.finish_reason == "stop"


def test_sampling_knobs_equal_plain_generate(t5, plain):
    """temperature/top_p sampling with the seed the backend documents (seed + sample_index)."""
    import torch

    from glotbench.models.base import GenRequest

    model, tok = plain
    req = GenRequest(prompt=PROMPTS[0], max_tokens=10, temperature=0.9, top_p=0.95, seed=7, sample_index=1)
    [ours] = _gather(t5, [req])
    torch.manual_seed(8)
    with torch.no_grad():
        out = model.generate(**tok(PROMPTS[0], return_tensors="pt"), max_new_tokens=10, do_sample=True,
                             temperature=0.9, top_p=0.95, top_k=0)
    assert ours.text == _plain_text(tok, out[0].tolist())


def test_frequency_penalty_equals_a_hand_decoding_loop(t5, plain):
    """MM-Eval's frequency_penalty=1.0 (OpenAI's definition: logit - penalty x count of the token in the
    answer so far), restated as a greedy loop over the decoder by hand."""
    import torch

    from glotbench.models.base import GenRequest

    model, tok = plain
    for p in PROMPTS[:2]:
        [ours] = _gather(t5, [GenRequest(prompt=p, max_tokens=10, extra=(("frequency_penalty", 1.0),))])
        enc = tok(p, return_tensors="pt")
        dec = [model.config.decoder_start_token_id]
        with torch.no_grad():
            for _ in range(10):
                logits = model(**enc, decoder_input_ids=torch.tensor([dec])).logits[0, -1].clone()
                for t in set(dec[1:]):
                    logits[t] -= 1.0 * dec[1:].count(t)
                nxt = int(logits.argmax())
                dec.append(nxt)
                if nxt == tok.eos_token_id:
                    break
        assert ours.text == _plain_text(tok, dec), p


LL_CASES = [("Question: 2+2=?\nAnswer:", [" 4", " four", " 22", " A"]),
            ("Хариулт: ", ["A", "Улаанбаатар", "B"]),  # trailing space moves onto the continuation
            ("", ["hello", "x"])]  # empty context: the encoder reads EOS alone (T5 has no BOS)


def _restated(model, tok, context: str, continuation: str) -> tuple[float, bool, int]:
    """lm-eval's seq2seq rule by hand: encoder input = the context with </s>, decoder target = the
    continuation alone; the sum of the decoder's log-softmax at each target token."""
    import torch

    n = len(context) - len(context.rstrip())
    if n:
        context, continuation = context[:-n], context[-n:] + continuation
    enc = tok(context).input_ids if context else [tok.eos_token_id]
    cont = tok(continuation, add_special_tokens=False).input_ids
    dec = [model.config.decoder_start_token_id] + cont[:-1]
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([enc]), decoder_input_ids=torch.tensor([dec])).logits[0]
    lp = torch.log_softmax(logits.double(), dim=-1)
    total = sum(float(lp[k, t]) for k, t in enumerate(cont))
    greedy = all(int(logits[k].argmax()) == t for k, t in enumerate(cont))
    return total, greedy, len(cont)


def test_loglikelihood_equals_restatement_and_batched_equals_alone(t5, plain):
    from glotbench.models.base import LoglikelihoodRequest

    model, tok = plain
    for ctx, opts in LL_CASES:
        reqs = [LoglikelihoodRequest(ctx, o) for o in opts]
        batched = _gather(t5, reqs, "loglikelihood")
        alone = [_gather(t5, [r], "loglikelihood")[0] for r in reqs]
        for r, b, a in zip(reqs, batched, alone):
            lp, greedy, n = _restated(model, tok, r.context, r.continuation)
            assert abs(b.logprob - lp) < 1e-4, (r, b.logprob, lp)
            assert b.n_tokens == n and b.is_greedy == greedy
            assert abs(b.logprob - a.logprob) < 1e-4 and b.is_greedy == a.is_greedy and b.n_tokens == a.n_tokens
        assert max(b.n_tokens for b in batched) > 3  # multi-token options (bytes: Cyrillic is 2 per letter)


def test_chat_requests_are_flattened_and_noted_once(t5, plain):
    """A chat request (a judge's, a translation's) reaching a model without a chat template is sent as the
    plain text tasks give plain models, counted in one run note."""
    from glotbench.models.base import GenRequest
    from glotbench.prompts.render import plain_from_messages

    msgs = ({"role": "system", "content": "Be brief."}, {"role": "user", "content": "Q1"},
            {"role": "assistant", "content": "A1"}, {"role": "user", "content": "Q2"})
    assert plain_from_messages(msgs) == "Be brief.\n\nQ1\nA1\n\nQ2"
    before = t5._flattened
    [chat] = _gather(t5, [GenRequest(messages=msgs, max_tokens=6)])
    [flat] = _gather(t5, [GenRequest(prompt="Be brief.\n\nQ1\nA1\n\nQ2", max_tokens=6)])
    assert chat.text == flat.text and chat.input_tokens == flat.input_tokens
    assert t5._flattened == before + 1
    [note] = t5.run_notes()
    assert f"{t5._flattened} chat request(s) were sent as plain text" in note


def test_backend_option(t5_dir):
    from glotbench.errors import ModelError
    from glotbench.models.registry import load_model

    with pytest.raises(ModelError, match="backend='rnn'"):
        load_model(f"hf:{t5_dir}", backend="rnn")
    forced = load_model(f"hf:{t5_dir}", backend="seq2seq")
    assert forced.architecture == "seq2seq" and "+seq2seq" not in forced.model_id


# ---------------------------------------------------------------- end to end, fresh processes

def glotbench(*args: str, env: dict | None = None, timeout: int = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "glotbench", *args], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200", "HF_HUB_OFFLINE": "1", **(env or {})})


def _prompts(run: Path) -> list[str]:
    with sqlite3.connect(run / "journal.sqlite") as db:
        return [json.loads(r)["prompt"] for (r,) in db.execute("select request from responses")]


@pytest.mark.slow
def test_cli_mm_eval_both_modes(tmp_path, data_root, t5_dir):
    """mm_eval.knowledge in generate mode (--limit 10 with the default timeout: issue 44's CPU run) and
    in loglikelihood mode; results tables printed; the architecture in results.json; a rerun answers
    from the journal."""
    gen = glotbench("run", "-m", f"hf:{t5_dir}", "-t", "mm_eval.knowledge", "--limit", "10", "--no-progress",
                    "-o", str(tmp_path / "gen"))
    assert gen.returncode == 0, gen.stderr[-3000:]
    assert "mm_eval.knowledge" in gen.stdout and "accuracy" in gen.stdout, gen.stdout
    assert "encoder-decoder model: it reads plain prompts" in gen.stderr
    assert "mm_eval.knowledge: hf:" in gen.stderr and "chat prompt is flattened" in gen.stderr
    res = json.loads((tmp_path / "gen" / "results.json").read_text())
    assert res["model"]["architecture"] == "seq2seq" and res["model"]["chat"] is False
    t = res["tasks"]["mm_eval.knowledge"]
    assert t["n_scored"] + t.get("n_errors", 0) == 10 and not t.get("n_errors"), t
    prompts = _prompts(tmp_path / "gen")
    assert len(prompts) == 10 and all(p.startswith("You are an AI assistant proficient in Mongolian.\n\n") for p in prompts)
    assert all(p.endswith("\nХариулт:") for p in prompts)

    ll = glotbench("run", "-m", f"hf:{t5_dir}", "-t", "mm_eval.knowledge", "--mode", "loglikelihood", "--limit", "5",
                   "--no-progress", "-o", str(tmp_path / "ll"))
    assert ll.returncode == 0, ll.stderr[-3000:]
    assert "mm_eval.knowledge" in ll.stdout and "accuracy" in ll.stdout
    res = json.loads((tmp_path / "ll" / "results.json").read_text())
    assert res["tasks"]["mm_eval.knowledge"]["n_scored"] == 5
    again = glotbench("run", "-m", f"hf:{t5_dir}", "-t", "mm_eval.knowledge", "--mode", "loglikelihood", "--limit", "5",
                      "--no-progress", "-o", str(tmp_path / "ll"))
    assert again.returncode == 0 and "no model calls" in again.stderr, again.stderr[-2000:]
    # the same folder as a hub id pinned to its commit, read from the hub cache offline
    from glotbench.testing.tiny_hf import SHA

    hub = glotbench("run", "-m", "hf:glotbench-test/tiny-byt5", "-M", f"revision={SHA}", "-t", "mm_eval.knowledge",
                    "--mode", "loglikelihood", "--limit", "2", "--no-progress", "-o", str(tmp_path / "hub"),
                    env={"HF_HUB_CACHE": str(t5_dir.parents[2])})
    assert hub.returncode == 0, hub.stderr[-3000:]
    res = json.loads((tmp_path / "hub" / "results.json").read_text())
    assert res["model"]["model_id"] == f"hf:glotbench-test/tiny-byt5@{SHA}" and res["model"]["architecture"] == "seq2seq"


@pytest.mark.slow
def test_cli_czech_bench_fewshot_system_prompt_gen_kwargs_and_shards(tmp_path, data_root, t5_dir):
    """A Czech-Bench task with offline data (the reference's plain template); HuLU with --num-fewshot 2,
    --system-prompt and --gen-kwargs; a sharded run equal to the unsharded one."""
    from glotbench.paths import resolve_data_file

    if not resolve_data_file("czech_bench/mall_reviews/data_test.csv").exists():
        pytest.skip("czech_bench/mall_reviews not in the shared data")
    cz = glotbench("run", "-m", f"hf:{t5_dir}", "-t", "czech_bench.mall_reviews_full", "--limit", "3", "--no-progress",
                   "-o", str(tmp_path / "cz"))
    assert cz.returncode == 0, cz.stderr[-3000:]
    assert "czech_bench.mall_reviews_full" in cz.stdout and "cb_accuracy" in cz.stdout, cz.stdout
    assert "the reference's plain template" in cz.stderr
    prompts = _prompts(tmp_path / "cz")
    assert len(prompts) == 3 and all(p.startswith("Urči sentiment zadaného textu.") for p in prompts)
    assert all(p.endswith("Vygeneruj klasifikaci pro následující příklad:\n" + p.split("příklad:\n")[-1]) for p in prompts)

    common = ["-m", f"hf:{t5_dir}", "-t", "hulu.copa", "--limit", "4", "--no-progress", "--num-fewshot", "2",
              "--system-prompt", "Válaszolj röviden.", "--gen-kwargs", "max_tokens=5,repetition_penalty=1.3"]
    one = glotbench("run", *common, "-o", str(tmp_path / "hu"))
    assert one.returncode == 0, one.stderr[-3000:]
    assert "hulu.copa" in one.stdout
    prompts = _prompts(tmp_path / "hu")
    assert len(prompts) == 4 and all(p.startswith("Válaszolj röviden.\n\n") for p in prompts)
    assert all(p.count("Válasz:") == 3 for p in prompts)  # two solved examples, then the question's cue
    assert all(p.endswith("\nVálasz:") for p in prompts)
    with sqlite3.connect(tmp_path / "hu" / "journal.sqlite") as db:
        reqs = [json.loads(r) for (r,) in db.execute("select request from responses")]
    assert all(r["max_tokens"] == 5 and r["extra"] == {"repetition_penalty": 1.3} for r in reqs), reqs[0]
    sharded = glotbench("run", *common, "--shards", "2", "-o", str(tmp_path / "hu2"))
    assert sharded.returncode == 0, sharded.stderr[-3000:]

    def answers(run):
        return {json.loads(x)["sample_id"]: json.loads(x)["outputs"][0]["text"]
                for x in (run / "samples.jsonl").read_text().splitlines()}

    assert answers(tmp_path / "hu2") == answers(tmp_path / "hu") and len(answers(tmp_path / "hu")) == 4
