"""Server-rendered pages: the grid, task, model, download and about pages, accounts, uploads,
results and administration. Async endpoints only read bodies; every query runs in a worker thread
(:func:`glotbench.leaderboard.web.in_db`)."""

from __future__ import annotations

import json
import secrets
from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Depends, Request
from fastapi import Path as PathParam
from fastapi.responses import Response
from sqlalchemy.orm import Session

from glotbench.leaderboard import registration, service
from glotbench.leaderboard.chart import Point, Series, build_chart
from glotbench.leaderboard.db import LeaderboardError
from glotbench.leaderboard.i18n import translator
from glotbench.leaderboard.schema import APPROVED, PENDING, REJECTED
from glotbench.leaderboard.scoring import first_item_ids, leaderboard_metrics
from glotbench.leaderboard.submission_format import make_submission
from glotbench.leaderboard.uploads import FORM_OVERHEAD, TooLarge, TooSlow, file_bytes, read_form
from glotbench.leaderboard.visibility import view_of, views_of
from glotbench.leaderboard.web import (
    client_address,
    check_csrf,
    current_user,
    get_db,
    in_db,
    login_session,
    logout_session,
    redirect,
    render,
    safe_next,
)

router = APIRouter()
SMALL_FORM = 16 * 1024
SubId = Annotated[int, PathParam(ge=1, le=2**31 - 1)]


def _error(request: Request, db: Session, key: str, status: int, **kw):
    return render(request, db, "error.html", status=status, message=translator(request.state.lang)(key, **kw))


async def _read(request: Request, limit: int = SMALL_FORM, overhead: int = 0, max_files: int = 2):
    """``(form, None)`` or ``(None, (message key, status, kwargs))``; reads with no DB connection held."""
    try:
        form = await read_form(request, limit + overhead, max_files)
    except TooLarge:
        return None, ("err_too_large", 413, {"limit": limit})
    except TooSlow:
        return None, ("err_too_slow", 408, {})
    if not check_csrf(request, form):
        return None, ("err_csrf", 403, {})
    return form, None


def _login_redirect(request: Request):
    return redirect(f"/login?next={quote(request.url.path)}")


def _whoami(request: Request):
    return in_db(request, lambda db: current_user(request, db))


# ---- public pages -----------------------------------------------------------------------------

@router.get("/")
def overall(request: Request, db: Session = Depends(get_db)):
    tasks = service.list_tasks(db)
    series = [Series(t.name, [Point(s.created_at, s.score, s.model_name) for s in service.approved(db, t)],
                     higher_is_better=service.higher_is_better(t.metric)) for t in tasks]
    return render(request, db, "overall.html", grid=service.grid(db), tasks=tasks, chart=build_chart(series))


@router.get("/about")
def about(request: Request, db: Session = Depends(get_db)):
    return render(request, db, "about.html", tasks=service.list_tasks(db))


@router.get("/downloads")
def downloads(request: Request, db: Session = Depends(get_db)):
    tasks = service.list_tasks(db)
    return render(request, db, "downloads.html", tasks=tasks, files={t.name: service.task_files(db, t) for t in tasks})


@router.get("/tasks/{name}/files/{split}")
def download(name: str, split: str, db: Session = Depends(get_db)):
    t = service.get_task(db, name)
    f = service.task_file(db, t, split) if t is not None and split in service.SPLITS else None
    if f is None:
        return Response("not found", status_code=404)
    return Response(f.content, media_type="application/json", headers={"Content-Disposition": f'attachment; filename="{f.filename}"'})


def _example_for(task, db: Session | None = None) -> str:
    """An example file for ``task``: metadata fields, then one prediction per line, for the task's
    own first item ids (``q01``, ``q02``: what a submission must name), not made-up ones."""
    ids = (first_item_ids(db, task) if db is not None else []) or ["0", "1"]
    first, last = ids[0], ids[-1]
    if task.labels:
        doc = make_submission(task.name, "my-model", {first: task.labels[0], last: task.labels[-1]})
    else:  # a text task: free-text answers
        doc = make_submission(task.name, "my-model", {first: f"the answer to item {first}", last: f"the answer to item {last}"},
                              field="prediction")
    head = {"task": doc["task"], "model": doc["model"], "model_size": "135M parameters",
            "paper_url": "https://example.org/paper", "description": "What the model is and how it was run."}
    lines = [f" {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}," for k, v in head.items()]
    preds = [f"  {json.dumps(p, ensure_ascii=False)}," for p in doc["predictions"]] + ["  ..."]
    return "{\n" + "\n".join(lines) + '\n "predictions": [\n' + "\n".join(preds) + "\n ]\n}"


