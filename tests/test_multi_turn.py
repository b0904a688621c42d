"""Multi-turn tasks (``prompt.turns``, docs/multi-turn.md), run in a fresh process with the stub server as
model and judge on the shipped MT-Bench-style example tasks (docs/examples/multi-turn/): turn 1's answer
is in turn 2's request (read back from the journal), the judge of turn 2 sees both turns, the per-turn and
overall scores equal a plain loop over the stub's replies, a rerun resumes turn by turn (a deleted turn-2
answer is the only request sent again), and a bad multi-turn declaration is refused in one line with 0
requests sent."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
import yaml

from glotbench.errors import TaskSpecError
from glotbench.tasks.judged import per_turn_values
from glotbench.tasks.spec import load_spec

REPO = Path(__file__).resolve().parents[1]
SRC = str(REPO / "src")
EXAMPLES = REPO / "docs" / "examples" / "multi-turn"
# the stub judge's rating of each turn (by item), and so each item's scores
RATINGS = {"hu-1": (8, 6), "hu-2": (3, 9), "hu-3": (10, 4)}


def items(lang: str) -> list[dict]:
    return [json.loads(line) for line in (EXAMPLES / f"mt_chat_{lang}.jsonl").read_text(encoding="utf-8").splitlines()]


def answer(item: str, turn: int) -> str:
    return f"ANSWER{turn}-{item} (válasz)"


def canned(lang: str, ratings: dict) -> list[dict]:
    """Judge replies first (matched by the turn's own answer, which only its judge prompt holds last),
    then turn 2's answers (their requests hold turn 1 too), then turn 1's."""
    out = []
    for it in items(lang):
        r1, r2 = ratings[it["id"]]
        out.append({"match": f"ASSISTANT: {answer(it['id'], 2)}", "response": f"Jó. Rating: [[{r2}]]"})
        out.append({"match": f"ASSISTANT: {answer(it['id'], 1)}\n\n[End of dialogue]",
                    "response": f"Rating: [[{r1}]]"})
    for it in items(lang):
        out.append({"match": it["turns"][1], "response": answer(it["id"], 2)})
    for it in items(lang):
        out.append({"match": it["turns"][0], "response": answer(it["id"], 1)})
    return out


def glot(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "OPENAI_API_KEY": "x", "PYTHONPATH": SRC, "COLUMNS": "200", "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "glotbench", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=180)


def run(cwd: Path, base: str, task: Path, out: str, *extra: str) -> subprocess.CompletedProcess:
    return glot(cwd, "run", "--model", "openai:m", "--base-url", base, "--judge", "openai:j", "--judge-base-url", base,
                "--tasks", str(task), "-o", str(cwd / out), "--no-progress", *extra)


def sent(base: str) -> list[dict]:
    return httpx.get(base.replace("/v1", "/_log"), timeout=10).json()["log"]


@pytest.fixture()
def example(tmp_path):
    """The shipped hu example (task, data, judge) copied to a temporary folder, with the stub's replies."""
    for f in EXAMPLES.iterdir():
        shutil.copy(f, tmp_path / f.name)
    (tmp_path / "canned.jsonl").write_text("".join(json.dumps(c, ensure_ascii=False) + "\n"
                                                   for c in canned("hu", RATINGS)), encoding="utf-8")
    return tmp_path


def journal_rows(run_dir: Path):
    con = sqlite3.connect(run_dir / "journal.sqlite")
    try:
        samples = {r[0]: json.loads(r[1]) for r in con.execute("SELECT sample_id, record FROM samples")}
        requests = {k: json.loads(r) for k, r in con.execute("SELECT key, request FROM responses")}
        judgments = [(sid, idx, json.loads(rec)) for sid, idx, rec in
                     con.execute("SELECT sample_id, sample_index, record FROM judgments")]
    finally:
        con.close()
    return samples, requests, judgments


def test_turn_one_answer_is_fed_back_and_the_judge_sees_both_turns(example, stub_server):
    base = stub_server("--responses", str(example / "canned.jsonl"))
    done = run(example, base, example / "mt_chat_hu.yaml", "run")
    assert done.returncode == 0, done.stderr[-3000:]
    n = len(RATINGS)
    assert len(sent(base)) == 4 * n  # two turns and two judge calls per item
    samples, requests, judgments = journal_rows(example / "run")
    by_item = {it["id"]: it for it in items("hu")}
    for sid, rec in samples.items():
        it = by_item[sid]
        assert [o["turn"] for o in rec["outputs"]] == [1, 2]
        assert [o["text"] for o in rec["outputs"]] == [answer(sid, 1), answer(sid, 2)]
        first, second = (requests[k]["messages"] for k in rec["request_keys"])
        assert first == [{"role": "user", "content": it["turns"][0]}]
        # turn 1's answer went back as the assistant message before turn 2
        assert second == [{"role": "user", "content": it["turns"][0]},
                          {"role": "assistant", "content": answer(sid, 1)},
                          {"role": "user", "content": it["turns"][1]}]
        assert rec["detail"]["dialogue"] == second + [{"role": "assistant", "content": answer(sid, 2)}]
    assert len(judgments) == 2 * n
    for sid, idx, verdict in judgments:
        it = by_item[sid]
        prompt = requests[verdict["judge_request_key"]]["messages"][-1]["content"]
        assert f"turn {idx + 1} of the dialogue" in prompt
        assert it["turns"][0] in prompt and answer(sid, 1) in prompt
        if idx == 1:  # the second turn's judge sees the whole dialogue
            assert (f"USER: {it['turns'][0]}\n\nASSISTANT: {answer(sid, 1)}\n\nUSER: {it['turns'][1]}\n\n"
                    f"ASSISTANT: {answer(sid, 2)}\n\n") in prompt
        else:
            assert it["turns"][1] not in prompt and answer(sid, 2) not in prompt
    # scores: a plain loop over the stub's ratings (MT-Bench: each turn's mean, and the mean over all turns)
    res = json.loads((example / "run" / "results.json").read_text(encoding="utf-8"))["tasks"]["mt_chat_hu"]
    got = {name: m["value"] for name, m in res["metrics"].items()}
    from value_oracles import plain_mt_bench_scores

    want = plain_mt_bench_scores([list(r) for r in RATINGS.values()])
    every = [x for r in RATINGS.values() for x in r]
    assert got["mean:judge_score_turn1"] == pytest.approx(want["turn1"])
    assert got["mean:judge_score_turn2"] == pytest.approx(want["turn2"])
    assert got["judge_score"] == pytest.approx(want["overall"])
    assert got["judge_unreadable_rate"] == 0

    # the pairwise judge reads each model's whole dialogue (MT-Bench's multi-turn pairwise form)
    from glotbench.judges.pairwise_runs import read_run

    seen = read_run(example / "run").answers[("mt_chat_hu", "hu-1")]
    it = by_item["hu-1"]
    assert seen.question == f"USER: {it['turns'][0]}\n\nUSER: {it['turns'][1]}"
    assert seen.text == (f"USER: {it['turns'][0]}\n\nASSISTANT: {answer('hu-1', 1)}\n\nUSER: {it['turns'][1]}\n\n"
                         f"ASSISTANT: {answer('hu-1', 2)}")

    # a rerun resumes turn by turn: with hu-2's turn-2 answer and its record gone, that one request is
    # the only one sent again (turn 1 and both judge calls come from the journal)
    second_key = samples["hu-2"]["request_keys"][1]
    con = sqlite3.connect(example / "run" / "journal.sqlite")
    with con:
        con.execute("DELETE FROM responses WHERE key = ?", (second_key,))
        con.execute("DELETE FROM samples WHERE sample_id = 'hu-2'")
    con.close()
    before = len(sent(base))
    again = run(example, base, example / "mt_chat_hu.yaml", "run")
    assert again.returncode == 0, again.stderr[-3000:]
    log = sent(base)[before:]
    assert len(log) == 1
    samples2, requests2, _ = journal_rows(example / "run")
    assert samples2["hu-2"]["request_keys"] == samples["hu-2"]["request_keys"]
    assert requests2[second_key]["messages"][1] == {"role": "assistant", "content": answer("hu-2", 1)}
    res2 = json.loads((example / "run" / "results.json").read_text(encoding="utf-8"))["tasks"]["mt_chat_hu"]
    assert res2["metrics"]["judge_score"]["value"] == pytest.approx(sum(every) / len(every))


def test_a_plain_model_gets_the_dialogue_as_one_text(tmp_path):
    """A model without a chat template: turn 2's prompt is turn 1, its answer on the next line, then turn 2."""
    from glotbench.models.base import GenResult
    from glotbench.tasks.registry import make_task
    from glotbench.tasks.request_settings import RequestSettings

    for f in EXAMPLES.iterdir():
        shutil.copy(f, tmp_path / f.name)
    path = tmp_path / "mt_chat_cs.yaml"
    task = make_task(load_spec(path), path)
    sample = task.samples()[0]
    settings = RequestSettings()
    first = task.requests(sample, mode="generate", chat=False, settings=settings)[0]
    assert first.prompt == sample.vars["turns"][0]
    said = GenResult(text="<think>hmm</think> Odpověď jedna.")
    second = task.turn_request(sample, [task.fed_back(said)], chat=False, settings=settings)
    assert second.prompt == f"{sample.vars['turns'][0]}\nOdpověď jedna.\n\n{sample.vars['turns'][1]}"
    chat = task.turn_request(sample, [task.fed_back(said)], chat=True,
                             settings=RequestSettings(system_prompt="Jsi asistent."))
    assert [m["role"] for m in chat.messages] == ["system", "user", "assistant", "user"]
    assert chat.messages[2]["content"] == "Odpověď jedna."  # the thinking trace is not fed back


def test_per_turn_values_never_average_an_invalid_score():
    got = per_turn_values([{"judge_score": 8.0, "judge_unreadable": 0.0}, {"judge_score": None, "judge_unreadable": 1.0}])
    assert got == {"judge_score_turn1": 8.0, "judge_unreadable_turn1": 0.0, "judge_score_turn2": None,
                   "judge_unreadable_turn2": 1.0, "judge_score": None, "judge_unreadable": 0.5}


@pytest.mark.parametrize("prompt, why", [
    ({"user": "{{ q }}", "turns": ["{{ q }}", "b"]}, "give one of prompt.user or prompt.turns"),
    ({"turns": []}, "non-empty list"),
    ({"turns": ["a", "  "]}, "non-empty list"),
    ({"turns": ["a", "b"], "plain": "{{ q }}"}, "leave prompt.plain unset"),
])
def test_a_bad_multi_turn_prompt_is_one_line_naming_the_file(tmp_path, prompt, why):
    spec = {"name": "bad_mt", "version": "1", "language": "hu", "dataset": {"format": "jsonl", "splits": {"test": "d.jsonl"}},
            "fields": {"q": "q"}, "prompt": prompt}
    path = tmp_path / "bad_mt.yaml"
    path.write_text(yaml.safe_dump(spec), encoding="utf-8")
    with pytest.raises(TaskSpecError) as err:
        load_spec(path)
    msg = str(err.value)
    assert "\n" not in msg and str(path) in msg and why in msg and "prompt" in msg


def test_a_turn_template_naming_no_field_is_refused_before_any_request(example, stub_server):
    base = stub_server()
    spec = yaml.safe_load((example / "mt_chat_hu.yaml").read_text(encoding="utf-8"))
    spec["prompt"]["turns"][1] = "{{ turns[1] }} {{ kerdes }}"
    (example / "mt_chat_hu.yaml").write_text(yaml.safe_dump(spec, allow_unicode=True), encoding="utf-8")
    done = run(example, base, example / "mt_chat_hu.yaml", "run")
    assert done.returncode != 0
    assert "prompt.turns[1]" in done.stderr and "kerdes" in done.stderr
    assert sent(base) == []


def test_recorded_answers_cannot_answer_a_dialogue(example):
    """A recorded file holds one answer per item, not one per turn: one line before the run."""
    (example / "answers.jsonl").write_text("".join(json.dumps({"id": it["id"], "answer": "x"}) + "\n"
                                                   for it in items("hu")), encoding="utf-8")
    done = glot(example, "run", "--model", f"recorded:{example / 'answers.jsonl'}", "--tasks",
                str(example / "mt_chat_hu.yaml"), "-o", str(example / "run"), "--no-progress", "--judge", "openai:j",
                "--judge-base-url", "http://127.0.0.1:9/v1")  # a port nothing listens on: never reached
    lines = [x for x in done.stderr.splitlines() if x.strip()]
    assert done.returncode == 2 and len(lines) == 1 and "mt_chat_hu: a multi-turn task needs a model" in lines[0]
    assert not (example / "run" / "journal.sqlite").exists()


def test_estimate_counts_every_turn_and_says_what_it_cannot_know(example):
    done = glot(example, "runs", "estimate", "--tasks", str(example / "mt_chat_hu.yaml"), "--model", "openai:gpt-4o")
    assert done.returncode == 0, done.stderr[-2000:]
    text = " ".join(done.stdout.split())
    assert "2 turns per item" in text and "floor" in text
    row = next(x for x in done.stdout.splitlines() if "mt_chat_hu" in x and "generate" in x)
    assert [c.strip() for c in row.split("│")][3:6] == ["3", "generate", "6"]  # 3 items, 2 requests each


def test_the_pairwise_judge_sees_both_models_whole_dialogues(example, stub_server):
    """Two runs of the two-turn task (the second model answers otherwise), then judge-pairwise: each judge
    request holds both turns of both dialogues, MT-Bench's multi-turn pairwise form."""
    base = stub_server("--responses", str(example / "canned.jsonl"))
    other = [{"match": it["turns"][1], "response": "B2-" + it["id"]} for it in items("hu")]
    other += [{"match": it["turns"][0], "response": "B1-" + it["id"]} for it in items("hu")]
    (example / "other.jsonl").write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in other),
                                         encoding="utf-8")
    base_b = stub_server("--responses", str(example / "other.jsonl"), "--answer", "Rating: [[5]]")
    assert run(example, base, example / "mt_chat_hu.yaml", "run_a").returncode == 0
    assert run(example, base_b, example / "mt_chat_hu.yaml", "run_b").returncode == 0
    judge = stub_server("--answer", "A is better. [[A]]", "--log-bodies")
    done = glot(example, "judge", "pairwise", str(example / "run_a"), str(example / "run_b"), "--judge", "openai:pj",
                "--judge-base-url", judge, "-o", str(example / "pw"), "--no-progress")
    assert done.returncode == 0, done.stderr[-3000:]
    bodies = [e["body"] for e in sent(judge)]
    assert len(bodies) == 2 * len(RATINGS)  # both orders per item
    for it in items("hu"):
        mine = [b for b in bodies if any(answer(it["id"], 1) in m["content"] for m in b["messages"])]
        assert len(mine) == 2
        for b in mine:
            text = b["messages"][-1]["content"]
            for part in (it["turns"][0], it["turns"][1], answer(it["id"], 1), answer(it["id"], 2),
                         "B1-" + it["id"], "B2-" + it["id"]):
                assert part in text, part


