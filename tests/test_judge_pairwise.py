"""`glotbench judge-pairwise`: the reply parser, the two-order rule (MT-Bench's), win/tie/loss with
bootstrap intervals and the Bradley-Terry ranking, each checked by value against a plain
re-statement; the command itself in fresh subprocesses against the stub judge, whose replies
depend on which answer sits first (so verdicts flip with the position where the test says so);
positions swapped in the journal, the rerun sends nothing, a killed run resumes; bad inputs give
one line. The last test judges two real runs of the embedded model."""

from __future__ import annotations

import json
import math
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import httpx
import numpy as np
import pytest

from journal_rows import count_responses

REPO = Path(__file__).resolve().parents[1]
N_BOOT = 200


def cli(*args, check: bool = True, timeout: float = 600) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "NO_COLOR": "1"}
    p = subprocess.run([sys.executable, "-m", "glotbench", *map(str, args)], capture_output=True, text=True, env=env,
                       timeout=timeout)
    if check:
        assert p.returncode == 0, p.stdout + p.stderr
    return p


# ---------------------------------------------------------------------------------------------- plain re-statements
def mt_bench_outcome(x_first: str, y_first: str) -> str:
    """MT-Bench show_result.py, from X's side: errors dropped; g1 tie or g1 != g2 -> tie."""
    if "error" in (x_first, y_first):
        return "dropped"
    g1 = {"A": "X", "B": "Y", "tie": "tie"}[x_first]
    g2 = {"A": "Y", "B": "X", "tie": "tie"}[y_first]
    if g1 == "tie" or g1 != g2:
        return "tie"
    return "win" if g1 == "X" else "loss"


def plain_rates(outcomes: list[str]) -> np.ndarray:
    n = len(outcomes)
    w, t, l = (sum(o == k for o in outcomes) / n for k in ("win", "tie", "loss"))
    return np.array([w, t, l, w + t / 2])


def plain_interval(outcomes: list[str], n_boot: int = N_BOOT, seed: int = 0) -> np.ndarray:
    """(4, 2): the percentile interval of win, tie, loss, score, one resample at a time."""
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(outcomes), size=(n_boot, len(outcomes)))
    stats = np.array([plain_rates([outcomes[k] for k in row]) for row in idx])
    return np.quantile(stats, [0.025, 0.975], axis=0).T


def newton_bt(n: int, rows: list[tuple[int, int, float, float]], prior_var: float) -> np.ndarray:
    """Posterior mode of Bradley-Terry with a N(0, prior_var) prior, by a plain Newton loop.
    rows: (i, j, half-wins of i, half-wins of j)."""
    s = np.zeros(n)
    for _ in range(100):
        g = -s / prior_var
        H = -np.eye(n) / prior_var
        for i, j, a, b in rows:
            p = 1 / (1 + math.exp(-(s[i] - s[j])))
            d = a - (a + b) * p
            g[i] += d
            g[j] -= d
            h = (a + b) * p * (1 - p)
            H[i, i] -= h
            H[j, j] -= h
            H[i, j] += h
            H[j, i] += h
        s = s - np.linalg.solve(H, g)
    return s - s.mean()


def mm_bt(n: int, rows: list[tuple[int, int, float, float]], iters: int = 20000) -> np.ndarray:
    """Maximum-likelihood Bradley-Terry by Hunter's (2004) MM algorithm; log-strengths, mean 0."""
    W = np.zeros(n)
    N = np.zeros((n, n))
    for i, j, a, b in rows:
        W[i] += a
        W[j] += b
        N[i, j] += a + b
        N[j, i] += a + b
    p = np.ones(n)
    for _ in range(iters):
        p = W / np.array([sum(N[i, j] / (p[i] + p[j]) for j in range(n) if j != i) for i in range(n)])
        p /= np.exp(np.log(p).mean())
    return np.log(p) - np.log(p).mean()