@router.get("/tasks/{name}")
def task_page(name: str, request: Request, db: Session = Depends(get_db)):
    task = service.get_task(db, name)
    if task is None:
        return _error(request, db, "err_not_found", 404)
    subs = service.approved(db, task)
    chart = build_chart([Series(task.name, [Point(s.created_at, s.score, s.model_name) for s in subs],
                                higher_is_better=service.higher_is_better(task.metric))])
    text = task.description_hu if request.state.lang == "hu" and task.description_hu else task.description_en
    return render(request, db, "task.html", task=task, rows=service.task_board(db, task), chart=chart, description=text,
                  files=service.task_files(db, task), example=_example_for(task, db), tasks=service.list_tasks(db))


@router.get("/models/{model}")
def model_page(model: str, request: Request, db: Session = Depends(get_db)):
    subs = service.approved(db, model=model)
    if not subs:
        return _error(request, db, "err_not_found", 404)
    by_task: dict[str, list] = {}
    higher = {}
    for s in subs:
        by_task.setdefault(s.task.name, []).append(Point(s.created_at, s.score, s.model_name))
        higher[s.task.name] = service.higher_is_better(s.task.metric)
    chart = build_chart([Series(name, pts, higher_is_better=higher[name]) for name, pts in sorted(by_task.items())])
    latest = subs[-1]
    return render(request, db, "model.html", model=model, subs=views_of(reversed(subs), None), chart=chart,
                  latest=view_of(latest, None),
                  tasks=service.list_tasks(db))


# ---- accounts ---------------------------------------------------------------------------------

@router.get("/register")
def register_form(request: Request, db: Session = Depends(get_db)):
    return render(request, db, "register.html", errors=[], form={})


@router.post("/register")
async def register(request: Request):
    form, refused = await _read(request)

    def work(db: Session):
        if refused is not None:
            return _error(request, db, refused[0], refused[1], **refused[2])
        t = translator(request.state.lang)
        username, team = str(form.get("username", "")), str(form.get("team", ""))
        password, again = str(form.get("password", "")), str(form.get("password2", ""))
        keep = {"username": username, "team": team}
        if password != again:
            return render(request, db, "register.html", status=400, errors=[t("err_password_mismatch")], form=keep)
        try:
            user = registration.register(db, username, password, team, client_address(request), request.app.state.settings)
        except service.InputError as err:
            status = {"err_user_exists": 409, "err_register_limit": 429}.get(err.key, 400)
            return render(request, db, "register.html", status=status, errors=[t(err.key)], form=keep)
        login_session(request, db, user)
        return redirect("/submit")

    return await in_db(request, work)


@router.get("/login")
def login_form(request: Request, next: str = "/", db: Session = Depends(get_db)):
    return render(request, db, "login.html", errors=[], next=safe_next(next), form={})


@router.post("/login")
async def login(request: Request):
    form, refused = await _read(request)
    settings = request.app.state.settings

    def work(db: Session):
        if refused is not None:
            return _error(request, db, refused[0], refused[1], **refused[2])
        username = str(form.get("username", ""))
        user = service.authenticate(db, username, str(form.get("password", "")), settings.login_max_failures,
                                    settings.login_lockout_s)
        nxt = safe_next(str(form.get("next", "/")))
        if user is None:  # one message for a wrong name, a wrong password and a locked account
            t = translator(request.state.lang)
            return render(request, db, "login.html", status=400, errors=[t("login_failed")], next=nxt, form={"username": username})
        login_session(request, db, user)
        return redirect(nxt)

    return await in_db(request, work)


@router.post("/logout")
async def logout(request: Request):
    form, refused = await _read(request)

    def work(db: Session):
        if refused is not None:
            return _error(request, db, refused[0], refused[1], **refused[2])
        logout_session(request, db)
        return redirect("/")

    return await in_db(request, work)


@router.get("/account")
def account(request: Request, db: Session = Depends(get_db)):
    user = current_user(request, db)
    if user is None:
        return _login_redirect(request)
    return render(request, db, "account.html", tokens=service.tokens_of(db, user), new_token=None, errors=[], message=None)


