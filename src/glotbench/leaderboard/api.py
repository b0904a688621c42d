"""The REST API, for scripts and CI jobs. Every call that touches a user's data needs
``Authorization: Bearer <token>`` (tokens are made on the API tokens page or with
``glotbench admin create-token``). Cookies are not accepted here, so no CSRF token is needed."""

from __future__ import annotations

from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse
from sqlalchemy.orm import Session

from glotbench.leaderboard import service
from glotbench.leaderboard.schema import APPROVED, PENDING, REJECTED, Submission, User
from glotbench.leaderboard.uploads import FORM_OVERHEAD, TooLarge, file_bytes, read_body, read_form
from glotbench.leaderboard.web import get_db

router = APIRouter(prefix="/api")


def token_user(request: Request, db: Session = Depends(get_db)) -> User:
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    user = service.user_for_token(db, token.strip()) if scheme.lower() == "bearer" and token.strip() else None
    if user is None:
        raise HTTPException(401, "Missing or invalid API token: send 'Authorization: Bearer <token>'.",
                            headers={"WWW-Authenticate": "Bearer"})
    return user


def submission_json(s: Submission) -> dict:
    return {"id": s.id, "task": s.task.name, "model": s.model_name, "team": s.team, "user": s.user.username,
            "metric": s.task.metric, "score": s.score, "n_items": s.n_items, "status": s.status,
            "created_at": s.created_at.isoformat() + "Z",
            "reviewed_at": s.reviewed_at.isoformat() + "Z" if s.reviewed_at else None}


@router.get("/tasks")
def tasks(db: Session = Depends(get_db)):
    return [{"name": t.name, "title": t.title, "metric": t.metric, "labels": t.labels, "n_items": t.n_items}
            for t in service.list_tasks(db)]


@router.get("/leaderboard")
def overall(db: Session = Depends(get_db)):
    return {"note": "mean of each model's best approved score over the tasks it has approved results for",
            "rows": [{"model": r.model, "team": r.team, "user": r.user, "score": r.score, "n_tasks": r.n_tasks,
                      "date": r.date.isoformat() + "Z"} for r in service.overall_board(db)]}


@router.get("/leaderboard/{task_name}")
def task_board(task_name: str, db: Session = Depends(get_db)):
    task = service.get_task(db, task_name)
    if task is None:
        raise HTTPException(404, f"Unknown task {task_name!r}.")
    return {"task": task.name, "metric": task.metric,
            "rows": [{"model": r.model, "team": r.team, "user": r.user, "score": r.score, "date": r.date.isoformat() + "Z",
                      "submission": r.submission_id} for r in service.task_board(db, task)]}


@router.post("/submissions", status_code=201)
async def create_submission(request: Request, user: User = Depends(token_user), db: Session = Depends(get_db)):
    """Either a JSON body that is the submission file itself (``?task=`` and ``?model=`` may fill in
    missing fields), or multipart/form-data with ``file`` and optional ``task`` and ``model`` fields."""
    limit = request.app.state.max_upload_bytes
    task, model = request.query_params.get("task"), request.query_params.get("model")
    try:
        if request.headers.get("content-type", "").startswith("multipart/form-data"):
            form = await read_form(request, limit + FORM_OVERHEAD)
            raw = await file_bytes(form, "file")
            task, model = str(form.get("task") or task or ""), str(form.get("model") or model or "")
            if raw is None:
                return JSONResponse({"problems": ["No file was uploaded: send it in the 'file' field."]}, 422)
        else:
            raw = await read_body(request, limit)
    except TooLarge:
        return JSONResponse({"problems": [f"The file is too large: the limit is {limit:,} bytes."]}, 413)
    sub, problems = await run_in_threadpool(service.submit, db, user, task or None, raw, model, limit)
    if problems:
        return JSONResponse({"problems": problems}, 413 if "too large" in problems[0] else 422)
    return submission_json(sub)


@router.get("/submissions")
def my_submissions(user: User = Depends(token_user), db: Session = Depends(get_db)):
    return [submission_json(s) for s in service.submissions_of(db, user)]


@router.get("/submissions/{sub_id}")
def get_submission(sub_id: int, user: User = Depends(token_user), db: Session = Depends(get_db)):
    sub = service.visible_submission(db, user, sub_id)
    if sub is None:
        raise HTTPException(404, f"No submission {sub_id} of yours.")
    return submission_json(sub)


@router.post("/submissions/{sub_id}/review")
async def review(sub_id: int, request: Request, user: User = Depends(token_user), db: Session = Depends(get_db)):
    if not user.is_admin:
        raise HTTPException(403, "Only administrators can approve or reject results.")
    try:
        body = await request.json()
    except ValueError:
        body = None
    status = body.get("status") if isinstance(body, dict) else None
    if status not in (APPROVED, REJECTED, PENDING):
        raise HTTPException(422, 'Send {"status": "approved"} or {"status": "rejected"}.')
    try:
        return submission_json(service.review(db, user, sub_id, status))
    except service.InputError as err:
        raise HTTPException(404, str(err)) from None
