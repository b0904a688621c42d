"""The REST API, for scripts and CI jobs. Every call that touches a user's data needs
``Authorization: Bearer <token>`` (tokens are made on the API tokens page or with
``glotbench admin create-token``). Cookies are not accepted here, so no CSRF token is needed.
Public calls (tasks, boards, models, downloads, export) need nothing."""

from __future__ import annotations

import csv
import io
from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi import Path as PathParam
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, Response
from sqlalchemy.orm import Session

from glotbench.leaderboard import service
from glotbench.output.csv_safe import cell
from glotbench.leaderboard.names import shown
from glotbench.leaderboard.safe_json import JSONLimitError, loads
from glotbench.leaderboard.scoring import direction
from glotbench.leaderboard.schema import APPROVED, PENDING, REJECTED, Submission, User
from glotbench.leaderboard.uploads import FORM_OVERHEAD, TooLarge, TooSlow, file_bytes, read_body, read_form
from glotbench.leaderboard.visibility import SubmissionView, view_of, views_of
from glotbench.leaderboard.web import client_address, get_db, in_db

router = APIRouter(prefix="/api")
MAX_ID = 2**31 - 1
SubId = Annotated[int, PathParam(ge=1, le=MAX_ID, description="A submission id (a positive 32-bit integer).")]


def _bearer(request: Request) -> str | None:
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


def _unauthorized() -> HTTPException:
    return HTTPException(401, "Missing or invalid API token: send 'Authorization: Bearer <token>'.",
                         headers={"WWW-Authenticate": "Bearer"})


def token_user(request: Request, db: Session = Depends(get_db)) -> User:
    token = _bearer(request)
    user = service.user_for_token(db, token) if token else None
    if user is None:
        raise _unauthorized()
    return user


async def _token_user_no_db(request: Request) -> User:
    """For endpoints that read a body: look the token up in a worker thread and return the user
    detached, so no connection is held while the body arrives."""
    token = _bearer(request)
    user = await in_db(request, service.user_for_token, token) if token else None
    if user is None:
        raise _unauthorized()
    return user


def rounded(v: float | None, digits: int) -> float | None:
    return None if v is None else round(v, digits)


def submission_json(v: SubmissionView, digits: int) -> dict:
    """A submission as :func:`visibility.view_of` lets its viewer see it, scores rounded."""
    out = {"id": v.id, "task": v.task, "model": v.model_name, "team": v.team, "user": v.user,
           "metric": v.metric, "score": rounded(v.score, digits), "score_on": v.score_on,
           "ci95": [rounded(v.ci_low, digits), rounded(v.ci_high, digits)] if v.ci_low is not None else None,
           "n_items": v.n_items, "n_fallback": v.n_fallback, "status": v.status,
           "model_size": v.model_size, "paper_url": v.paper_url, "code_url": v.code_url, "description": v.description,
           "created_at": v.created_at.isoformat() + "Z",
           "reviewed_at": v.reviewed_at.isoformat() + "Z" if v.reviewed_at else None}
    if v.public_score is not None:
        out["public_score"] = rounded(v.public_score, digits)
    return out


def task_json(t, files=()) -> dict:
    return {"name": t.name, "title": t.title, "metric": t.metric, "direction": direction(t.metric),
            "answers": "labels" if t.labels else "text", "labels": t.labels, "n_items": t.n_items,
            "public_share": t.public_share, "description": {"en": t.description_en, "hu": t.description_hu},
            "downloads": {f.split: f"/api/tasks/{t.name}/files/{f.split}" for f in files}}


def grid_json(db: Session, digits: int) -> dict:
    tasks = [t.name for t in service.list_tasks(db)]
    rows = []
    for r in service.grid(db):
        cells = {name: {"score": rounded(s.score, digits), "ci95": [rounded(s.ci_low, digits), rounded(s.ci_high, digits)]
                        if s.ci_low is not None else None, "submission": s.id, "date": s.created_at.isoformat() + "Z"}
                 for name, s in r.cells.items()}
        rows.append({"model": r.model, "team": r.team, "user": r.user, "average": rounded(r.average, digits),
                     "n_tasks": len(r.cells), "date": r.date.isoformat() + "Z", "cells": cells})
    return {"note": "each cell: the best approved score of the model on the task with its bootstrap 95% interval; "
                    "average: the mean over the tasks the model has results for whose metric is higher-is-better", "tasks": tasks, "rows": rows}


