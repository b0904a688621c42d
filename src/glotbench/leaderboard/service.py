"""Leaderboard operations shared by the web pages, the REST API and the command line: tasks,
submissions (with limits and idempotency), review, rescoring and the public views."""

from __future__ import annotations

import hashlib
import json
import math
import re
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from urllib.parse import urlparse

from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from glotbench.errors import GlotbenchError
from glotbench.leaderboard.accounts import (  # noqa: F401 - re-exported: the CLI and pages use service.*
    InputError,
    authenticate,
    change_password,
    check_text,
    create_token,
    create_user,
    delete_token,
    end_session,
    get_user,
    session_user,
    start_session,
    tokens_of,
    user_for_token,
)
from glotbench.leaderboard import quotas
from glotbench.leaderboard.config import Settings
from glotbench.leaderboard.db import LeaderboardError
from glotbench.leaderboard.names import shown
from glotbench.leaderboard.registration import on_hold
from glotbench.leaderboard.safe_json import JSONLimitError, loads
from glotbench.leaderboard.schema import APPROVED, PENDING, REJECTED, GoldLabel, Submission, Task, TaskFile, User, utcnow
from glotbench.leaderboard.scoring import (
    TaskMetric,
    better,
    gold_for,
    higher_is_better,
    leaderboard_metrics,
    score_interval,
    score_predictions,
    task_ids,
    task_metric,
)
from glotbench.leaderboard.submission_format import task_named_in, validate_submission
from glotbench.scoring.metrics import METRICS

TASK_NAME_RE = re.compile(r"^[A-Za-z0-9_.\-]{1,128}$")
MAX_MODEL_NAME = 255
SPLITS = ("train", "dev", "test")
META_FIELDS = ("model_size", "paper_url", "code_url", "description")


class LimitReached(InputError):
    """The per-user, per-task submission limit is used up (HTTP 429)."""


# ---- tasks ------------------------------------------------------------------------------------

def load_gold_file(path: str | Path, id_field: str = "id", label_field: str = "label") -> dict[str, str]:
    """Gold labels from a JSON file: a list of records (the HuLU files), or a submission-format
    document. Read as ``utf-8-sig`` (the HuCommitmentBank files start with a BOM)."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as err:
        raise LeaderboardError(f"{path}: cannot read gold file ({err.strerror})") from None
    return parse_gold(raw, str(path), id_field, label_field)


def _records(raw: bytes, source: str) -> list:
    """The records of a gold/reference or corpus file: a JSON list, a submission-format document, or
    JSON Lines (one object per line)."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise LeaderboardError(f"{source}: file is not UTF-8 text (bad byte at position {err.start})") from None
    try:
        doc = loads(text, max_depth=16)
    except JSONLimitError as err:
        raise LeaderboardError(f"{source}: {err}") from None
    except json.JSONDecodeError as err:
        if err.msg != "Extra data":
            raise LeaderboardError(f"{source}: not valid JSON ({err.msg} at line {err.lineno}, column {err.colno})") from None
        doc = _json_lines(text, source)
    records = doc.get("predictions") if isinstance(doc, dict) else doc
    if isinstance(doc, dict) and records is None:
        records = [doc]  # JSON Lines of one line
    if not isinstance(records, list) or not records:
        raise LeaderboardError(f"{source}: file must be a non-empty JSON list of records (or JSON Lines)")
    return records


def _is_json_lines(raw: bytes) -> bool:
    try:
        json.loads(raw.decode("utf-8-sig"))
    except json.JSONDecodeError as err:
        return err.msg == "Extra data"
    except (ValueError, UnicodeDecodeError):
        return False
    return False


def _json_lines(text: str, source: str) -> list:
    out = []
    for n, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                out.append(loads(line, max_depth=16))
            except JSONLimitError as err:
                raise LeaderboardError(f"{source}: line {n}: {err}") from None
            except json.JSONDecodeError as err:
                raise LeaderboardError(f"{source}: line {n} is not valid JSON ({err.msg} at column {err.colno})") from None
    return out