# ---------------------------------------------------------------------------------------------- units
def test_reply_parser_cases():
    from glotbench.judges.pairwise_verdict import parse_pairwise_reply

    cases = {
        "A is more accurate. [[A]]": ("A", "A"),
        "Final verdict: [[b]]": ("B", "error"),  # MT-Bench's reader is case-sensitive
        "[[ C ]]": ("tie", "error"),
        "Both are equally good. [[C]]": ("tie", "tie"),
        "": ("unreadable", "error"),
        "Assistant B wins": ("unreadable", "error"),
        "[[A]] if A is better, [[B]] if B is better": ("unreadable", "A"),  # the format line echoed
        "<think>maybe [[B]]</think>After all: [[A]]": ("A", "A"),  # the trace is not the verdict
        "[[B]] ... so again [[B]]": ("B", "B"),
    }
    for text, (choice, mt) in cases.items():
        v = parse_pairwise_reply(text)
        assert (v.choice, v.mt_bench) == (choice, mt), (text, v)


def test_two_orders_follow_mt_benchs_rule():
    from glotbench.judges.pairwise_verdict import combine, kind_of

    to_mt = {"A": "A", "B": "B", "tie": "tie", "unreadable": "error"}
    for x_first in to_mt:
        for y_first in to_mt:
            want = mt_bench_outcome(to_mt[x_first], to_mt[y_first])
            got = combine(x_first, y_first)
            assert (got if got != "unreadable" else "dropped") == want, (x_first, y_first)
    assert kind_of("A", "A") == "flip" and kind_of("B", "B") == "flip"  # each order favours position 1 / 2
    assert kind_of("A", "B") == "consistent" and kind_of("tie", "tie") == "consistent"
    assert kind_of("A", "tie") == "half_tie" and kind_of("unreadable", "A") == "unreadable"


def test_prompt_in_the_tasks_language_english_otherwise():
    from glotbench.judges.pairwise_prompts import pairwise_prompt

    hu, fell = pairwise_prompt("hu")
    assert hu.language == "hu" and not fell and "Pártatlan bíráló" in hu.system
    assert pairwise_prompt("hun")[0].language == "hu"  # a language pack's alias
    assert pairwise_prompt("cs")[0].language == "cs" and pairwise_prompt("zh")[0].language == "zh"
    mn, fell = pairwise_prompt("mn")
    assert mn.language == "en" and fell
    assert pairwise_prompt(None) == (mn, True)
    msgs = hu.render("Mi a főváros?", "Budapest {answer_b}", "Bécs")
    assert msgs[0]["role"] == "system" and msgs[1]["content"].index("Budapest {answer_b}") < msgs[1]["content"].index("Bécs")


def test_win_tie_loss_intervals_equal_a_plain_loop():
    from glotbench.report.analysis.pairwise_stats import win_tie_loss

    rng = np.random.default_rng(3)
    outcomes = list(rng.choice(["win", "tie", "loss"], size=37, p=[0.5, 0.2, 0.3]))
    got = win_tie_loss(outcomes, n_boot=N_BOOT, seed=0)
    point, ci = plain_rates(outcomes), plain_interval(outcomes)
    for k, name in enumerate(("win", "tie", "loss", "score")):
        assert got[name]["value"] == pytest.approx(point[k], abs=1e-12)
        assert (got[name]["low"], got[name]["high"]) == pytest.approx(tuple(ci[k]), abs=1e-12)
    assert got["counts"] == {k: outcomes.count(k) for k in ("win", "tie", "loss")}


