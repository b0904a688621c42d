"""Leaderboard operations shared by the web pages, the REST API and the command line."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from glotbench.leaderboard.db import LeaderboardError
from glotbench.leaderboard.schema import APPROVED, PENDING, REJECTED, ApiToken, GoldLabel, Submission, Task, User, utcnow
from glotbench.leaderboard.scoring import TASK_METRICS, better, gold_for, higher_is_better, score_predictions, task_ids
from glotbench.leaderboard.security import hash_password, new_api_token, token_hash, verify_password
from glotbench.leaderboard.submission_format import validate_submission

USERNAME_RE = re.compile(r"^[A-Za-z0-9_.\-]{3,64}$")
TASK_NAME_RE = re.compile(r"^[A-Za-z0-9_.\-]{1,128}$")
MIN_PASSWORD = 8
MAX_MODEL_NAME = 255


class InputError(LeaderboardError):
    """Bad user input; ``key`` names the translated message shown on pages."""

    def __init__(self, key: str, message: str):
        super().__init__(message)
        self.key = key


# ---- accounts ---------------------------------------------------------------------------------

def create_user(db: Session, username: str, password: str, team: str = "", is_admin: bool = False) -> User:
    username = username.strip()
    if not USERNAME_RE.match(username):
        raise InputError("err_username", f"username {username!r} must be 3-64 letters, digits, '.', '_' or '-'")
    if len(password) < MIN_PASSWORD:
        raise InputError("err_password", f"password for {username!r} must be at least {MIN_PASSWORD} characters")
    if db.scalar(select(User).where(User.username == username)) is not None:
        raise InputError("err_user_exists", f"user {username!r} already exists")
    user = User(username=username, team=team.strip()[:128], password_hash=hash_password(password), is_admin=is_admin)
    db.add(user)
    db.commit()
    return user


def authenticate(db: Session, username: str, password: str) -> User | None:
    user = db.scalar(select(User).where(User.username == username.strip()))
    if user is None or not verify_password(user.password_hash, password):
        return None
    return user


def get_user(db: Session, username: str) -> User:
    user = db.scalar(select(User).where(User.username == username))
    if user is None:
        raise LeaderboardError(f"no user named {username!r}")
    return user


def create_token(db: Session, user: User, name: str = "") -> str:
    token, digest = new_api_token()
    db.add(ApiToken(user_id=user.id, token_hash=digest, name=name.strip()[:128]))
    db.commit()
    return token


def user_for_token(db: Session, token: str) -> User | None:
    row = db.scalar(select(ApiToken).where(ApiToken.token_hash == token_hash(token)))
    return row.user if row else None


def tokens_of(db: Session, user: User) -> list[ApiToken]:
    return list(db.scalars(select(ApiToken).where(ApiToken.user_id == user.id).order_by(ApiToken.id)))


def delete_token(db: Session, user: User, token_id: int) -> None:
    db.execute(delete(ApiToken).where(ApiToken.id == token_id, ApiToken.user_id == user.id))
    db.commit()


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


def parse_gold(raw: bytes, source: str, id_field: str = "id", label_field: str = "label") -> dict[str, str]:
    try:
        doc = json.loads(raw.decode("utf-8-sig"))
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise LeaderboardError(f"{source}: gold file is not valid UTF-8 JSON ({err})") from None
    records = doc.get("predictions") if isinstance(doc, dict) else doc
    if not isinstance(records, list) or not records:
        raise LeaderboardError(f"{source}: gold file must be a non-empty JSON list of records")
    gold: dict[str, str] = {}
    for n, rec in enumerate(records):
        if not isinstance(rec, dict):
            raise LeaderboardError(f"{source}: record {n} is not an object")
        for fld in (id_field, label_field):
            if rec.get(fld) is None or isinstance(rec.get(fld), (dict, list)):
                raise LeaderboardError(f"{source}: record {n} has no {fld!r} field")
        item_id = str(rec[id_field])
        if item_id in gold:
            raise LeaderboardError(f"{source}: record {n}: duplicate {id_field} {item_id!r}")
        gold[item_id] = str(rec[label_field])
    return gold


def add_task(db: Session, name: str, gold: dict[str, str], metric: str, labels: list[str] | None = None,
             title: str = "", replace: bool = False) -> Task:
    if not TASK_NAME_RE.match(name):
        raise InputError("err_task_name", f"task name {name!r} must be letters, digits, '.', '_' or '-'")
    if metric not in TASK_METRICS:
        raise InputError("err_metric", f"task {name!r}: metric {metric!r} is not one of {', '.join(TASK_METRICS)}")
    if not gold:
        raise InputError("err_gold_empty", f"task {name!r}: the gold file has no items")
    label_set = sorted(set(labels) if labels else set(gold.values()))
    outside = sorted(set(gold.values()) - set(label_set))
    if outside:
        raise InputError("err_gold_labels", f"task {name!r}: gold labels {outside} are not in the label set {label_set}")
    task = db.scalar(select(Task).where(Task.name == name))
    if task is not None and not replace:
        raise InputError("err_task_exists", f"task {name!r} already exists (use --replace to change its gold labels)")
    if task is None:
        task = Task(name=name)
        db.add(task)
    task.title, task.metric, task.labels, task.n_items = title or name, metric, label_set, len(gold)
    db.flush()
    db.execute(delete(GoldLabel).where(GoldLabel.task_id == task.id))
    db.add_all(GoldLabel(task_id=task.id, item_id=i, label=l) for i, l in gold.items())
    db.commit()
    return task


def list_tasks(db: Session) -> list[Task]:
    return list(db.scalars(select(Task).order_by(Task.name)))


def get_task(db: Session, name: str) -> Task | None:
    return db.scalar(select(Task).where(Task.name == name))


# ---- submissions ------------------------------------------------------------------------------

def submit(db: Session, user: User, task_name: str | None, raw: bytes, model: str | None, max_bytes: int) -> tuple[Submission | None, list[str]]:
    """Validate, score and store an upload. Returns ``(submission, [])`` or ``(None, problems)``;
    an invalid upload stores nothing."""
    task = get_task(db, task_name) if task_name else None
    if task is None and not task_name and len(raw) <= max_bytes:
        try:  # the task may be named inside the file
            doc = json.loads(raw.decode("utf-8-sig"))
            task_name = doc.get("task") if isinstance(doc, dict) and isinstance(doc.get("task"), str) else None
            task = get_task(db, task_name) if task_name else None
        except (ValueError, UnicodeDecodeError):
            pass
    if task is None:
        if task_name:
            return None, [f"Unknown task {task_name!r}; known tasks: {', '.join(t.name for t in list_tasks(db)) or 'none'}."]
        # still report what is wrong with the file itself
        _, problems = validate_submission(raw, set(), set(), max_bytes)
        return None, ["No task given: choose a task or put \"task\" in the file."] + [p for p in problems if "unknown id" not in p and "label set" not in p]
    parsed, problems = validate_submission(raw, task_ids(db, task), set(task.labels), max_bytes, expected_task=task.name)
    model = (model or "").strip() or (parsed.model.strip() if parsed and parsed.model else "")
    if not model:
        problems.append("No model name given: fill in the model field or put \"model\" in the file.")
    elif len(model) > MAX_MODEL_NAME:
        problems.append(f"The model name is too long ({len(model)} characters; the limit is {MAX_MODEL_NAME}).")
    if problems or parsed is None:
        return None, problems
    score = score_predictions(gold_for(db, task), parsed.predictions, task.metric)
    sub = Submission(user_id=user.id, task_id=task.id, model_name=model, team=user.team, score=score,
                     n_items=len(parsed.predictions), status=PENDING, predictions=parsed.predictions)
    db.add(sub)
    db.commit()
    return sub, []


def visible_submission(db: Session, user: User | None, sub_id: int) -> Submission | None:
    """The submission if ``user`` may see its private details (owner or administrator)."""
    sub = db.get(Submission, sub_id)
    if sub is None or user is None or not (user.is_admin or sub.user_id == user.id):
        return None
    return sub


def submissions_of(db: Session, user: User) -> list[Submission]:
    return list(db.scalars(select(Submission).where(Submission.user_id == user.id).order_by(Submission.id.desc())))


def all_submissions(db: Session, status: str | None = None) -> list[Submission]:
    q = select(Submission).order_by(Submission.id.desc())
    if status:
        q = q.where(Submission.status == status)
    return list(db.scalars(q))


def review(db: Session, admin: User, sub_id: int, status: str) -> Submission:
    if not admin.is_admin:
        raise InputError("err_not_admin", "only administrators can approve or reject results")
    if status not in (APPROVED, REJECTED, PENDING):
        raise InputError("err_status", f"status {status!r} is not one of approved, rejected, pending")
    sub = db.get(Submission, sub_id)
    if sub is None:
        raise InputError("err_no_submission", f"no submission {sub_id}")
    sub.status, sub.reviewed_at, sub.reviewed_by = status, utcnow(), admin.id
    db.commit()
    return sub


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


def approved(db: Session, task: Task | None = None) -> list[Submission]:
    q = select(Submission).where(Submission.status == APPROVED)
    if task is not None:
        q = q.where(Submission.task_id == task.id)
    return list(db.scalars(q.order_by(Submission.created_at, Submission.id)))


def task_board(db: Session, task: Task) -> list[Row]:
    rows = [Row(s.model_name, s.team, s.user.username, s.score, s.created_at, 1, s.id) for s in approved(db, task)]
    sign = -1 if higher_is_better(task.metric) else 1  # the metric's declared direction
    return sorted(rows, key=lambda r: (sign * r.score, r.date))


def overall_board(db: Session) -> list[Row]:
    """Per (model, submitter): best approved score per task, then the mean over the tasks the model
    has approved results for."""
    best: dict[tuple[str, int], dict[int, Submission]] = {}
    for s in approved(db):
        per_task = best.setdefault((s.model_name, s.user_id), {})
        if s.task_id not in per_task or better(s.task.metric, s.score, per_task[s.task_id].score):
            per_task[s.task_id] = s
    rows = []
    for (model, _uid), per_task in best.items():
        subs = list(per_task.values())
        rows.append(Row(model, subs[0].team, subs[0].user.username, sum(x.score for x in subs) / len(subs),
                        max(x.created_at for x in subs), len(subs)))
    return sorted(rows, key=lambda r: (-r.score, r.date))
