"""A judged task with its own rubric, declared in YAML and nothing else (glotbench.tasks.judging.declaration):
run through the stub server as model and judge in a fresh process, its scores checked by value against
a plain loop over the stub's replies, unreadable replies counted as declared, a rerun sending nothing,
and bad declarations refused in one line naming the file and the field."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
import yaml

from glotbench.errors import TaskSpecError
from glotbench.tasks.registry import make_task
from glotbench.tasks.spec import load_spec

SRC = str(Path(__file__).resolve().parents[1] / "src")

# Hungarian questions, the stub model's answers, and the stub judge's reply to each answer.
ITEMS = [
    ("k1", "Mi Magyarország fővárosa?", "Budapest", "Budapest", "Indoklás: pontos.\nÉrtékelés: HELYES"),
    ("k2", "Melyik a leghosszabb magyar folyó?", "Tisza", "Duna", "Értékelés: HIBÁS"),
    ("k3", "Ki írta a Himnuszt?", "Kölcsey Ferenc", "Kölcsey", "Értékelés: részben"),  # ignore_case
    ("k4", "Hány megye van Magyarországon?", "19", "húsz körül", "Nem tudom eldönteni."),  # no verdict
    ("k5", "Mi a Balaton?", "tó", "egy tó", "<think>Értékelés: HIBÁS?</think>Értékelés: HELYES"),  # trace dropped
    ("k6", "Melyik évben volt a mohácsi csata?", "1526", "1525", "Értékelés: HELYES vagy Értékelés: HIBÁS"),  # two
    ("k7", "Ki volt Petőfi Sándor?", "költő", "festő", "Értékelés: TALÁN"),  # not a grade
]
GRADES = {"HELYES": 1.0, "RÉSZBEN": 0.5, "HIBÁS": 0.0}

RUBRIC = {
    "name": "hu_tudas_rubrika",
    "prompt": {"hu": {
        "system": "Szigorú értékelő vagy.",
        "user": "Kérdés: {{ question }}\nHelyes válasz: {{ reference }}\nA modell válasza: {{ answer }}\n"
                "Zárd így: \"Értékelés: HELYES\", \"Értékelés: RÉSZBEN\" vagy \"Értékelés: HIBÁS\".",
    }},
    "grades": GRADES,
    "reply": {"regex": r"Értékelés:\s*(\w+)", "ignore_case": True, "match": "only"},
    "unreadable": "exclude",
}


def task_yaml(judge) -> dict:
    return {
        "name": "hu_sajat_tudas", "version": "1", "language": "hu",
        "dataset": {"format": "jsonl", "splits": {"test": "qa.jsonl"}},
        "fields": {"id": "id", "question": "kerdes", "target": "valasz"},
        "prompt": {"user": "Válaszolj röviden. {{ question }}"},
        "generation": {"max_tokens": 64},
        "judge": judge,
    }


def write(path: Path, obj) -> Path:
    path.write_text(yaml.safe_dump(obj, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return path


@pytest.fixture()
def workdir(tmp_path):
    rows = [{"id": i, "kerdes": q, "valasz": gold} for i, q, gold, _, _ in ITEMS]
    (tmp_path / "qa.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    # judge replies first (their prompt holds the answer), then the model's answers (by question)
    canned = [{"match": f"A modell válasza: {ans}\n", "response": reply} for _, _, _, ans, reply in ITEMS]
    canned += [{"match": f"Válaszolj röviden. {q}", "response": ans} for _, q, _, ans, _ in ITEMS]
    (tmp_path / "canned.jsonl").write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in canned),
                                           encoding="utf-8")
    return tmp_path


def glot(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "OPENAI_API_KEY": "x", "GLOTBENCH_DATA": str(cwd), "PYTHONPATH": SRC, "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "glotbench", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=180)


def run_task(cwd: Path, base: str, task: Path, out: str) -> subprocess.CompletedProcess:
    return glot(cwd, "run", "--model", "openai:m", "--base-url", base, "--judge", "openai:j", "--judge-base-url", base,
                "--tasks", str(task), "-o", str(cwd / out), "--no-progress")


def sent(base: str) -> int:
    return len(httpx.get(base.replace("/v1", "/_log"), timeout=10).json()["log"])


def plain_reading(reply: str) -> str | None:
    """The rubric's rule restated: the text after the thinking trace, every "Értékelés: WORD", the
    same grade each time (case ignored) and one of the grades; else None (unreadable)."""
    body = reply.split("</think>")[-1]
    said = {w.upper() for w in re.findall(r"Értékelés:\s*(\w+)", body, flags=re.IGNORECASE)}
    if len(said) != 1:
        return None
    word = said.pop()
    return word if word in GRADES else None


def expected(policy) -> dict[str, float]:
    """Plain loop over the stub's replies: mean score, share per grade, unreadable rate."""
    scores, shares, unreadable = [], {g: [] for g in GRADES}, 0
    for *_, reply in ITEMS:
        grade = plain_reading(reply)
        if grade is None:
            unreadable += 1
            if policy == "exclude":
                continue
            if "grade" in policy:
                grade = policy["grade"]
            else:
                scores.append(policy["score"])
                for g in GRADES:
                    shares[g].append(0.0)
                continue
        scores.append(GRADES[grade])
        for g in GRADES:
            shares[g].append(1.0 if grade == g else 0.0)
    out = {"judge_score": sum(scores) / len(scores), "judge_unreadable_rate": unreadable / len(ITEMS)}
    out.update({f"mean:judge_share_{g}": sum(v) / len(v) for g, v in shares.items()})
    return out


