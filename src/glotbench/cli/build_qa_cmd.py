"""`glotbench build` steps that make or check items with models (imported by build_cmd):
passages, qa, criteria, retrieval-check, dedup, select --swiss, checklist, task.

Each step reads JSONL items (or passages), writes the kept items to ``--output`` and the removed
ones to ``<output>.dropped.jsonl`` (``removed_by``, ``reason``), prints one line of counts, and
sends every model call through ``build.journal.sqlite`` beside the output (``--journal`` to move
it): rerun a killed step and nothing answered is sent again. ``--dry-run`` prints the counts and
the calls it would make, without loading any weights or sending anything.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any, Optional

import typer

from glotbench.cli.build_app import build_app
from glotbench.cli.option_groups import (Flags, JournalOptions, calls_in_flight, one, options, retry_policy, setting_option,
                                         several)
from glotbench.settings import CallOptions, JudgeOptions, ModelOptions, RunSettings

OUT_HELP = "Output JSONL (kept items); removed ones go to <output>.dropped.jsonl."
# the option groups of every step that calls a model: the model (or judge), calling, journal
MODEL_STEP = {"mo": ModelOptions, "co": CallOptions, "journal": JournalOptions}
UNPARSED_HELP = "A judge reply that names no verdict (label): drop the item, or keep it (recorded as unparsed)"
MAX_TOKENS_HELP = "Output token limit of each call"
ITEMS_LANGUAGE = "(cs, en ...; default: the items' language field, else en)."
JUDGE_STEP = {"jo": (JudgeOptions, {"required": ("judge",)}), "co": CallOptions, "journal": JournalOptions}


def items_argument(help: str = "Items JSONL (with id).") -> Any:
    """A step's input file as its argument (``build criteria qa.jsonl ...``), as cloze, review and filter take theirs."""
    return typer.Argument(None, metavar="ITEMS", show_default=False,
                          help=help + " Its earlier flag -i/--input is still accepted.")


def hidden_input(flags: tuple[str, ...] = ("--input", "-i")) -> Any:
    """The input's earlier flag, still accepted, not listed (the argument is the one spelling shown)."""
    return typer.Option(None, *flags, hidden=True, help="The input's earlier spelling (give the argument instead).")


def one_input(step: str, arg: Optional[Path], flag: Optional[Path], what: str = "items", spelled: str = "-i/--input") -> Path:
    """The input given as the argument or by its earlier flag: once, and at all."""
    from glotbench.errors import GlotbenchError

    if arg is not None and flag is not None and Path(arg) != Path(flag):
        raise GlotbenchError(f"build {step}: give the {what} once (the argument, or {spelled})")
    if arg is None and flag is None:
        raise GlotbenchError(f"build {step}: which {what}? Give the file as the argument: glotbench build {step} FILE ...")
    return Path(arg if arg is not None else flag)


def _write(step: str, output: Path, kept: list[dict], dropped: list[dict], extra: str = "") -> None:
    from glotbench.build.provenance import dropped_path, write_items

    write_items(output, kept)
    write_items(dropped_path(output), dropped)
    reasons = Counter(d.get("removed_by", "?") for d in dropped)
    why = " (" + ", ".join(f"{k} {v}" for k, v in sorted(reasons.items())) + ")" if reasons else ""
    print(f"{step}: in {len(kept) + len(dropped)} · kept {len(kept)} · dropped {len(dropped)}{why}{extra}")
    print(f"{step}: wrote {output} and {dropped_path(output)}")


def _model(spec: str, base_url: Optional[str], model_args: dict, co: CallOptions):
    from glotbench.models.registry import load_cli_model

    return load_cli_model(spec, model_args, base_url=base_url, timeout=co.timeout)


def judge_step(step: str, calls, spec: str, base_url: Optional[str], model_args: dict, co: CallOptions,
               journal: JournalOptions, output: Path, dry_run: bool, what: str):
    """A judge step's calls, as every build step that grades items sends them: with --dry-run the
    estimate is printed (None); else the judge is loaded as ``glotbench run`` loads it and the calls go
    through the step's journal: ``(model, replies, report)``."""
    from glotbench.build.calls import journal_path, run_calls

    jpath = journal_path(output, journal.journal)
    if dry_run:
        _dry(step, calls, spec, base_url, jpath, what, model_args)
        return None
    m = _model(spec, base_url, model_args, co)
    replies, rep = run_calls(m, jpath, calls, step=step, role=f"judge:{m.model_id}",
                             concurrency=calls_in_flight(co.concurrency, m), wait=journal.wait, policy=retry_policy(co))
    return m, replies, rep


