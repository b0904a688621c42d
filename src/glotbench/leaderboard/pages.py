"""Server-rendered pages: leaderboards, accounts, uploads, results and administration."""

from __future__ import annotations

from urllib.parse import quote

from fastapi import APIRouter, Depends, Request
from fastapi.concurrency import run_in_threadpool
from sqlalchemy.orm import Session

from glotbench.leaderboard import service
from glotbench.leaderboard.chart import Point, Series, build_chart
from glotbench.leaderboard.db import LeaderboardError
from glotbench.leaderboard.i18n import translator
from glotbench.leaderboard.schema import APPROVED, PENDING, REJECTED
from glotbench.leaderboard.scoring import TASK_METRICS
from glotbench.leaderboard.submission_format import make_submission
from glotbench.leaderboard.uploads import FORM_OVERHEAD, TooLarge, file_bytes, read_form
from glotbench.leaderboard.web import check_csrf, current_user, get_db, redirect, render, safe_next

router = APIRouter()
SMALL_FORM = 16 * 1024


def _error(request: Request, db: Session, key: str, status: int, **kw):
    return render(request, db, "error.html", status=status, message=translator(request.state.lang)(key, **kw))


async def _posted_form(request: Request, db: Session, limit: int = SMALL_FORM, overhead: int = 0):
    """``(form, None)``, or ``(None, error page)`` when the body is over ``limit + overhead``
    bytes (the page names ``limit``) or the CSRF token does not check out."""
    try:
        form = await read_form(request, limit + overhead)
    except TooLarge:
        return None, _error(request, db, "err_too_large", 413, limit=limit)
    if not check_csrf(request, form):
        return None, _error(request, db, "err_csrf", 403)
    return form, None


def _login_redirect(request: Request):
    return redirect(f"/login?next={quote(request.url.path)}")


# ---- public leaderboards ----------------------------------------------------------------------

@router.get("/")
def overall(request: Request, db: Session = Depends(get_db)):
    tasks = service.list_tasks(db)
    series = [Series(t.name, [Point(s.created_at, s.score, s.model_name) for s in service.approved(db, t)]) for t in tasks]
    return render(request, db, "overall.html", rows=service.overall_board(db), tasks=tasks, chart=build_chart(series))


@router.get("/tasks/{name}")
def task_page(name: str, request: Request, db: Session = Depends(get_db)):
    task = service.get_task(db, name)
    if task is None:
        return _error(request, db, "err_not_found", 404)
    subs = service.approved(db, task)
    chart = build_chart([Series(task.name, [Point(s.created_at, s.score, s.model_name) for s in subs])])
    return render(request, db, "task.html", task=task, rows=service.task_board(db, task), chart=chart,
                  tasks=service.list_tasks(db))


# ---- accounts ---------------------------------------------------------------------------------

@router.get("/register")
def register_form(request: Request, db: Session = Depends(get_db)):
    return render(request, db, "register.html", errors=[], form={})


@router.post("/register")
async def register(request: Request, db: Session = Depends(get_db)):
    form, refused = await _posted_form(request, db)
    if refused is not None:
        return refused
    t = translator(request.state.lang)
    username, team = str(form.get("username", "")), str(form.get("team", ""))
    password, again = str(form.get("password", "")), str(form.get("password2", ""))
    if password != again:
        return render(request, db, "register.html", status=400, errors=[t("err_password_mismatch")], form={"username": username, "team": team})
    try:
        user = await run_in_threadpool(service.create_user, db, username, password, team)
    except service.InputError as err:
        return render(request, db, "register.html", status=400, errors=[t(err.key)], form={"username": username, "team": team})
    request.session.clear()
    request.session["uid"] = user.id
    return redirect("/submit")


@router.get("/login")
def login_form(request: Request, next: str = "/", db: Session = Depends(get_db)):
    return render(request, db, "login.html", errors=[], next=safe_next(next), form={})


@router.post("/login")
async def login(request: Request, db: Session = Depends(get_db)):
    form, refused = await _posted_form(request, db)
    if refused is not None:
        return refused
    username = str(form.get("username", ""))
    user = await run_in_threadpool(service.authenticate, db, username, str(form.get("password", "")))
    nxt = safe_next(str(form.get("next", "/")))
    if user is None:
        t = translator(request.state.lang)
        return render(request, db, "login.html", status=400, errors=[t("login_failed")], next=nxt, form={"username": username})
    request.session.clear()  # a fresh session (and CSRF token) after login
    request.session["uid"] = user.id
    return redirect(nxt)


@router.post("/logout")
async def logout(request: Request, db: Session = Depends(get_db)):
    form, refused = await _posted_form(request, db)
    if refused is not None:
        return refused
    request.session.clear()
    return redirect("/")


@router.get("/account")
def account(request: Request, db: Session = Depends(get_db)):
    user = current_user(request, db)
    if user is None:
        return _login_redirect(request)
    return render(request, db, "account.html", tokens=service.tokens_of(db, user), new_token=None)


@router.post("/account/tokens")
async def create_token(request: Request, db: Session = Depends(get_db)):
    user = current_user(request, db)
    if user is None:
        return _login_redirect(request)
    form, refused = await _posted_form(request, db)
    if refused is not None:
        return refused
    if form.get("delete"):
        if str(form.get("delete")).isdigit():
            service.delete_token(db, user, int(str(form.get("delete"))))
        return redirect("/account")
    token = service.create_token(db, user, str(form.get("name", "")))
    return render(request, db, "account.html", tokens=service.tokens_of(db, user), new_token=token)