@router.post("/account/tokens")
async def create_token(request: Request):
    if await _whoami(request) is None:
        return _login_redirect(request)
    form, refused = await _read(request)

    def work(db: Session):
        user = current_user(request, db)
        if refused is not None:
            return _error(request, db, refused[0], refused[1], **refused[2])
        delete = str(form.get("delete") or "")
        if delete:
            if delete.isdigit() and len(delete) < 10:
                service.delete_token(db, user, int(delete))
            return redirect("/account")
        try:
            token = service.create_token(db, user, str(form.get("name", "")))
        except service.InputError as err:
            return render(request, db, "account.html", status=400, tokens=service.tokens_of(db, user), new_token=None,
                          errors=[str(err)], message=None)
        return render(request, db, "account.html", tokens=service.tokens_of(db, user), new_token=token, errors=[], message=None)

    return await in_db(request, work)


@router.post("/account/password")
async def change_password(request: Request):
    if await _whoami(request) is None:
        return _login_redirect(request)
    form, refused = await _read(request)

    def work(db: Session):
        user = current_user(request, db)
        if refused is not None:
            return _error(request, db, refused[0], refused[1], **refused[2])
        t = translator(request.state.lang)
        try:
            if str(form.get("new_password", "")) != str(form.get("new_password2", "")):
                raise service.InputError("err_password_mismatch", "the passwords differ")
            service.change_password(db, user, str(form.get("old_password", "")), str(form.get("new_password", "")))
        except service.InputError as err:
            return render(request, db, "account.html", status=400, tokens=service.tokens_of(db, user), new_token=None,
                          errors=[t(err.key)], message=None)
        login_session(request, db, user)  # every other session of the user was ended; this one starts afresh
        return render(request, db, "account.html", tokens=service.tokens_of(db, user), new_token=None, errors=[],
                      message=t("password_changed"))

    return await in_db(request, work)


# ---- submissions ------------------------------------------------------------------------------

def _submit_ctx(request: Request, db: Session) -> dict:
    tasks = service.list_tasks(db)
    example = _example_for(tasks[0], db) if tasks else ""
    return dict(tasks=tasks, example=example, max_bytes=request.app.state.settings.max_upload_bytes,
                idem=secrets.token_urlsafe(16))


@router.get("/submit")
def submit_form(request: Request, task: str = "", db: Session = Depends(get_db)):
    if current_user(request, db) is None:
        return _login_redirect(request)
    return render(request, db, "submit.html", problems=[], form={"task": task}, **_submit_ctx(request, db))


@router.post("/submit")
async def submit(request: Request):
    if await _whoami(request) is None:
        return _login_redirect(request)
    settings = request.app.state.settings
    limit = settings.max_upload_bytes
    try:
        form = await read_form(request, limit + FORM_OVERHEAD)
        problem = None
    except TooLarge:
        form, problem = None, (413, f"The file is too large: the limit is {limit:,} bytes.")
    except TooSlow:
        form, problem = None, (408, "The upload did not arrive in time.")
    raw = await file_bytes(form, "file") if form is not None else None

    def work(db: Session):
        user = current_user(request, db)
        ctx = _submit_ctx(request, db)
        if problem:  # refused unread, but it counts against the limit like any upload
            over = service.count_refused_upload(db, user, None, settings, client_address(request))
            status, text = (429, over) if over else problem
            return render(request, db, "submit.html", status=status, problems=[text], form={}, **ctx)
        if not check_csrf(request, form):
            return _error(request, db, "err_csrf", 403)
        fields = {k: str(form.get(k, "")) for k in ("task", "model", *service.META_FIELDS)}
        if raw is None:
            return render(request, db, "submit.html", status=422, problems=["No file was uploaded."], form=fields, **ctx)
        up = service.Upload(task=fields["task"] or None, model=fields["model"],
                            meta={k: fields[k] for k in service.META_FIELDS},
                            idempotency_key=str(form.get("idempotency_key") or "") or None, address=client_address(request))
        sub, problems, status = service.submit(db, user, up, raw, settings)
        if problems:
            return render(request, db, "submit.html", status=status, problems=problems, form=fields, **ctx)
        return redirect(f"/submissions/{sub.id}")

    return await in_db(request, work)


@router.get("/submissions")
def my_submissions(request: Request, db: Session = Depends(get_db)):
    user = current_user(request, db)
    if user is None:
        return _login_redirect(request)
    return render(request, db, "my_submissions.html", subs=views_of(service.submissions_of(db, user), user))


@router.get("/submissions/{sub_id}")
def submission_page(sub_id: SubId, request: Request, db: Session = Depends(get_db)):
    user = current_user(request, db)
    if user is None:
        return _login_redirect(request)
    sub = service.visible_submission(db, user, sub_id)
    if sub is None:  # someone else's submission looks exactly like a missing one
        return _error(request, db, "err_not_found", 404)
    return render(request, db, "submission.html", sub=view_of(sub, user))