def _dry(step: str, calls, spec: str, base_url: Optional[str], journal: Path, what: str,
         model_args: Optional[dict] = None) -> None:
    from glotbench.build.calls import dry_model_id, estimate

    model_id = dry_model_id(spec, base_url, model_args)
    e = estimate(calls, model_id, journal)
    print(f"{step} --dry-run: {what} · calls {e['calls']} (model {model_id}) · already in the journal "
          f"{e['in_journal']} · to send {e['to_send']} · journal {journal}")


def _items(path: Path) -> list[dict]:
    from glotbench.build.provenance import read_items
    from glotbench.errors import DataError

    items = read_items(path)
    seen: dict[str, int] = {}
    for n, it in enumerate(items, 1):
        if "id" not in it:
            raise DataError(f"{path}: record {n}: field 'id' missing")
        if str(it["id"]) in seen:
            raise DataError(f"{path}: record {n}: field 'id': {it['id']!r} is also record {seen[str(it['id'])]}")
        seen[str(it["id"])] = n
    return items


@build_app.command("passages")
@options((RunSettings, "output!"), about={"output": "Passages JSONL ({id, title, text})."})
def passages_cmd(
    source: Optional[Path] = typer.Argument(None, metavar="PASSAGES", show_default=False,
                                            help="A JSONL of passages or a folder of .txt files (or --ctkfacts FILE). "
                                                 "Its earlier flag -i/--input is still accepted."),
    input: Optional[Path] = hidden_input(),
    ctkfacts: Optional[Path] = typer.Option(None, "--ctkfacts", help="A CTKFacts export JSONL: take its evidence paragraphs."),
    limit: int = setting_option(30, "--limit", "-n", help="How many passages (first N distinct)."),
    min_chars: int = setting_option(200, "--min-chars", help="--ctkfacts: shortest paragraph taken."),
    *, output: Path,
) -> None:
    """Collect passages for `build qa` into one JSONL (also the corpus of `build retrieval-check`)."""
    from glotbench.build.passages import ctkfacts_passages, read_passages
    from glotbench.build.provenance import write_items
    from glotbench.errors import GlotbenchError

    if source is not None and input is not None and Path(source) != Path(input):
        raise GlotbenchError("build passages: give the passages once (the argument, or -i/--input)")
    input = source if source is not None else input
    if bool(ctkfacts) == bool(input):
        raise GlotbenchError("build passages: give exactly one of --ctkfacts FILE or the passages (argument PATH)")
    ps = ctkfacts_passages(ctkfacts, limit, min_chars=min_chars) if ctkfacts else read_passages(input)[:limit]
    write_items(output, ps)
    print(f"passages: wrote {len(ps)} to {output}")


@build_app.command("qa")
@options((Flags, "language!", "dry_run"), (RunSettings, "output!"), **MODEL_STEP,
         about={"language": "The passages' language (prompt and items in it): cs, en, ...",
                "output": OUT_HELP})