def parse_gold(raw: bytes, source: str, id_field: str = "id", label_field: str = "label") -> dict[str, str]:
    """Item id -> gold label or reference text (a string; a number is read as its text)."""
    gold: dict[str, str] = {}
    for n, rec in enumerate(_records(raw, source)):
        if not isinstance(rec, dict):
            raise LeaderboardError(f"{source}: record {n} is not an object")
        for fld in (id_field, label_field):
            value = rec.get(fld)
            if value is None:
                raise LeaderboardError(f"{source}: record {n} has no {fld!r} field")
            if isinstance(value, (dict, list, bool)) or (isinstance(value, float) and not math.isfinite(value)):
                kind = {dict: "an object", list: "a list", bool: "true/false"}.get(type(value), "not a finite number")
                raise LeaderboardError(f"{source}: record {n}: field {fld!r} must be a string or a number, not {kind} "
                                       f"(one reference per item)")
        item_id = str(rec[id_field])
        if item_id in gold:
            raise LeaderboardError(f"{source}: record {n}: duplicate {id_field} {item_id!r}")
        value = rec[label_field]
        gold[item_id] = repr(value) if isinstance(value, float) else str(value)
    return gold


def add_task(db: Session, name: str, gold: dict[str, str], metric: str, labels: list[str] | None = None,
             title: str = "", replace: bool = False, public_share: float | None = None) -> Task:
    if not TASK_NAME_RE.match(name):
        raise InputError("err_task_name", f"task name {shown(name)} must be letters, digits, '.', '_' or '-'")
    metric = metric_name(metric)  # `chrF` as the pages spell it: the registered `chrf`
    tm = _task_metric(name, metric)
    if not gold:
        raise InputError("err_gold_empty", f"task {name!r}: the gold file has no items")
    if public_share is not None and not 0 < public_share < 1:
        raise InputError("err_public_share", f"task {name!r}: the public share must be between 0 and 1 (got {public_share})")
    if tm.labelled or labels:  # a classification task: a public label set the predictions must come from
        label_set = sorted(set(labels) if labels else set(gold.values()))
        outside = sorted(set(gold.values()) - set(label_set))
        if outside:
            raise InputError("err_gold_labels", f"task {name!r}: gold labels {outside} are not in the label set {label_set}")
    else:  # free-text predictions (exact match, numbers, BLEU, chrF...): no label set
        label_set = []
    perfect = score_predictions(gold, gold, metric)
    if math.isnan(perfect):
        raise InputError("err_metric", f"task {name!r}: metric {metric!r} gives no value on these references "
                                       f"(scored against themselves); check the reference field")
    task = db.scalar(select(Task).where(Task.name == name))
    if task is not None and not replace:
        raise InputError("err_task_exists", f"task {name!r} already exists (use --replace to change its gold labels)")
    if task is None:
        task = Task(name=name, gold_version=0)
        db.add(task)
    task.title, task.metric, task.labels, task.n_items = title or task.title or name, metric, label_set, len(gold)
    if public_share is not None or task.public_share is None:
        task.public_share = public_share
    task.gold_version = (task.gold_version or 0) + 1
    db.flush()
    db.execute(delete(GoldLabel).where(GoldLabel.task_id == task.id))
    db.add_all(GoldLabel(task_id=task.id, item_id=i, label=l) for i, l in gold.items())
    rescore_task(db, task, gold)
    db.commit()
    return task


def metric_name(metric: str) -> str:
    """The registered spelling of ``metric``, matched without regard to case (the pages write
    ``chrF``, ``BLEU``; the registry holds ``chrf``, ``bleu``); unchanged when none matches or
    the match is not unique."""
    if metric in METRICS:
        return metric
    same = [n for n in METRICS.names() if n.casefold() == metric.casefold()]
    return same[0] if len(same) == 1 else metric


def _task_metric(name: str, metric: str) -> TaskMetric:
    """The registered metric ``metric`` with its scorer, or InputError in one line."""
    if metric not in METRICS:
        raise InputError("err_metric", f"task {name!r}: {metric!r} is not a registered metric; the leaderboard "
                                       f"takes {', '.join(leaderboard_metrics())}")
    try:
        return task_metric(metric)
    except GlotbenchError as err:
        raise InputError("err_metric", f"task {name!r}: {err}") from None