@pytest.mark.parametrize("policy", ["exclude", {"grade": "HIBÁS"}, {"score": 0.25}], ids=["exclude", "grade", "score"])
def test_own_rubric_scores_equal_a_plain_loop_and_a_rerun_sends_nothing(workdir, stub_server, policy):
    base = stub_server("--responses", str(workdir / "canned.jsonl"))
    task = write(workdir / "hu_sajat_tudas.yaml", task_yaml({**RUBRIC, "unreadable": policy}))
    done = run_task(workdir, base, task, "run")
    assert done.returncode == 0, done.stderr[-2000:]
    assert sent(base) == 2 * len(ITEMS)  # one answer and one judge call per item
    res = json.loads((workdir / "run" / "results.json").read_text(encoding="utf-8"))["tasks"]["hu_sajat_tudas"]
    want = expected(policy)
    got = {name: m["value"] for name, m in res["metrics"].items()}
    assert set(got) == set(want)
    for name, value in want.items():
        assert got[name] == pytest.approx(value, abs=1e-6), name
    assert want["judge_unreadable_rate"] == pytest.approx(3 / 7)  # k4, k6, k7: the case the test is about
    # per item: the grade as the plain loop reads it, the rule applied
    records = {json.loads(line)["sample_id"]: json.loads(line)
               for line in (workdir / "run" / "samples.jsonl").read_text(encoding="utf-8").splitlines()}
    for sid, *_, reply in ITEMS:
        grade = plain_reading(reply)
        rec = records[sid]
        if grade is None and policy == "exclude":
            assert rec["pred"] is None
        else:
            assert rec["pred"] == (grade or policy.get("grade")), sid

    again = run_task(workdir, base, task, "run")
    assert again.returncode == 0, again.stderr[-2000:]
    assert sent(base) == 2 * len(ITEMS)  # the same command again: nothing sent
    res2 = json.loads((workdir / "run" / "results.json").read_text(encoding="utf-8"))["tasks"]["hu_sajat_tudas"]
    assert {n: m["value"] for n, m in res2["metrics"].items()} == got