def qa_cmd(
    source: Optional[Path] = typer.Argument(None, metavar="PASSAGES", show_default=False,
                                            help="Passages: JSONL with id/title/text, or a folder of .txt files. Its "
                                                 "earlier flag -p/--passages is still accepted."),
    passages: Optional[Path] = hidden_input(("--passages", "-p")),
    limit: Optional[int] = setting_option(None, "--limit", "-n", help="First N passages (default: all)."),
    max_answer_words: int = setting_option(10, "--max-answer-words", help="Longer answers are not short factual answers: dropped."),
    format: str = setting_option("json", "--format", "-f", help="json: the papers' instruction prompt, a JSON reply; lines: "
                                 "two plain completions (question, then answer) for small or base models."),
    max_tokens: int = setting_option(200, "--max-tokens", help=MAX_TOKENS_HELP + " (format json)."),
    *, mo: ModelOptions, co: CallOptions, journal: JournalOptions, output: Path, dry_run: bool = False,
      language: str,
) -> None:
    """Short factual QA from passages (Chinese SimpleQA Fig. 18 / HuSimpleQA App. C.3), one pair per passage."""
    from glotbench.build import qa
    from glotbench.build.calls import Session, journal_path
    from glotbench.build.passages import read_passages
    from glotbench.build.provenance import add_step, drop
    from glotbench.errors import GlotbenchError

    fmt = format
    passages = one_input("qa", source, passages, "passages", "-p/--passages")
    ps = read_passages(passages)[:limit] if limit else read_passages(passages)
    if fmt not in ("json", "lines"):
        raise GlotbenchError(f"build qa: format must be json or lines (--set format=lines), got {fmt!r}")
    if fmt == "json":
        calls = qa.qa_calls(ps, language, max_tokens=max_tokens)
    else:
        calls = [qa.lines_question_call(p, language) for p in ps]
    jpath = journal_path(output, journal.journal)
    model = one(mo.model, "--model")
    if dry_run:
        extra = " (+ one answer call per question read, format lines)" if fmt == "lines" else ""
        _dry("qa", calls, model, mo.base_url, jpath, f"passages {len(ps)}{extra}", mo.load_args())
        return
    m = _model(model, mo.base_url, mo.load_args(), co)
    session = Session(m, jpath, step="qa", concurrency=calls_in_flight(co.concurrency, m), wait=journal.wait,
                      policy=retry_policy(co))
    try:
        replies = session.run(calls)
        answers: dict[str, str] = {}
        if fmt == "lines":  # second call per passage: the answer to the question just written
            answers = session.run([qa.lines_answer_call(c, replies[c.item], language) for c in calls
                                   if replies.get(c.item, "").strip()])
    finally:
        session.close()
    rep = session.report
    kept, dropped = [], []
    for p, c in zip(ps, calls):
        item = {"id": f"{p['id']}-q0", "passage_id": p["id"], "title": p["title"], "passage": p["text"], "language": language}
        add_step(item, "qa", source=p["id"], model=m.model_id, prompt_sha256=c.prompt_sha256, format=fmt)
        if c.item not in replies:
            dropped.append(drop(item, "qa", f"model call failed: {rep.errors.get(c.item, '?')}"))
            continue
        if fmt == "lines":
            akey = c.item + "#answer"
            item["reply"] = replies[c.item] + "\n" + answers.get(akey, "")
            parsed = ((replies[c.item].strip(), answers[akey].strip()) if akey in answers
                      else "empty question line" if not replies[c.item].strip() else f"answer call failed: {rep.errors.get(akey, '?')}")
        else:
            item["reply"] = replies[c.item]
            parsed = qa.parse_qa(replies[c.item])
        if isinstance(parsed, str):
            dropped.append(drop(item, "qa_parse", parsed))
            continue
        item["question"], item["answer"] = parsed
        why = qa.check_pair(*parsed, max_answer_words)
        if why:
            dropped.append(drop(item, "qa_parse", why))
            continue
        del item["reply"]
        kept.append(item)
    _write("qa", output, kept, dropped, f" · {rep.line()}")