def test_bradley_terry_equals_independent_fits():
    from glotbench.report.analysis.bradley_terry import bradley_terry, fit_strengths

    pairs = [(0, 1), (0, 2), (1, 2), (2, 3), (1, 3)]
    counts = np.array([[6, 2, 3], [7, 1, 2], [4, 3, 4], [5, 0, 1], [2, 2, 2]], dtype=float)
    rows = [(i, j, a + t / 2, b + t / 2) for (i, j), (a, t, b) in zip(pairs, counts)]
    # a flat prior: the maximum-likelihood fit, as Hunter's MM algorithm finds it
    assert fit_strengths(4, pairs, counts, prior_var=1e9) == pytest.approx(mm_bt(4, rows), abs=1e-5)
    # the default prior, and a run that wins every comparison (no finite MLE): a plain Newton loop
    for c in (counts, np.array([[5, 0, 0], [4, 0, 0], [0, 1, 3], [2, 0, 2], [1, 1, 0]], dtype=float)):
        r = [(i, j, a + t / 2, b + t / 2) for (i, j), (a, t, b) in zip(pairs, c)]
        assert fit_strengths(4, pairs, c, prior_var=10.0) == pytest.approx(newton_bt(4, r, 10.0), abs=1e-6)
    # intervals: items resampled with replacement, every pair's outcome on an item kept together
    rng = np.random.default_rng(5)
    items = [("t", str(k)) for k in range(12)]
    outcomes = [{it: str(rng.choice(["win", "tie", "loss"])) for it in items if rng.random() < 0.9} for _ in pairs]
    got = bradley_terry(["a", "b", "c", "d"], pairs, outcomes, n_boot=60, seed=1)
    order = sorted({it for oc in outcomes for it in oc}, key=repr)

    def rows_of(chosen: list) -> list:
        out = []
        for (i, j), oc in zip(pairs, outcomes):
            res = [oc[it] for it in chosen if it in oc]
            w, t, l = (res.count(k) for k in ("win", "tie", "loss"))
            out.append((i, j, w + t / 2, l + t / 2))
        return out

    point = newton_bt(4, rows_of(order), 10.0)
    idx = np.random.default_rng(1).integers(0, len(order), size=(60, len(order)))
    boot = np.array([newton_bt(4, rows_of([order[k] for k in row]), 10.0) for row in idx])
    lo, hi = np.quantile(boot, [0.025, 0.975], axis=0)
    by_label = {r["label"]: r for r in got["runs"]}
    for k, label in enumerate("abcd"):
        assert by_label[label]["strength"] == pytest.approx(point[k], abs=1e-6)
        assert (by_label[label]["low"], by_label[label]["high"]) == pytest.approx((lo[k], hi[k]), abs=1e-5)
    assert [r["label"] for r in got["runs"]] == [("abcd")[k] for k in np.argsort(-point)]


# ---------------------------------------------------------------------------------------------- synthetic runs + stub
LANG = {"t.hu": "hu", "t.mn": "mn"}
# the text between the first answer and the second in the judge's user turn, per prompt language
MIDDLE = {"hu": "\n[Az A asszisztens válaszának vége]\n\n[A B asszisztens válasza]\n",
          "en": "\n[End of assistant A's answer]\n\n[Assistant B's answer]\n"}