def test_judge_file_by_path_with_a_scale_and_a_json_key_edited_rescores_without_a_call(tmp_path, stub_server):
    """Czech: the task names a judge file; the judge answers JSON with a 1-10 score; a reply out of the
    scale or without the key is unreadable and counts as the declared score. Editing the rubric's
    unreadable score changes the task's fingerprint: the items are rescored, and nothing is sent."""
    items = [("c1", "Jaké je hlavní město Česka?", "Praha", "Praha", '{"hodnoceni": 9, "duvod": "správně"}'),
             ("c2", "Kolik je 2 + 2?", "4", "5", 'Hodnocení: {"hodnoceni": 2}'),
             ("c3", "Kdo napsal Babičku?", "Božena Němcová", "Němcová", '{"hodnoceni": 7.5}'),
             ("c4", "Jak dlouhá je Vltava?", "430 km", "asi 400 km", '{"hodnoceni": 11}'),  # off the scale
             ("c5", "Kde leží Brno?", "na Moravě", "v Čechách", "Nevím.")]  # no JSON
    (tmp_path / "otazky.jsonl").write_text("".join(json.dumps({"id": i, "otazka": q, "odpoved": g}, ensure_ascii=False)
                                                   + "\n" for i, q, g, _, _ in items), encoding="utf-8")
    canned = [{"match": f"Odpověď modelu: {a}\n", "response": r} for *_, a, r in items]
    canned += [{"match": q, "response": a} for _, q, _, a, _ in items]
    (tmp_path / "canned.jsonl").write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in canned),
                                           encoding="utf-8")
    judge = {"name": "cs_hodnoceni", "language": "cs",
             "prompt": {"cs": {"user": "Otázka: {{ question }}\nSprávná odpověď: {{ reference }}\n"
                                       "Odpověď modelu: {{ answer }}\nOhodnoť 1-10 jako JSON {\"hodnoceni\": N}."}},
             "scale": {"min": 1, "max": 10}, "reply": {"json_key": "hodnoceni"}, "unreadable": {"score": 1},
             "metrics": ["score", "unreadable"]}
    write(tmp_path / "hodnoceni.judge.yaml", judge)
    task = write(tmp_path / "cs_znalosti.yaml", {
        "name": "cs_znalosti", "version": "1", "language": "cs",
        "dataset": {"format": "jsonl", "splits": {"test": "otazky.jsonl"}},
        "fields": {"id": "id", "question": "otazka", "target": "odpoved"},
        "prompt": {"user": "{{ question }}"}, "judge": "hodnoceni.judge.yaml"})
    base = stub_server("--responses", str(tmp_path / "canned.jsonl"))

    def scores(unreadable_score: float) -> dict:
        vals = []
        for *_, reply in items:
            m = re.search(r"\{.*\}", reply)
            x = json.loads(m.group(0)).get("hodnoceni") if m else None
            vals.append(float(x) if x is not None and 1 <= x <= 10 else unreadable_score)
        return {"judge_score": sum(vals) / len(vals), "judge_unreadable_rate": 2 / 5}

    done = run_task(tmp_path, base, task, "run")
    assert done.returncode == 0, done.stderr[-2000:]
    res = json.loads((tmp_path / "run" / "results.json").read_text(encoding="utf-8"))["tasks"]["cs_znalosti"]
    for name, value in scores(1.0).items():
        assert res["metrics"][name]["value"] == pytest.approx(value, abs=1e-6), name
    n = sent(base)
    assert n == 2 * len(items)

    write(tmp_path / "hodnoceni.judge.yaml", {**judge, "unreadable": {"score": 0}})
    again = run_task(tmp_path, base, task, "run")
    assert again.returncode == 0, again.stderr[-2000:]
    assert sent(base) == n  # the judge requests did not change: read from the journal
    res = json.loads((tmp_path / "run" / "results.json").read_text(encoding="utf-8"))["tasks"]["cs_znalosti"]
    for name, value in scores(0.0).items():
        assert res["metrics"][name]["value"] == pytest.approx(value, abs=1e-6), name


# ---------------------------------------------------------------- bad declarations: one line, file and field

BAD = [
    ({"reply": {"regex": r"Értékelés:\s*\w+"}}, "judge.reply.regex", "needs a group"),
    ({"reply": {"regex": "(["}}, "judge.reply.regex", "not a regular expression"),
    ({"reply": {"regex": "(x)", "json_key": "grade"}}, "judge.reply", "exactly one of"),
    ({"reply": {"rule": "nope"}}, "judge.reply.rule", "unknown reply rule 'nope'"),
    ({"unreadable": {"grade": "JÓ"}}, "judge.unreadable.grade", "unknown grade 'JÓ'"),
    ({"unreadable": None}, "judge.unreadable", ""),
    ({"aliases": {"OK": "JÓ"}}, "judge.aliases.OK", "unknown grade 'JÓ'"),
    ({"scale": {"min": 1, "max": 10}}, "judge.grades", "exactly one of"),
    ({"grdes": {"A": 1}}, "judge.grdes", "unknown field"),
    ({"language": "cs"}, "judge.language", "no prompt for 'cs'"),
    ({"metrics": ["score", "median"]}, "judge.metrics.1", ""),
    ({"prompt": {"hu": {"user": "{{ valasz }}: {{ answer }}"}}}, "judge.prompt.hu.user", "unknown variable 'valasz'"),
    ({"prompt": {"hu": {"user": "{{ answer "}}}, "judge.prompt.hu.user", "template syntax error"),
]