@build_app.command("criteria")
@options((Flags, "dry_run"), (RunSettings, "output!"), **JUDGE_STEP, about={"output": OUT_HELP})
def criteria_cmd(
    source: Optional[Path] = items_argument("QA items (from build qa)."),
    input: Optional[Path] = hidden_input(),
    criterion: Optional[list[str]] = typer.Option(None, "--criterion", help="Check only these (repeat); default the five (plus csqa_fig19 for Chinese items)."),
    criterion_file: Optional[list[Path]] = typer.Option(None, "--criterion-file", help="Your own criterion (YAML: name, prompt per "
                                                        "language, verdict rule; repeat): checked beside --criterion (without "
                                                        "--criterion: only the files' criteria). docs/building-a-benchmark.md."),
    unparsed: str = setting_option("drop", "--unparsed", help=UNPARSED_HELP + "."),
    max_tokens: int = setting_option(160, "--max-tokens", help=MAX_TOKENS_HELP + "."),
    *, jo: JudgeOptions, co: CallOptions, journal: JournalOptions, output: Path, dry_run: bool = False,
) -> None:
    """The papers' criteria, one judge call each: unique_answer, time_stable, grounded, not_from_title, unambiguous."""
    from glotbench.build import criteria as cr
    from glotbench.build.provenance import add_step, drop, prompt_sha256
    from glotbench.errors import GlotbenchError

    input = one_input("criteria", source, input)
    items = _items(input)
    names = list(criterion or ([] if criterion_file else cr.default_criteria(items)))
    bad = [n for n in names if n not in cr.CRITERIA]
    on_unparsed = unparsed or "drop"
    if bad or on_unparsed not in ("drop", "keep"):
        raise GlotbenchError(f"build criteria: unknown --criterion {bad} (known: {', '.join(cr.CRITERIA)})" if bad
                             else f"build criteria: unparsed must be drop or keep, got {on_unparsed!r}")
    calls = cr.criteria_calls(items, names, max_tokens=max_tokens)
    users = []
    if criterion_file:  # every file and every item checked, every prompt rendered, before any request
        from glotbench.build.criterion_file import user_criteria_calls

        users, more = user_criteria_calls(items, input, list(criterion_file), set(cr.CRITERIA), max_tokens)
        calls += more
        names += [u.name for u in users]
    read = {u.name: u.verdict for u in users}
    sent = judge_step("criteria", calls, one(jo.judge, "--judge"), one(jo.judge_base_url, "--judge-base-url"),
                      jo.judge_args, co, journal, output, dry_run, f"items {len(items)} · criteria {len(names)}")
    if sent is None:
        return
    m, replies, rep = sent
    by_id = {c.item: c for c in calls}
    kept, dropped = [], []
    for it in items:
        verdicts, failed = {}, None
        for name in names:
            key = f"{it['id']}#{name}"
            if key not in by_id:
                verdicts[name] = {"verdict": "no_title"}
                continue
            if key not in replies:
                verdicts[name] = {"verdict": "error", "error": rep.errors.get(key, "?")}
                failed = failed or (name, f"judge call failed: {rep.errors.get(key, '?')}")
                continue
            v = read.get(name, cr.parse_verdict)(replies[key])
            verdicts[name] = {"verdict": v, "prompt_sha256": by_id[key].prompt_sha256, "reply": replies[key][:400]}
            if v == "fail" or (v == "unparsed" and on_unparsed == "drop"):
                failed = failed or (name, "the judge says the item fails it" if v == "fail" else "no verdict in the judge's reply")
        it["criteria"] = verdicts
        add_step(it, "criteria", source=it.get("passage_id"), model=m.model_id,
                 prompt_sha256=prompt_sha256(cr.TEMPLATE), criteria=names, unparsed=on_unparsed,
                 **({"criterion_files": {u.name: {"path": str(u.path), "sha256": prompt_sha256(u.text)} for u in users}}
                    if users else {}))
        if failed:
            dropped.append(drop(it, f"criteria:{failed[0]}", failed[1]))
        else:
            kept.append(it)
    tally = {n: Counter(it["criteria"][n]["verdict"] for it in items) for n in names}
    print("criteria verdicts: " + " · ".join(f"{n} " + "/".join(f"{v} {c}" for v, c in sorted(t.items())) for n, t in tally.items()))
    _write("criteria", output, kept, dropped, f" · {rep.line()}")