PROMPT_LANG = {"hu": "hu", "mn": "en"}
ITEMS = [("t.hu", str(k)) for k in range(1, 7)] + [("t.mn", str(k)) for k in range(1, 4)]
RUNS = ("X", "Y", "Z")
# what the judge does on each item, per pair (R, S) of runs, R listed first:
#   R / S: that run's answer wins in both orders; flipA: [[A]] in both orders (a position-biased
#   judge); tie: [[C]] in both; half: [[A]] with R first, [[C]] with S first; unread: no verdict
#   with R first; echo: the format line echoed with R first; think: a thinking trace naming [[B]]
#   and then [[A]] with R first, [[B]] with S first
PLAN = {
    ("X", "Y"): ["R", "R", "S", "flipA", "tie", "R", "half", "unread", "think"],
    ("X", "Z"): ["R", "R", "R", "S", "echo", "flipA", "R", "tie", "R"],
    ("Y", "Z"): ["R", "S", "tie", "R", "R", "half", "S", "R", "flipA"],
}
REPLY = {  # behaviour -> (reply with R first, reply with S first)
    "R": ("R is better. [[A]]", "R is better. [[B]]"),
    "S": ("S is better. [[B]]", "S is better. [[A]]"),
    "flipA": ("The first one. [[A]]", "The first one. [[A]]"),
    "tie": ("Equal. [[C]]", "Equal. [[C]]"),
    "half": ("[[A]]", "[[C]]"),
    "unread": ("Both answers are fine.", "[[A]]"),
    "echo": ('Output "[[A]]" if assistant A is better, "[[B]]" if assistant B is better', "[[B]]"),
    "think": ("<think>perhaps [[B]]</think>No: [[A]]", "[[B]]"),
}
EXPECT = {"R": ("win", "consistent"), "S": ("loss", "consistent"), "flipA": ("tie", "flip"),
          "tie": ("tie", "consistent"), "half": ("tie", "half_tie"), "unread": (None, "unreadable"),
          "echo": (None, "unreadable"), "think": ("win", "consistent")}
MISSING = {"Z": {("t.mn", "3")}}  # Z never had this item
ERRORED = {"Y": {("t.hu", "6")}}  # Y's record of this item is an error


def answer(run: str, key) -> str:
    return f"answer-{run}-{key[0]}-{key[1]}"


def make_run(path: Path, run: str) -> Path:
    from glotbench.engine.journal import Journal

    j = Journal(path / "journal.sqlite")
    for idx, key in enumerate(ITEMS):
        if key in MISSING.get(run, ()):
            continue
        task, item = key
        rec = {"lang": LANG[task], "prompt": [{"role": "system", "content": f"You are run {run}."},
                                              {"role": "user", "content": f"Question {task} #{item}?"}]}
        if key in ERRORED.get(run, ()):
            j.put_sample("rk", task, item, idx, "error", {**rec, "error": "HTTP 500"})
        else:
            j.put_sample("rk", task, item, idx, "scored", {**rec, "outputs": [{"text": answer(run, key)}]})
    j.close()
    return path


def shared(r: str, s: str) -> list:
    have = {run: {k for k in ITEMS if k not in MISSING.get(run, ()) and k not in ERRORED.get(run, ())} for run in RUNS}
    return [k for k in ITEMS if k in have[r] and k in have[s]]


def responses_file(path: Path) -> Path:
    lines = []
    for (r, s), plan in PLAN.items():
        for key, behaviour in zip(ITEMS, plan):
            mid = MIDDLE[PROMPT_LANG[LANG[key[0]]]]
            r_first, s_first = REPLY[behaviour]
            lines.append({"match": answer(r, key) + mid + answer(s, key) + "\n", "response": r_first})
            lines.append({"match": answer(s, key) + mid + answer(r, key) + "\n", "response": s_first})
    path.write_text("\n".join(json.dumps(x, ensure_ascii=False) for x in lines) + "\n", encoding="utf-8")
    return path


def expected_outcomes(r: str, s: str) -> tuple[list[str], dict]:
    counted, kinds = [], {}
    for key, behaviour in zip(ITEMS, PLAN[r, s]):
        if key not in shared(r, s):
            continue
        outcome, kind = EXPECT[behaviour]
        kinds[kind] = kinds.get(kind, 0) + 1
        if outcome:
            counted.append(outcome)
    return counted, kinds


def slots(user: str) -> tuple[str, str]:
    """(the answer in the first position, the one in the second) of an English judge request."""
    m = re.search(r"\[Assistant A's answer\]\n(.*)\n\[End of assistant A's answer\]\n\n"
                  r"\[Assistant B's answer\]\n(.*)\n\[End of assistant B's answer\]$", user, re.S)
    assert m, user
    return m.group(1), m.group(2)


def stub_log(base: str) -> list:
    return httpx.get(base.removesuffix("/v1") + "/_log").json()["log"]