def rescore_task(db: Session, task: Task, gold: dict[str, str]) -> int:
    """Score every stored submission of ``task`` again against ``gold`` (called when gold changes);
    a prediction for an item the new gold lacks is ignored, a missing one counts as wrong."""
    subs = list(db.scalars(select(Submission).where(Submission.task_id == task.id)))
    for s in subs:
        _set_scores(s, task, gold, s.predictions)
        if s.status == APPROVED:
            s.ci_low, s.ci_high = score_interval(gold, s.predictions, task.metric)
        else:
            s.ci_low = s.ci_high = None
        s.gold_version = task.gold_version
    return len(subs)


def public_ids(task: Task, ids) -> set[str]:
    """The items of the public share: a fixed pseudo-random ``public_share`` of the ids."""
    if not task.public_share:
        return set(ids)
    cut = int(task.public_share * 2**32)
    return {i for i in ids if int.from_bytes(hashlib.sha256(f"{task.name}\0{i}".encode()).digest()[:4], "big") < cut}


def _set_scores(s: Submission, task: Task, gold: dict[str, str], predictions: dict[str, str]) -> None:
    s.score = score_predictions(gold, predictions, task.metric)
    if task.public_share:
        pub = public_ids(task, gold)
        s.public_score = score_predictions({i: g for i, g in gold.items() if i in pub}, predictions, task.metric)
    else:
        s.public_score = None


def set_task_text(db: Session, task: Task, description_en: str, description_hu: str, title: str | None = None) -> None:
    check_text("description", description_en, allow_newlines=True)
    check_text("description", description_hu, allow_newlines=True)
    task.description_en, task.description_hu = description_en, description_hu
    if title:
        check_text("title", title)
        task.title = title.strip()[:255]
    db.commit()


def add_task_file(db: Session, task: Task, split: str, filename: str, raw: bytes, label_field: str = "label") -> TaskFile:
    """Store a corpus file for download; for ``test`` the label (or reference) field is removed from
    every record. A JSON Lines upload is stored as a JSON list (the download is ``<task>_<split>.json``)."""
    if split not in SPLITS:
        raise InputError("err_split", f"split {shown(split)} is not one of {', '.join(SPLITS)}")
    records = _records(raw, filename)
    if split == "test":
        records = [{k: v for k, v in r.items() if k != label_field} if isinstance(r, dict) else r for r in records]
    if split == "test" or _is_json_lines(raw):
        raw = json.dumps(records, ensure_ascii=False, indent=1).encode()
    row = db.scalar(select(TaskFile).where(TaskFile.task_id == task.id, TaskFile.split == split))
    if row is None:
        row = TaskFile(task_id=task.id, split=split)
        db.add(row)
    row.filename = f"{task.name}_{split}.json"  # one name pattern for every task, whatever the upload was called
    row.content, row.n_records = raw, len(records)
    db.commit()
    return row


def task_files(db: Session, task: Task) -> list[TaskFile]:
    rows = db.scalars(select(TaskFile).where(TaskFile.task_id == task.id)).all()
    return sorted(rows, key=lambda r: SPLITS.index(r.split))


def task_file(db: Session, task: Task, split: str) -> TaskFile | None:
    return db.scalar(select(TaskFile).where(TaskFile.task_id == task.id, TaskFile.split == split))


def list_tasks(db: Session) -> list[Task]:
    return list(db.scalars(select(Task).order_by(Task.name)))


def get_task(db: Session, name: str) -> Task | None:
    return db.scalar(select(Task).where(Task.name == name))


# ---- submissions ------------------------------------------------------------------------------

@dataclass
class Upload:
    """What a client sent besides the file: form fields or query parameters."""
    task: str | None = None
    model: str = ""
    meta: dict[str, str] = field(default_factory=dict)
    idempotency_key: str | None = None
    address: str | None = None  # the client's network address (per-address limits)