@build_app.command("retrieval-check")
@options((RunSettings, "output!"), about={"output": OUT_HELP})
def retrieval_cmd(
    source: Optional[Path] = items_argument("QA items."),
    input: Optional[Path] = hidden_input(),
    passages: Path = typer.Option(..., "--passages", "-p", help="The corpus: the passages the items were made from (JSONL or .txt folder)."),
    k: int = setting_option(3, "--k", "-k", help="Keep an item when its source passage is among the top k BM25 hits for its question."),
    max_chars: int = setting_option(600, "--max-chars", help="Pieces the index cuts documents into (the RAG mode's default)."),
    *, output: Path,
) -> None:
    """Retrieval verification with the RAG mode's BM25 retriever (bm25s) over the passages."""
    from glotbench.build.passages import read_passages
    from glotbench.build.provenance import add_step, drop
    from glotbench.build.retrieval_check import CorpusCheck

    items = _items(one_input("retrieval-check", source, input))
    corpus = output.parent / (output.name.removesuffix(".jsonl") + ".corpus")
    check = CorpusCheck(read_passages(passages), corpus, max_chars=max_chars)
    kept, dropped = [], []
    for it in items:
        rank, hits = check.rank(it["question"], str(it.get("passage_id")), k)
        it["retrieval"] = {"k": k, "rank": rank, "top": hits, "retriever": "bm25 (bm25s, glotbench.prompts.retrieval)"}
        add_step(it, "retrieval_check", source=it.get("passage_id"), k=k)
        if rank is None:
            dropped.append(drop(it, "retrieval_check", f"source passage {it.get('passage_id')} not in the top {k} BM25 hits"))
        else:
            kept.append(it)
    _write("retrieval-check", output, kept, dropped, f" · k {k} · corpus {corpus}")


def difficulty_filter(input: Path, output: Path, models: list[str], *, max_correct: int, judge: Optional[str] = None,
                      judge_base_url: Optional[str] = None, base_url: Optional[str] = None, language: Optional[str] = None,
                      work: Optional[Path] = None, dry_run: bool = False, model_args: Optional[dict] = None,
                      common: Optional[dict] = None) -> None:
    """`build filter --difficulty` (Chinese SimpleQA §3.3) through the normal engine (glotbench.evaluate)."""
    from glotbench.build.difficulty import run_settings
    from glotbench.build.provenance import add_step, drop
    from glotbench.build.sequential import per_model_args
    from glotbench.errors import GlotbenchError

    if not models:
        raise GlotbenchError("build filter --difficulty: give at least one --model")
    margs = per_model_args(models, model_args)  # -M as in glotbench run (N:KEY=VALUE for the N-th only)
    items = _items(input)
    lang = language or next((it.get("language") for it in items if it.get("language")), None) or "en"
    if dry_run:
        per = 2 if judge else 1
        print(f"filter --difficulty --dry-run: items {len(items)} · settings {len(models)} · calls at most "
              f"{len(items) * len(models) * per} ({'answer + judge' if judge else 'answer'} per item and setting; "
              f"runs resume from their own journals)")
        return
    work = work or output.parent / (output.name.removesuffix(".jsonl") + ".difficulty")
    results = run_settings(items, list(models), work, language=lang, judge=judge, judge_base_url=judge_base_url,
                           base_url=base_url, model_args=margs, common=common)
    kept, dropped = [], []
    for it in items:
        per = {s: r.get(str(it["id"])) for s, r, _ in results}
        n_ok = sum(1 for v in per.values() if v)
        it["difficulty"] = {"correct": per, "n_correct": n_ok, "max_correct": max_correct,
                            "graded_by": f"judge {judge}" if judge else "answer in reply (rapidfuzz default_process)"}
        add_step(it, "difficulty", source=it.get("passage_id"), model=", ".join(models), judge=judge,
                 runs=[d for _, _, d in results])
        if n_ok > max_correct:
            dropped.append(drop(it, "difficulty", f"{n_ok} of {len(models)} settings answered correctly (max {max_correct})"))
        else:
            kept.append(it)
    _write("filter --difficulty", output, kept, dropped, f" · runs under {work}")


# `build filter` is one command for both filters, defined in build_items_cmd: its --difficulty
# calls difficulty_filter above with these options.