@router.get("/tasks")
def tasks(db: Session = Depends(get_db)):
    return [task_json(t, service.task_files(db, t)) for t in service.list_tasks(db)]


@router.get("/tasks/{name}")
def task_detail(name: str, db: Session = Depends(get_db)):
    t = service.get_task(db, name)
    if t is None:
        raise HTTPException(404, f"Unknown task {shown(name)}.")
    return task_json(t, service.task_files(db, t))


@router.get("/tasks/{name}/files/{split}")
def task_download(name: str, split: str, db: Session = Depends(get_db)):
    t = service.get_task(db, name)
    f = service.task_file(db, t, split) if t is not None and split in service.SPLITS else None
    if f is None:
        raise HTTPException(404, f"No {shown(split)} file for task {shown(name)}.")
    return Response(f.content, media_type="application/json",
                    headers={"Content-Disposition": f'attachment; filename="{f.filename}"'})


@router.get("/leaderboard")
def overall(request: Request, db: Session = Depends(get_db)):
    return grid_json(db, request.app.state.settings.score_digits)


@router.get("/leaderboard/{task_name}")
def task_board(task_name: str, request: Request, db: Session = Depends(get_db)):
    task = service.get_task(db, task_name)
    if task is None:
        raise HTTPException(404, f"Unknown task {shown(task_name)}.")
    d = request.app.state.settings.score_digits
    return {"task": task.name, "metric": task.metric,
            "rows": [{"model": r.model, "team": r.team, "user": r.user, "score": rounded(r.score, d),
                      "ci95": [rounded(r.ci_low, d), rounded(r.ci_high, d)] if r.ci_low is not None else None,
                      "date": r.date.isoformat() + "Z", "submission": r.submission_id} for r in service.task_board(db, task)]}


@router.get("/models/{model}")
def model_history(model: str, request: Request, db: Session = Depends(get_db)):
    subs = service.approved(db, model=model)
    if not subs:
        raise HTTPException(404, f"No approved results for model {shown(model)}.")
    d = request.app.state.settings.score_digits
    return {"model": model, "submissions": [{k: v for k, v in submission_json(s, d).items() if k != "score_on"}
                                            for s in views_of(subs, None)]}


@router.get("/export.json")
def export_json(request: Request, db: Session = Depends(get_db)):
    return grid_json(db, request.app.state.settings.score_digits)


@router.get("/export.csv")
def export_csv(request: Request, db: Session = Depends(get_db)):
    doc = grid_json(db, request.app.state.settings.score_digits)
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["model", "team", "user", "average", "n_tasks", "date"]
               + [f"{t}{suffix}" for t in doc["tasks"] for suffix in ("", "_ci_low", "_ci_high")])
    for r in doc["rows"]:
        cells = []
        for t in doc["tasks"]:
            c = r["cells"].get(t)
            cells += [c["score"], *(c["ci95"] or ["", ""])] if c else ["", "", ""]
        w.writerow([cell(x) for x in [r["model"], r["team"], r["user"], r["average"], r["n_tasks"], r["date"]] + cells])
    return Response(buf.getvalue(), media_type="text/csv; charset=utf-8",
                    headers={"Content-Disposition": 'attachment; filename="glotbench-leaderboard.csv"'})