# ---- submissions ------------------------------------------------------------------------------

def _example(tasks) -> str:
    import json

    name = tasks[0].name if tasks else "hulu.cola"
    label = tasks[0].labels[0] if tasks else "1"
    return json.dumps(make_submission(name, "my-model", {"0": label, "1": label}), ensure_ascii=False)[:-2] + ", ...]}"


@router.get("/submit")
def submit_form(request: Request, task: str = "", db: Session = Depends(get_db)):
    user = current_user(request, db)
    if user is None:
        return _login_redirect(request)
    tasks = service.list_tasks(db)
    return render(request, db, "submit.html", tasks=tasks, problems=[], form={"task": task}, example=_example(tasks),
                  max_bytes=request.app.state.max_upload_bytes)


@router.post("/submit")
async def submit(request: Request, db: Session = Depends(get_db)):
    user = current_user(request, db)
    if user is None:
        return _login_redirect(request)
    limit = request.app.state.max_upload_bytes
    tasks = service.list_tasks(db)
    ctx = dict(tasks=tasks, example=_example(tasks), max_bytes=limit)
    try:
        form = await read_form(request, limit + FORM_OVERHEAD)
    except TooLarge:
        msg = f"The file is too large: the limit is {limit:,} bytes."
        return render(request, db, "submit.html", status=413, problems=[msg], form={}, **ctx)
    if not check_csrf(request, form):
        return _error(request, db, "err_csrf", 403)
    fields = {"task": str(form.get("task", "")), "model": str(form.get("model", ""))}
    raw = await file_bytes(form, "file")
    if raw is None:
        return render(request, db, "submit.html", status=422, problems=["No file was uploaded."], form=fields, **ctx)
    sub, problems = await run_in_threadpool(service.submit, db, user, fields["task"] or None, raw, fields["model"], limit)
    if problems:
        return render(request, db, "submit.html", status=413 if "too large" in problems[0] else 422, problems=problems, form=fields, **ctx)
    return redirect(f"/submissions/{sub.id}")


@router.get("/submissions")
def my_submissions(request: Request, db: Session = Depends(get_db)):
    user = current_user(request, db)
    if user is None:
        return _login_redirect(request)
    return render(request, db, "my_submissions.html", subs=service.submissions_of(db, user))


@router.get("/submissions/{sub_id}")
def submission_page(sub_id: int, request: Request, db: Session = Depends(get_db)):
    user = current_user(request, db)
    if user is None:
        return _login_redirect(request)
    sub = service.visible_submission(db, user, sub_id)
    if sub is None:  # someone else's submission looks exactly like a missing one
        return _error(request, db, "err_not_found", 404)
    return render(request, db, "submission.html", sub=sub)


# ---- administration ---------------------------------------------------------------------------

def _admin(request: Request, db: Session):
    user = current_user(request, db)
    return user if user is not None and user.is_admin else None


@router.get("/admin")
def admin_page(request: Request, db: Session = Depends(get_db)):
    if current_user(request, db) is None:
        return _login_redirect(request)
    if _admin(request, db) is None:
        return _error(request, db, "err_forbidden", 403)
    return render(request, db, "admin.html", pending=service.all_submissions(db, PENDING), subs=service.all_submissions(db),
                  metrics=TASK_METRICS, task_errors=[], task_message=None)


@router.post("/admin/submissions/{sub_id}")
async def admin_review(sub_id: int, request: Request, db: Session = Depends(get_db)):
    admin = _admin(request, db)
    if admin is None:
        return _error(request, db, "err_forbidden", 403)
    form, refused = await _posted_form(request, db)
    if refused is not None:
        return refused
    status = str(form.get("status", ""))
    if status not in (APPROVED, REJECTED, PENDING):
        return _error(request, db, "err_forbidden", 400)
    try:
        service.review(db, admin, sub_id, status)
    except service.InputError:
        return _error(request, db, "err_not_found", 404)
    return redirect("/admin")


@router.post("/admin/tasks")
async def admin_add_task(request: Request, db: Session = Depends(get_db)):
    admin = _admin(request, db)
    if admin is None:
        return _error(request, db, "err_forbidden", 403)
    form, refused = await _posted_form(request, db, request.app.state.max_upload_bytes, FORM_OVERHEAD)
    if refused is not None:
        return refused
    ctx = dict(pending=service.all_submissions(db, PENDING), subs=service.all_submissions(db), metrics=TASK_METRICS)
    name = str(form.get("name", "")).strip()
    try:
        raw = await file_bytes(form, "gold") or b""
        gold = service.parse_gold(raw, "gold file", str(form.get("id_field") or "id"), str(form.get("label_field") or "label"))
        labels = [x.strip() for x in str(form.get("labels", "")).split(",") if x.strip()] or None
        task = service.add_task(db, name, gold, str(form.get("metric", "")), labels, str(form.get("title", "")),
                                replace=bool(form.get("replace")))
    except LeaderboardError as err:
        # the message names the field or record at fault, never a gold label value
        return render(request, db, "admin.html", status=400, task_errors=[_safe_task_error(err)], task_message=None, **ctx)
    t = translator(request.state.lang)
    return render(request, db, "admin.html", task_errors=[], task_message=t("task_added", name=task.name, n=task.n_items), **ctx)


def _safe_task_error(err: LeaderboardError) -> str:
    if isinstance(err, service.InputError) and err.key == "err_gold_labels":
        return "Some gold labels are not in the label set given."
    return str(err)