@build_app.command("dedup")
@options((RunSettings, "output!"), about={"output": OUT_HELP})
def dedup_cmd(
    source: Optional[Path] = items_argument(),
    input: Optional[Path] = hidden_input(),
    threshold: float = setting_option(85.0, "--threshold", help="Drop a question scoring at least this (0-100, rapidfuzz token_sort_ratio) against a kept one."),
    field: str = setting_option("question", "--field", help="The item field compared."),
    against: Optional[list[Path]] = setting_option(None, "--against", help="Other sets' JSONL (comma-separate; the flag: repeat "
                                                   "it): an item duplicating any of their questions is dropped too (cross-set "
                                                   "dedup); every duplicate pair is listed side by side in <output stem>.duplicates.csv."),
    against_field: Optional[str] = setting_option(None, "--against-field", help="The other sets' text field (default: field)."),
    embed: Optional[str] = setting_option(None, "--embed", help="A local encoder directory (transformers or sentence-transformers "
                                          "save): dedup by embedding cosine instead of rapidfuzz (OpenHuEval App. B.2)."),
    cosine: float = setting_option(0.85, "--cosine", help="embed: drop an item whose cosine with a kept (or against) one is at least this."),
    group_field: Optional[str] = setting_option(None, "--group-field", help="embed: compare items only within each value of "
                                                "this field (OpenHuEval B.2: within each secondary tag). Default: one group."),
    *, output: Path,
) -> None:
    """Near-duplicate questions (rapidfuzz, or with the embed setting: embedding cosine); the dropped one names the item it duplicates."""
    from glotbench.build.dedup import SCORER, dedup
    from glotbench.build.provenance import add_step, drop

    items = _items(one_input("dedup", source, input))
    if group_field and not embed:
        from glotbench.errors import GlotbenchError

        raise GlotbenchError("build dedup: group_field goes with embed (--set embed=DIR)")
    if embed:
        from glotbench.cli.build_dedup_against import embed_run

        kept, dropped = embed_run(items, output, embed, cosine, field, against, against_field, group_field)
        _write("dedup", output, kept, dropped, f" · cosine >= {cosine} ({embed})")
        return
    if against:
        from glotbench.cli.build_dedup_against import read_others

        others = read_others(against)  # every file read and checked before anything is written
    kept, dups = dedup(items, threshold, field)
    for it in kept:
        add_step(it, "dedup", source=it.get("passage_id"), scorer=SCORER, threshold=threshold)
    dropped = []
    for it, of, score in dups:
        add_step(it, "dedup", source=it.get("passage_id"), scorer=SCORER, threshold=threshold)
        it["duplicate_of"], it["similarity"] = of, score
        dropped.append(drop(it, "dedup", f"near-duplicate of {of} (similarity {score} >= {threshold})"))
    if against:
        from glotbench.cli.build_dedup_against import cross_set

        kept = cross_set(kept, dropped, dups, others, output, threshold, field, against_field)
    _write("dedup", output, kept, dropped, f" · threshold {threshold} ({SCORER})")