@router.post("/submissions", status_code=201)
async def create_submission(request: Request):
    """Either a JSON body that is the submission file itself (``?task=``, ``?model=``, ``?model_size=``,
    ``?paper_url=``, ``?code_url=``, ``?description=`` may fill in fields the file lacks), or
    multipart/form-data with ``file`` and those fields. An ``Idempotency-Key`` header makes a retry
    return the first submission (200) instead of storing a second one."""
    user = await _token_user_no_db(request)
    settings = request.app.state.settings
    limit = settings.max_upload_bytes
    q = request.query_params
    up = service.Upload(task=q.get("task") or None, model=q.get("model") or "",
                        meta={k: q.get(k) or "" for k in service.META_FIELDS},
                        idempotency_key=request.headers.get("idempotency-key") or None, address=client_address(request))
    try:
        if request.headers.get("content-type", "").startswith("multipart/form-data"):
            form = await read_form(request, limit + FORM_OVERHEAD)
            raw = await file_bytes(form, "file")
            up.task = str(form.get("task") or up.task or "") or None
            up.model = str(form.get("model") or up.model or "")
            up.meta = {k: str(form.get(k) or up.meta.get(k) or "") for k in service.META_FIELDS}
            if raw is None:
                return JSONResponse({"problems": ["No file was uploaded: send it in the 'file' field."]}, 422)
        else:
            raw = await read_body(request, limit)
    except (TooLarge, TooSlow) as err:  # refused unread, but it counts against the limit like any upload
        over = await in_db(request, service.count_refused_upload, user, up.task, settings, up.address)
        if over:
            return JSONResponse({"problems": [over]}, 429)
        if isinstance(err, TooLarge):
            return JSONResponse({"problems": [f"The file is too large: the limit is {limit:,} bytes."]}, 413)
        return JSONResponse({"problems": ["The upload did not arrive in time."]}, 408)

    def work(db: Session):
        sub, problems, status = service.submit(db, user, up, raw, settings)
        if problems:
            return JSONResponse({"problems": problems}, status)
        return JSONResponse(submission_json(view_of(sub, user), settings.score_digits), status)

    return await in_db(request, work)


@router.get("/submissions")
def my_submissions(request: Request, user: User = Depends(token_user), db: Session = Depends(get_db)):
    return [submission_json(v, request.app.state.settings.score_digits) for v in views_of(service.submissions_of(db, user), user)]


@router.get("/submissions/{sub_id}")
def get_submission(sub_id: SubId, request: Request, user: User = Depends(token_user), db: Session = Depends(get_db)):
    sub = service.visible_submission(db, user, sub_id)
    if sub is None:
        raise HTTPException(404, f"No submission {sub_id} of yours.")
    return submission_json(view_of(sub, user), request.app.state.settings.score_digits)


@router.post("/submissions/{sub_id}/review")
async def review(sub_id: SubId, request: Request):
    user = await _token_user_no_db(request)
    if not user.is_admin:
        raise HTTPException(403, "Only administrators can approve or reject results.")
    try:
        raw = (await read_body(request, 16 * 1024)).decode("utf-8", "replace")
        body = await run_in_threadpool(loads, raw)  # off the event loop, like every other parse
    except TooLarge:
        raise HTTPException(413, "The body is too large: send {\"status\": \"approved\"}.") from None
    except TooSlow:
        raise HTTPException(408, "The body did not arrive in time.") from None
    except JSONLimitError as err:
        raise HTTPException(422, str(err)) from None
    except ValueError:
        body = None
    status = body.get("status") if isinstance(body, dict) else None
    if status not in (APPROVED, REJECTED, PENDING):
        raise HTTPException(422, 'Send {"status": "approved"} or {"status": "rejected"}.')

    def work(db: Session):
        try:
            return submission_json(view_of(service.review(db, user, sub_id, status), user), request.app.state.settings.score_digits)
        except service.InputError as err:
            raise HTTPException(404, str(err)) from None

    return await in_db(request, work)


@router.get("/admin/audit")
def audit(user: User = Depends(token_user), db: Session = Depends(get_db)):
    if not user.is_admin:
        raise HTTPException(403, "Only administrators can see the audit view.")
    return [dict(r, last=r["last"].isoformat() + "Z") for r in service.submission_frequency(db)]