def take_upload_slot(db: Session, user: User, task: Task | None, settings: Settings, address: str | None = None) -> None:
    """Use one upload of ``user`` on ``task`` (``None``: an upload naming no known task) or raise
    :class:`LimitReached`. Enforced by the database (:mod:`glotbench.leaderboard.quotas`): one
    numbered slot per (user, task, UTC day, n), plus one per (address, task, day, n) when the
    address is known, so accounts sharing an address share an allowance. Called before the file is
    parsed: a rejected upload counts against the limit too."""
    today, what = quotas.day(), (f"task:{task.id}" if task is not None else "task:?")
    name = repr(task.name) if task is not None else "uploads naming no known task"
    if settings.max_per_month and quotas.used(db, f"user:{user.id}:{what}", quotas.last_days(30)) >= settings.max_per_month:
        raise LimitReached("err_limit", f"Submission limit reached: {settings.max_per_month} per 30 days for task {name}; "
                                        f"try again later (the limit keeps hidden labels from being probed).")
    if not quotas.take(db, f"user:{user.id}:{what}", today, settings.max_per_day):
        raise LimitReached("err_limit", f"Submission limit reached: {settings.max_per_day} per day for task {name}; "
                                        f"try again later (the limit keeps hidden labels from being probed).")
    per_address = settings.address_limit()
    if address and not quotas.take(db, f"addr:{address}:{what}", today, per_address):
        raise LimitReached("err_limit", f"Submission limit reached: {per_address} per day for task {name} from one "
                                        f"network address, whichever account sends them; try again tomorrow.")


def count_refused_upload(db: Session, user: User, task_name: str | None, settings: Settings,
                         address: str | None = None) -> str | None:
    """An upload refused before it could be parsed (too large, too slow) uses a slot too; returns the
    limit's sentence when none was left (the caller answers 429 then)."""
    task = get_task(db, task_name) if task_name else None
    try:
        take_upload_slot(db, user, task, settings, address)
    except LimitReached as err:
        return str(err)
    return None


def _metadata(up: Upload, extra: dict) -> tuple[dict[str, str], list[str]]:
    meta, problems = {}, []
    for k in META_FIELDS:
        v = up.meta.get(k) or extra.get(k) or ""
        meta[k] = v.strip() if isinstance(v, str) else ""
    if not meta["model_size"]:
        problems.append("No model size given: fill in the size field (e.g. '135M parameters') or put \"model_size\" in the file.")
    if not meta["description"]:
        problems.append("No description given: say in a sentence or two what the model is and how it was run.")
    if not (meta["paper_url"] or meta["code_url"]):
        problems.append("No paper or code URL given: link the paper, the code or the model card.")
    for k in ("paper_url", "code_url"):
        u = meta[k]
        if u and (urlparse(u).scheme not in ("http", "https") or not urlparse(u).netloc or len(u) > 512):
            problems.append(f"The {k.replace('_', ' ')} must be an http(s) address of at most 512 characters.")
    if len(meta["model_size"]) > 64:
        problems.append("The model size is too long (at most 64 characters).")
    if len(meta["description"]) > 4000:
        problems.append("The description is too long (at most 4,000 characters).")
    for k, v in meta.items():
        try:
            check_text(k.replace("_", " "), v, allow_newlines=(k == "description"))
        except InputError as err:
            problems.append(str(err).capitalize() + ".")
    return meta, problems


def _n_fallback(extra: dict, n_items: int) -> tuple[int | None, list[str]]:
    """``glotbench.n_fallback`` of the file's metadata: absent (None) or a whole number from 0 to
    the number of predictions; anything else (10**30, -3, "7", 2.5) is a problem, not stored."""
    info = extra.get("glotbench")
    if not isinstance(info, dict) or info.get("n_fallback") is None:
        return None, []
    v = info["n_fallback"]
    if isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= n_items:
        return v, []
    shown = repr(v) if len(repr(v)) <= 40 else repr(v)[:37] + "..."
    return None, [f'"glotbench": {{"n_fallback": ...}} must be a whole number from 0 to {n_items:,} (the number of '
                  f"predictions); got {shown}."]