@pytest.fixture()
def three_runs(tmp_path):
    return [make_run(tmp_path / name, name) for name in RUNS]


def test_three_runs_by_value_positions_swapped_and_rerun_sends_nothing(three_runs, tmp_path, stub_server):
    base = stub_server("--responses", str(responses_file(tmp_path / "responses.jsonl")), "--answer", "no rule matched")
    out = tmp_path / "pw"
    args = ("judge", "pairwise", *three_runs, "--judge", "openai:stub", "--judge-base-url", base, "-o", out,
            "--no-progress", "--n-boot", N_BOOT, "--seed", 0)
    first = cli(*args)
    summary = json.loads((out / "pairwise.json").read_text(encoding="utf-8"))
    n_pairs_items = sum(len(shared(r, s)) for r, s in PLAN)
    assert len(stub_log(base)) == 2 * n_pairs_items  # two orders per shared item, all answers differ

    # win/tie/loss per pair, by value against the plan and a plain bootstrap loop
    rows = {(p["a"], p["b"]): p for p in summary["pairs"]}
    for (r, s) in PLAN:
        counted, kinds = expected_outcomes(r, s)
        p = rows[r, s]
        assert p["counts"] == {k: counted.count(k) for k in ("win", "tie", "loss")}
        assert (p["flips"], p["half_ties"], p["unreadable"]) == (kinds.get("flip", 0), kinds.get("half_tie", 0),
                                                                 kinds.get("unreadable", 0))
        point, ci = plain_rates(counted), plain_interval(counted)
        for k, name in enumerate(("win", "tie", "loss", "score")):
            assert p[name]["value"] == pytest.approx(point[k], abs=1e-12)
            assert (p[name]["low"], p[name]["high"]) == pytest.approx(tuple(ci[k]), abs=1e-12)
    assert (rows["X", "Y"]["only_a"], rows["X", "Y"]["only_b"]) == (1, 0)  # Y's errored item
    # Z lacks t.mn 3 (only X, only Y have it); Y's t.hu 6 is an error (only Z answered it)
    assert (rows["X", "Z"]["only_a"], rows["Y", "Z"]["only_a"], rows["Y", "Z"]["only_b"]) == (1, 1, 1)
    assert summary["english_prompt_for"] == {"t.mn": "mn"}
    assert rows["X", "Y"]["prompt_languages"] == {"hu": 5, "en": 3}

    # Bradley-Terry: against a plain Newton loop on the same half-win counts
    bt_rows = []
    for (r, s) in PLAN:
        counted, _ = expected_outcomes(r, s)
        w, t, l = (counted.count(k) for k in ("win", "tie", "loss"))
        bt_rows.append((RUNS.index(r), RUNS.index(s), w + t / 2, l + t / 2))
    want = newton_bt(3, bt_rows, 10.0)
    got = {r["label"]: r for r in summary["bradley_terry"]["runs"]}
    for k, run in enumerate(RUNS):
        assert got[run]["strength"] == pytest.approx(want[k], abs=1e-6)
        assert got[run]["low"] <= got[run]["strength"] <= got[run]["high"]
    assert [r["label"] for r in summary["bradley_terry"]["runs"]] == [RUNS[k] for k in np.argsort(-want)]
    assert "Bradley-Terry" in first.stdout and "X" in first.stdout

    # the journal: each shared item asked twice, the answers' positions swapped; language per task
    con = sqlite3.connect(out / "journal.sqlite")
    reqs = [json.loads(q) for (q,) in con.execute("SELECT request FROM responses WHERE role='judge'")]
    con.close()
    users = [q["messages"][-1]["content"] for q in reqs]
    systems = {q["messages"][-1]["content"].split("\n")[0]: q["messages"][0]["content"] for q in reqs}
    assert len(users) == 2 * n_pairs_items
    for (r, s) in PLAN:
        for key in shared(r, s):
            ar, as_ = answer(r, key), answer(s, key)
            orders = [u.index(ar) < u.index(as_) for u in users if ar in u and as_ in u]
            assert sorted(orders) == [False, True], (r, s, key)
    assert systems["[Kérdés]"].startswith("Pártatlan bíráló vagy") and systems["[Question]"].startswith("You are an impartial judge")

    # per-item file: flips counted as ties, each verdict with the run that sat first
    items = [json.loads(x) for x in (out / "pairwise_items.jsonl").read_text(encoding="utf-8").splitlines()]
    flip = next(o for o in items if (o["a"], o["b"], o["task"], o["item"]) == ("X", "Y", "t.hu", "4"))
    assert flip["outcome"] == "tie" and flip["kind"] == "flip"
    assert [v["first"] for v in flip["verdicts"]] == ["X", "Y"] and [v["choice"] for v in flip["verdicts"]] == ["A", "A"]

    # the same command again sends nothing and writes the same numbers
    n_log = len(stub_log(base))
    again = cli(*args)
    assert len(stub_log(base)) == n_log
    assert "requests sent 0" in again.stdout
    assert json.loads((out / "pairwise.json").read_text(encoding="utf-8"))["pairs"] == summary["pairs"]