def test_a_failed_later_turn_is_the_items_error_and_keeps_the_earlier_answers(tmp_path):
    """A fault injected on purpose: a model that refuses every second turn. The item is an error naming the
    turn, turn 1's answer is kept in the record and the journal, and a later run with a model that answers
    takes turn 1 from the journal and sends turn 2 only."""
    import asyncio

    from glotbench.engine.caller import CachedCaller
    from glotbench.engine.journal import Journal
    from glotbench.engine.runner import TaskRun, process_sample
    from glotbench.errors import PermanentModelError
    from glotbench.models.base import GenResult, Model
    from glotbench.tasks.registry import make_task
    from glotbench.tasks.request_settings import RequestSettings

    class Dialogue(Model):
        model_id = "fault:dialogue"

        def __init__(self, refuse_turn_two: bool):
            self.refuse, self.seen = refuse_turn_two, []

        async def generate(self, request):
            users = [m for m in request.messages if m["role"] == "user"]
            self.seen.append(len(users))
            if len(users) > 1 and self.refuse:
                raise PermanentModelError("injected: turn 2 refused")
            return GenResult(text=f"answer {len(users)}")

    for f in EXAMPLES.iterdir():
        shutil.copy(f, tmp_path / f.name)
    path = tmp_path / "mt_chat_cs.yaml"
    spec = yaml.safe_load(path.read_text(encoding="utf-8"))
    del spec["judge"]  # scored by rule: the last turn's answer
    spec.update(scorer="exact_match", metrics=["accuracy"], fields={**spec["fields"], "target": "category"})
    path.write_text(yaml.safe_dump(spec, allow_unicode=True), encoding="utf-8")
    task = make_task(load_spec(path), path)
    sample = task.samples()[0]

    def one(model: Model) -> tuple[str, dict, CachedCaller]:
        journal = Journal(tmp_path / "journal.sqlite")
        caller = CachedCaller(model, journal, concurrency=1)
        tr = TaskRun(task=task, mode="generate", fingerprint={"id": "k"}, samples=[sample], todo=[sample],
                     settings=RequestSettings())
        try:
            status = asyncio.run(process_sample(tr, sample, caller, journal, True))
            journal.flush()
            rec = next(r for r in journal.iter_samples("k", task.name))
        finally:
            journal.close()
        return status, rec, caller

    status, rec, _ = one(Dialogue(refuse_turn_two=True))
    assert status == "error" and rec["error"].startswith("turn 2: ") and "injected" in rec["error"]
    assert rec["outputs"] == [{"text": "answer 1", "reasoning": None, "input_tokens": None, "output_tokens": None,
                               "finish_reason": None, "turn": 1}]
    healthy = Dialogue(refuse_turn_two=False)
    status, rec, caller = one(healthy)
    assert status == "scored" and healthy.seen == [2]  # turn 1 from the journal, turn 2 sent
    assert caller.stats.cached == 1 and caller.stats.sent == 1
    assert [o["text"] for o in rec["outputs"]] == ["answer 1", "answer 2"] and rec["extracted"] == "answer 2"
    from glotbench.report.items import raw_output
    from glotbench.sample_record import SampleRecord

    assert raw_output(SampleRecord.from_json(rec)) == "[turn 1] answer 1\n---\n[turn 2] answer 2"  # the report's view