@pytest.mark.parametrize(("change", "field", "message"), BAD, ids=[b[1] + ":" + b[2] for b in BAD])
def test_bad_inline_declaration_is_one_line_naming_file_and_field(tmp_path, change, field, message):
    judge = {k: v for k, v in {**RUBRIC, **change}.items() if v is not None}
    path = write(tmp_path / "feladat.yaml", task_yaml(judge))
    with pytest.raises(TaskSpecError) as err:
        make_task(load_spec(path), path)
    text = str(err.value)
    assert "\n" not in text
    assert text.startswith(f"{path}: field '{field}'"), text
    assert message in text


def test_bad_judge_file_names_the_judge_file_and_its_field(tmp_path):
    write(tmp_path / "r.judge.yaml", {**RUBRIC, "reply": {"regex": "no group"}})
    path = write(tmp_path / "feladat.yaml", task_yaml("r.judge.yaml"))
    with pytest.raises(TaskSpecError, match=re.escape(f"{tmp_path / 'r.judge.yaml'}: field 'reply.regex': needs a group")):
        load_spec(path)
    missing = write(tmp_path / "f2.yaml", task_yaml("nincs.judge.yaml"))
    with pytest.raises(TaskSpecError, match=re.escape(f"{missing}: field 'judge': judge file nincs.judge.yaml not found")):
        load_spec(missing)


def test_bad_declaration_stops_the_cli_before_any_call(workdir, stub_server):
    base = stub_server("--responses", str(workdir / "canned.jsonl"))
    task = write(workdir / "rossz.yaml", task_yaml({**RUBRIC, "unreadable": {"grade": "JÓ"}}))
    done = run_task(workdir, base, task, "run")
    assert done.returncode == 2, done.stderr[-2000:]
    err = [line for line in done.stderr.strip().splitlines() if line.strip()]
    assert any(f"{task}: field 'judge.unreadable.grade': unknown grade 'JÓ'" in line for line in err), done.stderr
    assert sent(base) == 0


# ---------------------------------------------------------------- the built-in graders are declarations

def test_builtin_graders_are_judge_files_the_task_scan_skips():
    from glotbench.tasks.judging.declaration import JUDGE_SUFFIX, declared_judges, load_judge_file
    from glotbench.tasks.judging.prompts import GRADERS, load_grader
    from glotbench.tasks.registry import all_specs

    files = declared_judges()
    assert {"chinese_simpleqa", "chinese_simpleqa_en", "husimpleqa"} <= set(files)
    for name, path in files.items():
        assert load_judge_file(path).name == name  # the file's stem is the name a task's options.grader gives
    assert set(GRADERS) == {"chinese_simpleqa", "chinese_simpleqa_en", "husimpleqa"}
    assert load_grader("husimpleqa").parser == "evaluation_json" and load_grader("chinese_simpleqa").parser == "abc"
    assert not any(str(p).endswith(JUDGE_SUFFIX) for _, p in all_specs().values())


# ---------------------------------------------------------------- the docs' task file runs as written