def submit(db: Session, user: User, up: Upload, raw: bytes, settings: Settings) -> tuple[Submission | None, list[str], int]:
    """Validate, score and store an upload: ``(submission, [], 201 or 200)`` (200: the same
    idempotency key was seen before, the first submission is returned) or ``(None, problems, status)``;
    an invalid upload stores nothing."""
    deadline = time.monotonic() + settings.parse_budget_s
    if on_hold(db, user):
        return None, ["Your account awaits an administrator's approval; uploads open once it is approved."], 403
    if up.idempotency_key:
        if len(up.idempotency_key) > 128 or check_text_ok(up.idempotency_key) is False:
            return None, ["The idempotency key must be at most 128 printable characters."], 422
        old = db.scalar(select(Submission).where(Submission.user_id == user.id, Submission.idempotency_key == up.idempotency_key))
        if old is not None:
            return old, [], 200
    max_bytes = settings.max_upload_bytes
    task_name = up.task
    task = get_task(db, task_name) if task_name else None
    if task is None and not task_name and len(raw) <= max_bytes:
        # the task may be named inside the file
        task_name = task_named_in(raw, settings.max_json_depth, settings.max_int_digits, deadline=deadline)
        task = get_task(db, task_name) if task_name else None
    try:
        take_upload_slot(db, user, task, settings, up.address)
    except LimitReached as err:
        return None, [str(err)], 429
    if task is None:
        if task_name:
            return None, [f"Unknown task {shown(task_name)}; known tasks: {', '.join(t.name for t in list_tasks(db)) or 'none'}."], 422
        _, problems = validate_submission(raw, set(), set(), max_bytes, max_depth=settings.max_json_depth,
                                          max_int_digits=settings.max_int_digits, deadline=deadline)
        return None, ["No task given: choose a task or put \"task\" in the file."] + [p for p in problems if "unknown id" not in p and "label set" not in p], 422
    parsed, problems = validate_submission(raw, task_ids(db, task), set(task.labels) if task.labels else None, max_bytes, expected_task=task.name,
                                           max_depth=settings.max_json_depth, max_int_digits=settings.max_int_digits,
                                           deadline=deadline)
    if problems and "too large" in problems[0]:
        return None, problems, 413
    model = (up.model or "").strip() or (parsed.model.strip() if parsed and parsed.model else "")
    if not model:
        if parsed is not None:  # a file with problems may name its model; it is asked for once the file is right
            problems.append("No model name given: fill in the model field or put \"model\" in the file.")
    elif len(model) > MAX_MODEL_NAME:
        problems.append(f"The model name is too long ({len(model)} characters; the limit is {MAX_MODEL_NAME}).")
    else:
        try:
            check_text("The model name", model)
        except InputError as err:
            problems.append(str(err) + ".")
    meta, meta_problems = _metadata(up, parsed.extra if parsed else {})
    n_fallback = None
    if parsed is not None:  # metadata is asked for once the file itself is right
        problems += meta_problems
        n_fallback, fallback_problem = _n_fallback(parsed.extra, len(parsed.predictions))
        problems += fallback_problem
    if problems or parsed is None:
        return None, problems, 422
    sub = Submission(user_id=user.id, task_id=task.id, model_name=model, team=user.team, n_items=len(parsed.predictions),
                     status=PENDING, predictions=parsed.predictions, idempotency_key=up.idempotency_key,
                     n_fallback=n_fallback, gold_version=task.gold_version, **meta)
    _set_scores(sub, task, gold_for(db, task), parsed.predictions)
    db.add(sub)
    try:
        db.commit()
    except IntegrityError:  # the same idempotency key in a parallel request: return that one
        db.rollback()
        old = db.scalar(select(Submission).where(Submission.user_id == user.id, Submission.idempotency_key == up.idempotency_key))
        if old is None:
            raise
        return old, [], 200
    return db.get(Submission, sub.id), [], 201


def check_text_ok(text: str) -> bool:
    try:
        check_text("key", text)
        return True
    except InputError:
        return False


def visible_submission(db: Session, user: User | None, sub_id: int) -> Submission | None:
    """The submission if ``user`` may see its private details (owner or administrator)."""
    sub = db.get(Submission, sub_id)
    if sub is None or user is None or not (user.is_admin or sub.user_id == user.id):
        return None
    return sub


def submissions_of(db: Session, user: User) -> list[Submission]:
    return list(db.scalars(select(Submission).where(Submission.user_id == user.id).order_by(Submission.id.desc())))