# ---- administration ---------------------------------------------------------------------------

def _is_admin(request: Request, db: Session) -> bool:
    user = current_user(request, db)
    return user is not None and user.is_admin


def _admin_ctx(db: Session, admin) -> dict:
    return dict(pending=views_of(service.all_submissions(db, PENDING), admin), subs=views_of(service.all_submissions(db), admin),
                metrics=leaderboard_metrics(),
                tasks=service.list_tasks(db), task_errors=[], task_message=None)


@router.get("/admin")
def admin_page(request: Request, db: Session = Depends(get_db)):
    if current_user(request, db) is None:
        return _login_redirect(request)
    if not _is_admin(request, db):
        return _error(request, db, "err_forbidden", 403)
    return render(request, db, "admin.html", **_admin_ctx(db, current_user(request, db)))


@router.get("/admin/audit")
def admin_audit(request: Request, db: Session = Depends(get_db)):
    if current_user(request, db) is None:
        return _login_redirect(request)
    if not _is_admin(request, db):
        return _error(request, db, "err_forbidden", 403)
    s = request.app.state.settings
    return render(request, db, "audit.html", rows=service.submission_frequency(db), per_day=s.max_per_day, per_month=s.max_per_month)


async def _admin_form(request: Request, limit: int = SMALL_FORM, overhead: int = 0, max_files: int = 2):
    who = await _whoami(request)
    if who is None or not who.is_admin:
        return None, ("err_forbidden", 403, {})
    return await _read(request, limit, overhead, max_files)


@router.post("/admin/submissions/{sub_id}")
async def admin_review(sub_id: SubId, request: Request):
    form, refused = await _admin_form(request)

    def work(db: Session):
        if refused is not None:
            return _error(request, db, refused[0], refused[1], **refused[2])
        status = str(form.get("status", ""))
        if status not in (APPROVED, REJECTED, PENDING):
            return _error(request, db, "err_forbidden", 400)
        try:
            service.review(db, current_user(request, db), sub_id, status)
        except service.InputError:
            return _error(request, db, "err_not_found", 404)
        return redirect("/admin")

    return await in_db(request, work)


ADMIN_TASK_FILES = ("gold", "train", "dev", "test")  # the file inputs of the administrator's task form


@router.post("/admin/tasks")
async def admin_add_task(request: Request):
    limit = request.app.state.settings.max_upload_bytes
    form, refused = await _admin_form(request, 4 * limit, FORM_OVERHEAD, max_files=len(ADMIN_TASK_FILES))
    files = {}
    if form is not None:
        for k in ADMIN_TASK_FILES:
            files[k] = await file_bytes(form, k)

    def work(db: Session):
        if refused is not None:
            return _error(request, db, refused[0], refused[1], **refused[2])
        ctx = _admin_ctx(db, current_user(request, db))
        name = str(form.get("name", "")).strip()
        t = translator(request.state.lang)
        try:
            task = service.get_task(db, name) if not files["gold"] else None
            label_field = str(form.get("label_field") or "label")
            if files["gold"]:
                gold = service.parse_gold(files["gold"], "gold file", str(form.get("id_field") or "id"), label_field)
                labels = [x.strip() for x in str(form.get("labels", "")).split(",") if x.strip()] or None
                share = str(form.get("public_share") or "").strip()
                task = service.add_task(db, name, gold, str(form.get("metric", "")), labels, str(form.get("title", "")),
                                        replace=bool(form.get("replace")), public_share=float(share) if share else None)
            if task is None:
                raise LeaderboardError("no gold file given and no such task to edit")
            for split in service.SPLITS:
                if files[split]:
                    service.add_task_file(db, task, split, f"{task.name}_{split}.json", files[split], label_field)
            if form.get("description_en") is not None or form.get("description_hu") is not None:
                service.set_task_text(db, task, str(form.get("description_en") or task.description_en),
                                      str(form.get("description_hu") or task.description_hu))
        except (LeaderboardError, ValueError) as err:
            # the message names the field or record at fault, never a gold label value
            ctx["task_errors"] = [_safe_task_error(err)]
            return render(request, db, "admin.html", status=400, **ctx)
        ctx = _admin_ctx(db, current_user(request, db))
        ctx["task_message"] = t("task_added", name=task.name, n=task.n_items)
        return render(request, db, "admin.html", **ctx)

    return await in_db(request, work)


def _safe_task_error(err: Exception) -> str:
    if isinstance(err, service.InputError) and err.key == "err_gold_labels":
        return "Some gold labels are not in the label set given."
    return str(err)