def test_the_docs_judged_task_runs_as_written(tmp_path, stub_server):
    """docs/adding-a-task.md's judged task with its own rubric: its JSON lines and its YAML block, as
    written there, run on the stub as model and judge; the score equals the plain loop."""
    doc = (Path(__file__).resolve().parents[1] / "docs" / "adding-a-task.md").read_text(encoding="utf-8")
    section = doc.split("## A judged task with its own rubric", 1)[1].split("\n## ", 1)[0]
    data = re.search(r"```json\n(.*?)```", section, flags=re.S).group(1)
    task_text = re.search(r"```yaml\n(.*?)```", section, flags=re.S).group(1)
    (tmp_path / "tudas.jsonl").write_text(data, encoding="utf-8")
    task = tmp_path / "hu_tudas.yaml"
    task.write_text(task_text, encoding="utf-8")
    answers = {"k1": ("Budapest", "Értékelés: HELYES"), "k2": ("Kölcsey", "Nem tudom.")}
    rows = [json.loads(line) for line in data.splitlines() if line.strip()]
    canned = [{"match": f"A modell válasza: {a}\n", "response": r} for a, r in answers.values()]
    canned += [{"match": f"Válaszolj röviden: {row['kerdes']}", "response": answers[row["id"]][0]} for row in rows]
    (tmp_path / "canned.jsonl").write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in canned),
                                           encoding="utf-8")
    base = stub_server("--responses", str(tmp_path / "canned.jsonl"))
    done = run_task(tmp_path, base, task, "run")
    assert done.returncode == 0, done.stderr[-2000:]
    res = json.loads((tmp_path / "run" / "results.json").read_text(encoding="utf-8"))["tasks"]["hu_tudas"]["metrics"]
    grades = [plain_reading(r) for _, r in answers.values()]
    read = [GRADES[g] for g in grades if g is not None]
    assert res["judge_score"]["value"] == pytest.approx(sum(read) / len(read))
    assert res["judge_unreadable_rate"]["value"] == pytest.approx(grades.count(None) / len(grades))
    assert res["mean:judge_share_HELYES"]["value"] == pytest.approx(1.0)


# The HuWildBench checklist judge before it became hu_wildbench.judge.yaml (glotbench 2026-11-27),
# restated: the prompt filled by str.replace in the reference's order, the score read by the
# reference's pattern (lenient: the looser one), 1-10.
_OLD_SCORE = re.compile(r"\"score\": \"(.*?)\"")
_OLD_LENIENT = re.compile(r"[\"']?score[\"']?\s*:\s*[\"']?\[?\s*(\d+(?:\.\d+)?)(?!\s*[~\-–]\s*\d)(?![\d.])")


def _old_prompt(template: str, record: dict, prediction: str) -> str:
    from glotbench.benchmarks.openhueval.common import strip_think

    history = "".join(("USER: " if t["role"] == "user" else "ASSISTANT: ") + t["content"] + "\n\n" for t in record["turn"][:-1])
    p = template.replace("{history}", history)
    p = p.replace("{user_query}", record["turn"][-1]["content"])
    p = p.replace("{checklist}", "".join(f"- {c}\n" for c in record["checklist"]))
    return p.replace("{prediction}", strip_think(prediction))


def _old_score(text: str, lenient: bool) -> float | None:
    import math

    from glotbench.benchmarks.openhueval.common import strip_think

    text = strip_think(text or "")
    score = None
    m = _OLD_SCORE.findall(text)
    if m:
        try:
            score = float(m[0])
        except ValueError:
            score = None
    if score is None and lenient:
        m2 = _OLD_LENIENT.search(text)
        score = float(m2.group(1)) if m2 else None
    if score is not None and not (1 <= score <= 10 and math.isfinite(score)):
        score = None
    return score


REPLIES = ['{"strengths": "jó", "weaknesses": "", "score": "8"}', '"score": "7.5" and "score": "2"', '"score": 8',
           "'score': 9", '"score": "[1~10]"', '"score": [1~10]', '"score": "11"', '"score": "0"', '"score": "x"',
           '"score": "x" "score": 6', '"score": "nan"', '"score": " 4 "', "<think>\"score\": \"3\"</think>\"score\": \"9\"",
           "<think>unfinished \"score\": \"3\"", "no score at all", "", '"Score": "5"', '"score": "1e1"', '"score":"6"']