def test_killed_judging_resumes_without_resending(three_runs, tmp_path, stub_server):
    base = stub_server("--responses", str(responses_file(tmp_path / "responses.jsonl")), "--delay", "0.3")
    out = tmp_path / "pw"
    args = ["judge", "pairwise", *map(str, three_runs), "--judge", "openai:stub", "--judge-base-url", base, "-o", str(out),
            "--no-progress", "--n-boot", "50", "-j", "1"]
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    proc = subprocess.Popen([sys.executable, "-m", "glotbench", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=env)
    deadline = time.time() + 120
    while time.time() < deadline and count_responses(out / "journal.sqlite") < 5 and proc.poll() is None:
        time.sleep(0.1)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    before = count_responses(out / "journal.sqlite")
    assert 5 <= before < 2 * sum(len(shared(r, s)) for r, s in PLAN)
    cli(*args)
    total = 2 * sum(len(shared(r, s)) for r, s in PLAN)
    assert count_responses(out / "journal.sqlite") == total
    assert len(stub_log(base)) <= total + 1  # at most the one request in flight at the kill went twice
    rows = {(p["a"], p["b"]): p for p in json.loads((out / "pairwise.json").read_text(encoding="utf-8"))["pairs"]}
    for (r, s) in PLAN:
        counted, _ = expected_outcomes(r, s)
        assert rows[r, s]["counts"] == {k: counted.count(k) for k in ("win", "tie", "loss")}


def test_failed_judge_requests_leave_items_out_and_the_rerun_asks_again(three_runs, tmp_path):
    from glotbench.testing.servers import free_port, start_stub, stop

    responses = str(responses_file(tmp_path / "responses.jsonl"))
    port = free_port()
    # every 2nd distinct request gets a body that is not JSON (a malformed answer), on every attempt
    base, proc = start_stub("--responses", responses, "--bad", "not-json", "--bad-every", "2", port=port)
    out = tmp_path / "pw"
    args = ("judge", "pairwise", *three_runs, "--judge", "openai:stub", "--judge-base-url", base, "-o", out,
            "--no-progress", "--n-boot", 50, "--max-retries", 0)
    total = 2 * sum(len(shared(r, s)) for r, s in PLAN)
    try:
        cli(*args)
        bad_sent = sum(1 for e in stub_log(base) if e.get("bad"))
    finally:
        stop(proc)
    summary = json.loads((out / "pairwise.json").read_text(encoding="utf-8"))
    items = [json.loads(x) for x in (out / "pairwise_items.jsonl").read_text(encoding="utf-8").splitlines()]
    failed = [o for o in items if o["outcome"] == "failed"]
    assert 0 < bad_sent < total and failed and all("judge request failed" in o["error"] for o in failed)
    assert sum(p["failed"] for p in summary["pairs"]) == len(failed) == summary["requests"]["failed"]
    for p in summary["pairs"]:  # a failed item counts nowhere
        assert p["n"] + p["unreadable"] + p["failed"] == p["judged"]
    assert count_responses(out / "journal.sqlite") == total - bad_sent
    base, proc = start_stub("--responses", responses, port=port)  # the same judge (same URL), healthy now
    try:
        cli(*args)
        assert len(stub_log(base)) == bad_sent  # only what failed is asked again
    finally:
        stop(proc)
    rows = {(p["a"], p["b"]): p for p in json.loads((out / "pairwise.json").read_text(encoding="utf-8"))["pairs"]}
    for (r, s) in PLAN:
        counted, _ = expected_outcomes(r, s)
        assert rows[r, s]["counts"] == {k: counted.count(k) for k in ("win", "tie", "loss")} and rows[r, s]["failed"] == 0


def _one_error_line(p: subprocess.CompletedProcess) -> str:
    assert p.returncode == 2, p.stdout + p.stderr
    lines = [x for x in p.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), p.stderr
    return lines[0]


def test_bad_inputs_give_one_line(tmp_path):
    good = make_run(tmp_path / "X", "X")
    (tmp_path / "empty").mkdir()
    judge = ("--judge", "openai:stub", "--judge-base-url", "http://127.0.0.1:9/v1", "--no-progress")
    line = _one_error_line(cli("judge", "pairwise", good, tmp_path / "empty", *judge, check=False))
    assert "empty" in line and "no journal.sqlite" in line
    other = tmp_path / "other"
    from glotbench.engine.journal import Journal

    j = Journal(other / "journal.sqlite")
    j.put_sample("rk", "t.other", "1", 0, "scored", {"lang": "en", "prompt": "Q?", "outputs": [{"text": "a"}]})
    j.close()
    line = _one_error_line(cli("judge", "pairwise", good, other, *judge, check=False))
    assert "no shared items" in line and "X" in line and "other" in line
    line = _one_error_line(cli("judge", "pairwise", good, other, "--tasks", "nope", *judge, check=False))
    assert "none of the tasks nope" in line and "t.hu, t.mn" in line
    assert "two or more" in _one_error_line(cli("judge", "pairwise", good, *judge, check=False))
    assert "given twice" in _one_error_line(cli("judge", "pairwise", good, tmp_path / "." / "X", *judge, check=False))


# ---------------------------------------------------------------------------------------------- embedded model
@pytest.mark.slow
def test_two_embedded_runs_judged_pairwise(smollm2_path, data_root, tmp_path, stub_server):
    runs = []
    for name, system in (("terse", "Answer with the letter only."), ("chatty", "Explain your answer in one sentence.")):
        cli("run", "--model", "embedded", "--tasks", "mm_eval.knowledge", "--limit", 4, "--max-tokens", 24,
            "--system-prompt", system, "-o", tmp_path / name, "--no-progress")
        runs.append(tmp_path / name)

    def answers(run: Path) -> dict:
        con = sqlite3.connect(run / "journal.sqlite")
        rows = {sid: json.loads(rec) for sid, rec in con.execute("SELECT sample_id, record FROM samples")}
        con.close()
        return {sid: r["outputs"][0]["text"].strip() for sid, r in rows.items()}

    con = sqlite3.connect(runs[0] / "journal.sqlite")
    question = {sid: json.loads(rec)["prompt"][-1]["content"] for sid, rec in con.execute("SELECT sample_id, record FROM samples")}
    con.close()

    a, b = answers(runs[0]), answers(runs[1])
    ids = sorted(a, key=int)
    mid = MIDDLE["en"]  # mm_eval is Mongolian: no Mongolian pairwise prompt, so the English one
    plan, lines = {}, []
    for k, sid in enumerate(ids):
        behaviour = ["R", "flipA", "tie", "unread"][k % 4] if a[sid] != b[sid] else "flipA"
        plan[sid] = behaviour
        r_first, s_first = REPLY[behaviour]
        lines.append({"match": a[sid] + mid + b[sid] + "\n", "response": r_first})
        lines.append({"match": b[sid] + mid + a[sid] + "\n", "response": s_first})
    (tmp_path / "responses.jsonl").write_text("\n".join(json.dumps(x, ensure_ascii=False) for x in lines), encoding="utf-8")
    base = stub_server("--responses", str(tmp_path / "responses.jsonl"), "--answer", "no rule matched")
    out = tmp_path / "pw"
    args = ("judge", "pairwise", *runs, "--judge", "openai:stub", "--judge-base-url", base, "-o", out, "--no-progress",
            "--n-boot", N_BOOT)
    cli(*args)
    pair = json.loads((out / "pairwise.json").read_text(encoding="utf-8"))["pairs"][0]
    counted = [EXPECT[plan[sid]][0] for sid in ids if EXPECT[plan[sid]][0]]
    assert pair["counts"] == {k: counted.count(k) for k in ("win", "tie", "loss")}
    assert pair["flips"] == sum(plan[sid] == "flipA" for sid in ids) and pair["unreadable"] == sum(
        plan[sid] == "unread" for sid in ids)
    point, ci = plain_rates(counted), plain_interval(counted)
    assert pair["score"]["value"] == pytest.approx(point[3]) and (pair["score"]["low"], pair["score"]["high"]) == pytest.approx(tuple(ci[3]))
    # positions swapped in the journal (identical answers make one request, sent once)
    con = sqlite3.connect(out / "journal.sqlite")
    users = [json.loads(q)["messages"][-1]["content"] for (q,) in con.execute("SELECT request FROM responses")]
    con.close()
    by_question: dict[str, set] = {}
    for u in users:
        q = u.split("[Question]\n", 1)[1].split("\n\n[Assistant A's answer]", 1)[0]
        by_question.setdefault(q, set()).add(slots(u))
    for sid in ids:  # each item's two answers, in both positions
        assert by_question[question[sid]] == {(a[sid], b[sid]), (b[sid], a[sid])}, sid
    n_log = len(stub_log(base))
    assert n_log == len(users) == sum(2 if a[s] != b[s] else 1 for s in ids)
    assert "requests sent 0" in cli(*args).stdout
    assert len(stub_log(base)) == n_log


def test_pairwise_b_a_after_a_b_sends_nothing(three_runs, tmp_path, stub_server):
    """issue 48: the default folder (and so the judge's journal) of a comparison does not depend on the
    order the runs were given: ``B A`` after ``A B`` sends 0 requests and lands in the same folder."""
    base = stub_server("--responses", str(responses_file(tmp_path / "responses.jsonl")), "--answer", "no rule matched")
    x, y = three_runs[0], three_runs[1]
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "NO_COLOR": "1"}

    def pairwise(*runs):
        p = subprocess.run([sys.executable, "-m", "glotbench", "judge", "pairwise", *map(str, runs), "--judge", "openai:stub",
                            "--judge-base-url", base, "--no-progress", "--n-boot", "50"],
                           capture_output=True, text=True, env=env, timeout=600, cwd=tmp_path)
        assert p.returncode == 0, p.stdout + p.stderr
        return p

    pairwise(x, y)
    n_first = len(stub_log(base))
    assert n_first == 2 * len(shared("X", "Y"))
    again = pairwise(y, x)
    assert len(stub_log(base)) == n_first, "B A judged the comparisons A B had already paid for"
    assert "requests sent 0" in again.stdout
    assert len(list((tmp_path / "runs" / "pairwise").iterdir())) == 1