@build_app.command("select")
@options((Flags, "dry_run"), (RunSettings, "output!"), **JUDGE_STEP, about={"output": OUT_HELP})
def select_cmd(
    source: Optional[Path] = items_argument("Candidate items (with id)."),
    input: Optional[Path] = hidden_input(),
    swiss: bool = typer.Option(True, "--swiss", hidden=True, help="Swiss-system rounds (the one procedure; the flag "
                               "that named it is still accepted)."),
    k: int = typer.Option(..., "--k", "-k", help="Keep the best k per group."),
    group_field: Optional[str] = setting_option(None, "--group-field", help="Pick the best k within each value of this "
                                                "field (OpenHuEval B.3: per secondary tag). Default: one group."),
    rounds: Optional[int] = setting_option(None, "--rounds", help="Pairwise: default ceil(log2(n)) per group; batches: the most rounds (default 50)."),
    batch: int = setting_option(2, "--batch", help="Candidates per judgment (2: pairwise). OpenHuEval B.3: --set batch=5,pick=2,eliminate=0.65."),
    pick: int = setting_option(1, "--pick", help="Winners per judgment."),
    eliminate: float = setting_option(0.0, "--eliminate", help="Share of candidates eliminated after each round (batches; default 0)."),
    field: str = setting_option("question", "--field", help="What the judge compares."),
    max_tokens: int = setting_option(160, "--max-tokens", help=MAX_TOKENS_HELP + "."),
    *, jo: JudgeOptions, co: CallOptions, journal: JournalOptions, output: Path, dry_run: bool = False,
) -> None:
    """Pick the best k of n candidates per group by pairwise LLM judgments in Swiss rounds (OpenHuEval App. B.3;
    the one procedure, so --swiss, which named it, is no longer needed; still accepted)."""
    from glotbench.build import swiss as sw
    from glotbench.build.calls import Call, Session, chat, journal_path
    from glotbench.build.provenance import add_step, drop, prompt_sha256
    from glotbench.errors import GlotbenchError

    items = _items(one_input("select", source, input))
    groups: dict[str, list[dict]] = {}
    for it in items:
        groups.setdefault(str(it.get(group_field, "")) if group_field else "", []).append(it)
    pairwise = batch == 2 and pick == 1 and eliminate == 0
    if not pairwise and not (2 <= batch and 1 <= pick < batch and 0 <= eliminate < 1):
        raise GlotbenchError(f"build select: need 2 <= batch, 1 <= pick < batch, 0 <= eliminate < 1 "
                             f"(got {batch}, {pick}, {eliminate})")
    if dry_run:
        if pairwise:
            n_calls = sum((len(g) // 2) * (rounds if rounds is not None else sw.rounds_for(len(g))) for g in groups.values() if len(g) > k)
            print(f"select --swiss --dry-run: items {len(items)} · groups {len(groups)} · k {k} · pairwise calls at most {n_calls}")
        else:
            first = sum(-(-len(g) // batch) for g in groups.values() if len(g) > k)
            print(f"select --swiss --dry-run: items {len(items)} · groups {len(groups)} · k {k} · batches of {batch}, "
                  f"pick {pick}, eliminate {eliminate} · round 1 calls at most {first} (later rounds fewer)")
        return
    m = _model(one(jo.judge, "--judge"), one(jo.judge_base_url, "--judge-base-url"), jo.judge_args, co)
    session = Session(m, journal_path(output, journal.journal), step="select", role=f"judge:{m.model_id}",
                      concurrency=calls_in_flight(co.concurrency, m), wait=journal.wait, policy=retry_policy(co))

    def judge_round(pairs):
        calls = [Call(f"{a['id']}|{b['id']}", chat(sw.judge_prompt(str(a.get(field, "")), str(b.get(field, ""))), max_tokens=max_tokens))
                 for a, b in pairs]
        replies = session.run(calls)
        return [sw.parse_better(replies.get(c.item, "")) for c in calls]

    def judge_batches(batches):
        calls = [Call("|".join(str(it["id"]) for it in b),
                      chat(sw.batch_prompt([str(it.get(field, "")) for it in b], pick), max_tokens=max_tokens)) for b in batches]
        replies = session.run(calls)
        return [sw.parse_best(replies.get(c.item, ""), len(b), pick) for c, b in zip(calls, batches)]

    kept, dropped = [], []
    try:
        for name, group in groups.items():
            if pairwise:
                sel, rest = sw.swiss(group, k, judge_round, rounds=rounds)
            else:
                sel, rest = sw.swiss_batches(group, k, judge_batches, batch=batch, pick=pick, eliminate=eliminate,
                                             max_rounds=rounds or 50)
            for it in sel + rest:
                add_step(it, "select_swiss", source=it.get("passage_id"), model=m.model_id,
                         prompt_sha256=prompt_sha256(sw.PROMPT if pairwise else sw.BATCH_PROMPT), group=name, k=k,
                         batch=batch, pick=pick, eliminate=eliminate)
            kept += sel
            dropped += [drop(it, "select_swiss", f"rank {it['swiss']['rank']} of {len(group)} in group {name!r} (k {k})") for it in rest]
    finally:
        session.close()
    _write("select --swiss", output, kept, dropped, f" · {session.report.line()}")


@build_app.command("checklist")
@options((Flags, "dry_run"), (RunSettings, "output!"), **JUDGE_STEP, about={"output": OUT_HELP})
def checklist_cmd(
    source: Optional[Path] = items_argument("Question items (with id)."),
    input: Optional[Path] = hidden_input(),
    n: int = setting_option(5, "--n", help="Checklist items asked of each judge (the paper: 3-5 per model)."),
    min_items: int = setting_option(8, "--min-items", help="Drop questions with fewer readable items after merging (the paper keeps >= 8)."),
    max_items: int = setting_option(10, "--max-items", help="Keep at most this many after merging (the paper: 6-10)."),
    primary_tag: str = setting_option("built", "--primary-tag", help="HuWildBench primary_tag for items without one."),
    max_tokens: int = setting_option(300, "--max-tokens", help=MAX_TOKENS_HELP + "."),
    language: Optional[str] = setting_option(None, "--language", "-l", help="The checklist's language " + ITEMS_LANGUAGE),
    *, jo: JudgeOptions, co: CallOptions, journal: JournalOptions, output: Path, dry_run: bool = False,
) -> None:
    """A per-question checklist in the task's language, as HuWildBench records (the checklist judge's format).

    Several judges (repeat --judge; the paper: GPT-4o and Claude-3.5) each write a list, merged in order."""
    from glotbench.build import checklist as ck
    from glotbench.build.provenance import add_step, drop
    from glotbench.errors import GlotbenchError

    judge, urls = several(jo.judge), several(jo.judge_base_url)
    if len(urls) not in (0, 1, len(judge)):
        raise GlotbenchError(f"build checklist: {len(urls)} --judge-base-url for {len(judge)} --judge (give one, or one per judge)")
    urls = urls * len(judge) if len(urls) == 1 else (urls or [None] * len(judge))
    items = _items(one_input("checklist", source, input))
    lang = language or next((it.get("language") for it in items if it.get("language")), None) or "en"
    calls = ck.checklist_calls(items, lang, n=n, max_tokens=max_tokens)
    sent = [judge_step("checklist", calls, spec, url, jo.judge_args, co, journal, output, dry_run, f"items {len(items)}")
            for spec, url in zip(judge, urls)]
    if dry_run:
        return
    per_judge, ids, lines_ = [], [], []
    for m, replies, rep in sent:
        per_judge.append((m.model_id, replies, rep))
        ids.append(m.model_id)
        lines_.append(rep.line())
    kept, dropped = [], []
    for it, c in zip(items, calls):
        lists = [ck.parse_checklist(replies.get(c.item, ""), max_items) for _, replies, _ in per_judge]
        merged = ck.parse_checklist("\n".join(f"- {x}" for lst in lists for x in lst), max_items)
        rec = ck.wildbench_record(it, merged, primary_tag)
        add_step(rec, "checklist", source=it.get("passage_id"), model=", ".join(ids), prompt_sha256=c.prompt_sha256,
                 per_judge=[len(x) for x in lists])
        failed = [f"{mid}: {rep.errors.get(c.item, '?')}" for mid, replies, rep in per_judge if c.item not in replies]
        if failed:
            dropped.append(drop(rec, "checklist", "judge call failed: " + "; ".join(failed)))
        elif len(merged) < min_items:
            dropped.append(drop(rec, "checklist", f"{len(merged)} checklist item(s), fewer than {min_items}"))
        else:
            kept.append(rec)
    _write("checklist", output, kept, dropped, " · " + " · ".join(lines_))


@build_app.command("task")
@options((RunSettings, "output!"), (Flags, "name!"),
         about={"name": "the task's name in task.yaml.",
                "output": "Folder for task.yaml and data.jsonl."})
def task_cmd(
    source: Optional[Path] = items_argument("The final QA items."),
    input: Optional[Path] = hidden_input(),
    grader: Optional[str] = setting_option(None, "--grader", help="Grader prompt name (default: the judged-task template's grader for the language)."),
    max_tokens: int = setting_option(256, "--max-tokens", help="The written task's output token limit."),
    language: Optional[str] = setting_option(None, "--language", "-l", help="The task's language " + ITEMS_LANGUAGE),
    *, output: Path, name: str,
) -> None:
    """Write a SimpleQA-style task YAML that `glotbench run --judge MODEL` grades."""
    from glotbench.build.taskfile import judged_task
    from glotbench.errors import GlotbenchError

    input = one_input("task", source, input)
    items = _items(input)
    for n, it in enumerate(items, 1):
        for f in ("question", "answer"):
            if not isinstance(it.get(f), (str, int, float)) or not str(it[f]).strip():
                raise GlotbenchError(f"{input}: record {n}: field {f!r} missing or empty")
    lang = language or next((it.get("language") for it in items if it.get("language")), None) or "en"
    path = judged_task(items, output, name=name, language=lang, grader=grader, max_tokens=max_tokens)
    print(f"task: {len(items)} item(s) · {path} · run it: glotbench run -t {path} --judge MODEL")