def test_wildbench_judge_declaration_is_the_old_prompt_and_score_rule():
    from glotbench.tasks.judging.prompts import read_prompt_json
    from glotbench.models.base import GenRequest
    from glotbench.benchmarks.openhueval import wildbench as wb
    from glotbench.paths import benchmark_file

    path = benchmark_file(f"openhueval/prompts/{wb.JUDGE_FILE}")
    template = read_prompt_json(path, "prompt file")["score_prompt"]
    records = wb.load(str(Path(__file__).parent / "fixtures" / "hu_wildbench_sample.jsonl"))
    tricky = {**records[0], "turn": [{"role": "user", "content": "{checklist} és {prediction}?"},
                                     {"role": "assistant", "content": "{user_query}"},
                                     {"role": "user", "content": "Mi a {history}? {checklist}"}],
              "checklist": ["{prediction} említése", "{user_query}"]}
    predictions = ["<think>gondolkodom</think>Kóstold meg a lángost!", "{history} {checklist} {user_query}", ""]
    for rec in [*records, tricky]:
        for pred in predictions:
            assert wb.build_judge_prompt(rec, pred) == _old_prompt(template, rec, pred)
    for reply in REPLIES:
        for lenient in (False, True):
            assert wb.parse_judgement(reply, lenient=lenient)["score"] == _old_score(reply, lenient), (reply, lenient)
    # the task's judge request is the one it sent before (same cache key: a rerun sends nothing)
    spec = load_spec(Path(wb.__file__).parent / "tasks" / "hu_wildbench.yaml")
    task = make_task(spec, None)
    from glotbench.tasks.task import Sample

    sample = Sample(task=task.name, id="x", index=0, vars={"record": records[0]}, target=None)
    out = type("Out", (), {"text": predictions[0]})()
    old = GenRequest(messages=({"role": "user", "content": _old_prompt(template, records[0], predictions[0])},),
                     max_tokens=8192, temperature=0.0)
    assert task.judge_requests(sample, [out])[0].key("judge") == old.key("judge")


def test_a_second_judge_regrades_the_run_through_the_journal(workdir, stub_server):
    """`glotbench judge RUN --judge J2` on a judged task declared in YAML: one call per item, the same
    scores under J2 (the stub replies alike), and the same command again sends nothing."""
    base = stub_server("--responses", str(workdir / "canned.jsonl"))
    task = write(workdir / "hu_sajat_tudas.yaml", task_yaml(RUBRIC))
    assert run_task(workdir, base, task, "run").returncode == 0
    n = sent(base)
    for calls in (len(ITEMS), 0):
        done = glot(workdir, "judge", "rerun", str(workdir / "run"), "--judge", "openai:j2", "--judge-base-url", base)
        assert done.returncode == 0, done.stderr[-2000:]
        assert sent(base) == n + calls
        n = sent(base)
    judges = json.loads((workdir / "run" / "results.json").read_text(encoding="utf-8"))["judges"]
    j2 = next(v for k, v in judges.items() if k.startswith("openai:j2"))["tasks"]["hu_sajat_tudas"]
    metrics = j2.get("metrics", j2)
    assert metrics["judge_score"]["value"] == pytest.approx(expected("exclude")["judge_score"], abs=1e-6)


def test_a_copied_task_file_finds_its_judge_file_by_name_and_its_options_win(tmp_path):
    """A built-in task file copied elsewhere (as tests/test_openhueval_e2e.py does) still finds
    ``judge: hu_wildbench.judge.yaml`` among the task folders; its options.judge_max_tokens is sent."""
    from glotbench.benchmarks.openhueval import wildbench as wb
    from glotbench.tasks.task import Sample

    src = Path(wb.__file__).parent / "tasks" / "hu_wildbench.yaml"
    raw = yaml.safe_load(src.read_text(encoding="utf-8"))
    raw["options"]["judge_max_tokens"] = 24
    copy = write(tmp_path / "hu_wildbench.yaml", raw)
    spec = load_spec(copy)
    assert spec.judge == load_spec(src).judge and spec.judge.name == "hu_wildbench"
    task = make_task(spec, copy)
    rec = wb.load(str(Path(__file__).parent / "fixtures" / "hu_wildbench_sample.jsonl"))[0]
    req = task.judge_requests(Sample(task=task.name, id="x", index=0, vars={"record": rec}, target=None),
                              [type("Out", (), {"text": "Válasz"})()])[0]
    assert req.max_tokens == 24 and req.temperature == 0.0