def test_each_best_of_n_answer_starts_its_own_dialogue(tmp_path):
    """--samples 2: each of turn 1's two answers goes back into its own dialogue (a model whose answer names
    the sample index and the turn, so a crossed chain would show)."""
    import asyncio

    from glotbench.engine.caller import CachedCaller
    from glotbench.engine.journal import Journal
    from glotbench.engine.runner import TaskRun, process_sample
    from glotbench.models.base import GenResult, Model
    from glotbench.tasks.registry import make_task
    from glotbench.tasks.request_settings import RequestSettings

    class Chains(Model):
        model_id = "test:chains"

        def __init__(self):
            self.requests = []

        async def generate(self, request):
            self.requests.append(request)
            turn = sum(m["role"] == "user" for m in request.messages)
            return GenResult(text=f"s{request.sample_index}-t{turn}")

    for f in EXAMPLES.iterdir():
        shutil.copy(f, tmp_path / f.name)
    path = tmp_path / "mt_chat_hu.yaml"
    spec = yaml.safe_load(path.read_text(encoding="utf-8"))
    del spec["judge"]
    spec.update(scorer="exact_match", metrics=["accuracy"], fields={**spec["fields"], "target": "category"})
    path.write_text(yaml.safe_dump(spec, allow_unicode=True), encoding="utf-8")
    task = make_task(load_spec(path), path)
    sample = task.samples()[0]
    model = Chains()
    journal = Journal(tmp_path / "journal.sqlite")
    try:
        tr = TaskRun(task=task, mode="generate", fingerprint={"id": "k"}, samples=[sample], todo=[sample],
                     settings=RequestSettings(samples=2, temperature=0.7))
        assert asyncio.run(process_sample(tr, sample, CachedCaller(model, journal), journal, True)) == "scored"
        journal.flush()
        rec = next(r for r in journal.iter_samples("k", task.name))
    finally:
        journal.close()
    assert [(o["text"], o["turn"]) for o in rec["outputs"]] == [("s0-t1", 1), ("s0-t2", 2), ("s1-t1", 1), ("s1-t2", 2)]
    second = {r.sample_index: r.messages for r in model.requests if len(r.messages) > 1}
    assert {k: m[1]["content"] for k, m in second.items()} == {0: "s0-t1", 1: "s1-t1"}
    assert len(rec["request_keys"]) == 4 and rec["detail"]["dialogue"][-1]["content"] == "s0-t2"