def all_submissions(db: Session, status: str | None = None, limit: int = 500) -> list[Submission]:
    q = select(Submission).order_by(Submission.id.desc()).limit(limit)
    if status:
        q = q.where(Submission.status == status)
    return list(db.scalars(q))


def review(db: Session, admin: User, sub_id: int, status: str) -> Submission:
    if not admin.is_admin:
        raise InputError("err_not_admin", "only administrators can approve or reject results")
    if status not in (APPROVED, REJECTED, PENDING):
        raise InputError("err_status", f"status {shown(status)} is not one of approved, rejected, pending")
    sub = db.get(Submission, sub_id)
    if sub is None:
        raise InputError("err_no_submission", f"no submission {sub_id}")
    if status == APPROVED and sub.ci_low is None:
        sub.ci_low, sub.ci_high = score_interval(gold_for(db, sub.task), sub.predictions, sub.task.metric)
    sub.status, sub.reviewed_at, sub.reviewed_by = status, utcnow(), admin.id
    db.commit()
    return sub


def submission_frequency(db: Session) -> list[dict]:
    """Per user and task: uploads in the last day, the last 30 days and in all, most active first."""
    now = utcnow()
    rows: dict[tuple[int, int], dict] = {}
    for s in db.scalars(select(Submission)):
        r = rows.setdefault((s.user_id, s.task_id), {"user": s.user.username, "task": s.task.name, "day": 0, "month": 0,
                                                     "total": 0, "last": s.created_at})
        r["total"] += 1
        r["day"] += s.created_at > now - timedelta(days=1)
        r["month"] += s.created_at > now - timedelta(days=30)
        r["last"] = max(r["last"], s.created_at)
    return sorted(rows.values(), key=lambda r: (-r["day"], -r["month"], -r["total"], r["user"]))


# ---- public views (approved results only) -----------------------------------------------------

@dataclass
class Row:
    model: str
    team: str
    user: str
    score: float
    date: datetime
    n_tasks: int = 1
    submission_id: int | None = None
    ci_low: float | None = None
    ci_high: float | None = None


def approved(db: Session, task: Task | None = None, model: str | None = None) -> list[Submission]:
    q = select(Submission).where(Submission.status == APPROVED)
    if task is not None:
        q = q.where(Submission.task_id == task.id)
    if model is not None:
        q = q.where(Submission.model_name == model)
    return list(db.scalars(q.order_by(Submission.created_at, Submission.id)))


def task_board(db: Session, task: Task) -> list[Row]:
    rows = [Row(s.model_name, s.team, s.user.username, s.score, s.created_at, 1, s.id, s.ci_low, s.ci_high)
            for s in approved(db, task)]
    sign = -1 if higher_is_better(task.metric) else 1  # the metric's declared direction
    return sorted(rows, key=lambda r: (sign * r.score, r.date))


@dataclass
class GridRow:
    model: str
    team: str
    user: str
    cells: dict[str, Submission]  # task name -> the best approved submission
    average: float | None  # over this model's higher-is-better tasks, only (None: it has none)
    date: datetime


def grid(db: Session) -> list[GridRow]:
    """The GLUE-style board: one row per (model, submitter), one cell per task with the best approved
    score and its interval, the row average over the tasks the model has results for whose metric
    is higher-is-better (an error such as abs_error would pull a better model's average up)."""
    best: dict[tuple[str, int], dict[str, Submission]] = {}
    for s in approved(db):
        cells = best.setdefault((s.model_name, s.user_id), {})
        if s.task.name not in cells or better(s.task.metric, s.score, cells[s.task.name].score):
            cells[s.task.name] = s
    rows = []
    for (model, _uid), cells in best.items():
        subs = list(cells.values())
        up = [x.score for x in subs if higher_is_better(x.task.metric)]
        rows.append(GridRow(model, subs[0].team, subs[0].user.username, cells, sum(up) / len(up) if up else None,
                            max(x.created_at for x in subs)))
    return sorted(rows, key=lambda r: (r.average is None, -(r.average or 0.0), r.date))


def overall_board(db: Session) -> list[Row]:
    """The grid's rows as plain rows (the model's row average and how many tasks it covers)."""
    return [Row(r.model, r.team, r.user, r.average, r.date, len(r.cells)) for r in grid(db)]
