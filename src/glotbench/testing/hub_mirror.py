"""A loopback mirror of the Hugging Face Hub and of GitHub's raw-file hosts, for tests of the real
download code (huggingface_hub through ``HF_ENDPOINT``, httpx through the GitHub base URLs).

It serves any folder laid out as::

    ROOT/hf/<owner>/<name>/<commit>/<files...>      a Hub dataset repository at a commit
    ROOT/hf/<owner>/<name>/refs.json                {"main": "<commit>"} (branches and tags)
    ROOT/hf/<old id>/redirect.json                  {"to": "<owner>/<name>"}: a renamed repository
    ROOT/github/<owner>/<repo>/<commit>/<files...>  a GitHub repository at a commit
    ROOT/github/<owner>/<repo>/refs.json            {"main": "<commit>"}

Endpoints (those huggingface_hub and glotbench call):

* ``GET /api/datasets/{id}/revision/{rev}`` the dataset's info (``sha``, ``siblings`` with size,
  blob id and LFS sha256 when ``?blobs=true``); ``GET /api/datasets/{id}/tree/{rev}[/{path}]``;
  ``POST /api/datasets/{id}/paths-info/{rev}``
* ``HEAD|GET /datasets/{id}/resolve/{rev}/{path}`` with ``X-Repo-Commit``, ``ETag`` (the LFS
  sha256, else the git blob id), ``Content-Length``, ``Accept-Ranges`` and Range requests (206)
* ``GET /raw/{owner}/{repo}/{commit}/{path}`` (raw.githubusercontent.com), ``GET /media/...`` (Git
  LFS objects), ``GET /ghapi/repos/{owner}/{repo}/commits/{ref}`` (the commit sha as text)

A renamed Hub repository (e.g. the legacy id ``truthful_qa``, now ``truthfulqa/truthful_qa``) is
answered as the Hub answers it: a 307 to the same URL with the new id, which huggingface_hub follows.

Point the clients at it with :meth:`Mirror.env`. Faults on purpose: ``mirror.cut[path] = n`` sends
the first ``n`` bytes of a file then drops the connection; ``mirror.stall[path] = n`` sends them then
hangs until ``mirror.release`` is set (time to kill the client); ``mirror.flood[path] = n`` answers with
``n`` bytes (streamed, never held in memory) whatever the file's size; ``mirror.drip[path] = s`` sends
one byte every ``s`` seconds (until ``release``). :func:`stalled_socket` accepts connections and never
answers. Every request is logged in
``mirror.requests`` as ``(method, path, range header)``.

Run ``python -m glotbench.testing.hub_mirror ROOT --port N`` to serve a folder by hand.
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

LFS_MIN = 1  # files at least this big are announced as LFS objects (every file by default)


def git_blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()  # noqa: S324 - git's object id


@dataclass
class Mirror:
    root: Path
    url: str = ""
    requests: list[tuple[str, str, str | None]] = field(default_factory=list)
    cut: dict[str, int] = field(default_factory=dict)  # url path -> bytes sent before the connection drops
    stall: dict[str, int] = field(default_factory=dict)  # url path -> bytes sent before the server hangs
    flood: dict[str, int] = field(default_factory=dict)  # url path -> bytes of body sent instead of the file
    flood_announced: bool = False  # flood with a Content-Length saying so (default: none, body to the close)
    drip: dict[str, float] = field(default_factory=dict)  # url path -> seconds between single bytes
    sent: dict[str, int] = field(default_factory=dict)  # url path -> body bytes a flood or drip got out
    release: threading.Event = field(default_factory=threading.Event)  # set: stalled responses end (dropped)
    lfs_min: int = LFS_MIN
    _server: ThreadingHTTPServer | None = None

    def env(self) -> dict[str, str]:
        """The environment that points huggingface_hub and glotbench at this mirror."""
        return {"HF_ENDPOINT": self.url, "GLOTBENCH_GITHUB_RAW": f"{self.url}/raw",
                "GLOTBENCH_GITHUB_MEDIA": f"{self.url}/media", "GLOTBENCH_GITHUB_API": f"{self.url}/ghapi",
                "HF_HUB_DISABLE_TELEMETRY": "1", "HF_HUB_DISABLE_XET": "1", "HF_HUB_ETAG_TIMEOUT": "5",
                "HF_HUB_DOWNLOAD_TIMEOUT": "5"}

    def stop(self) -> None:
        self.release.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    # ---------------------------------------------------------------- layout helpers
    def add_github(self, repo: str, commit: str, files: dict[str, bytes | Path], refs: dict[str, str] | None = None) -> None:
        _write_tree(self.root / "github" / repo / commit, files)
        if refs:
            _merge_refs(self.root / "github" / repo / "refs.json", refs)

    def add_hf(self, repo: str, commit: str, files: dict[str, bytes | Path], refs: dict[str, str] | None = None) -> None:
        _write_tree(self.root / "hf" / repo / commit, files)
        if refs:
            _merge_refs(self.root / "hf" / repo / "refs.json", refs)

    def add_hf_redirect(self, old: str, new: str) -> None:
        """Requests naming the repository ``old`` (a legacy id without an owner, or a renamed one)
        are redirected to ``new``."""
        d = self.root / "hf" / old
        d.mkdir(parents=True, exist_ok=True)
        (d / "redirect.json").write_text(json.dumps({"to": new}))


def _write_tree(base: Path, files: dict[str, bytes | Path]) -> None:
    for rel, content in files.items():
        p = base / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(content.read_bytes() if isinstance(content, Path) else content)


def _merge_refs(path: Path, refs: dict[str, str]) -> None:
    old = json.loads(path.read_text()) if path.is_file() else {}
    path.write_text(json.dumps({**old, **refs}))


def _resolve_ref(repo_dir: Path, rev: str) -> str | None:
    if (repo_dir / rev).is_dir() and len(rev) == 40:
        return rev
    refs = repo_dir / "refs.json"
    if refs.is_file():
        return json.loads(refs.read_text()).get(rev)
    return None


def _files(commit_dir: Path) -> list[Path]:
    return sorted(p for p in commit_dir.rglob("*") if p.is_file())


class _Handler(BaseHTTPRequestHandler):
    mirror: Mirror
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:  # quiet
        pass

    # ---------------------------------------------------------------- plumbing
    def _send(self, status: int, body: bytes = b"", headers: dict | None = None, *, head: bool = False) -> None:
        self.send_response(status)
        hdrs = {"Content-Length": str(len(body)), **(headers or {})}
        for k, v in hdrs.items():
            self.send_header(k, v)
        self.end_headers()
        if not head and body:
            self.wfile.write(body)

    def _json(self, obj, status: int = 200) -> None:
        self._send(status, json.dumps(obj).encode(), {"Content-Type": "application/json"})

    def _error(self, status: int, message: str, code: str | None = None, *, head: bool = False) -> None:
        headers = {"Content-Type": "application/json", "X-Error-Message": message}
        if code:
            headers["X-Error-Code"] = code
        self._send(status, json.dumps({"error": message}).encode(), headers, head=head)

    def _flood(self, key: str, n: int, headers: dict) -> None:
        self.send_response(200)
        for k, v in headers.items():
            self.send_header(k, v)
        if self.mirror.flood_announced:
            self.send_header("Content-Length", str(n))
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        block = b"x" * (1 << 20)
        sent = 0
        try:
            while sent < n:
                piece = block[: min(len(block), n - sent)]
                self.wfile.write(piece)
                sent += len(piece)
                self.mirror.sent[key] = sent
        except OSError:  # the client hung up: what it read is in mirror.sent
            pass

    def _drip(self, key: str, body: bytes, every: float, headers: dict) -> None:
        self.send_response(200)
        for k, v in {**headers, "Content-Length": str(len(body))}.items():
            self.send_header(k, v)
        self.end_headers()
        self.close_connection = True
        try:
            for i in range(len(body)):
                self.wfile.write(body[i:i + 1])
                self.wfile.flush()
                self.mirror.sent[key] = i + 1
                if self.mirror.release.wait(every):
                    return
        except OSError:
            pass

    def _send_file(self, path: Path, headers: dict, *, head: bool) -> None:
        key = urlsplit(self.path).path
        if not head and key in self.mirror.flood:
            return self._flood(key, self.mirror.flood[key], headers)
        if not head and key in self.mirror.drip:
            return self._drip(key, path.read_bytes(), self.mirror.drip[key], headers)
        data = path.read_bytes()
        total = len(data)
        rng = self.headers.get("Range")
        start = 0
        if rng and rng.startswith("bytes="):
            first = rng[6:].split("-", 1)[0]
            start = int(first) if first else 0
            if start >= total:
                self._send(416, b"", {"Content-Range": f"bytes */{total}"}, head=head)
                return
            self.send_response(206)
            body = data[start:]
            self.send_header("Content-Range", f"bytes {start}-{total - 1}/{total}")
        else:
            self.send_response(200)
            body = data
        for k, v in {**headers, "Content-Length": str(len(body)), "Accept-Ranges": "bytes",
                     "Content-Type": "application/octet-stream"}.items():
            self.send_header(k, v)
        self.end_headers()
        if head:
            return
        stall = self.mirror.stall.get(urlsplit(self.path).path)
        if stall is not None and not rng:  # half a file, then nothing: the client is killed meanwhile
            self.wfile.write(body[:stall])
            self.wfile.flush()
            self.mirror.release.wait(60)
            self.close_connection = True
            return
        cut = self.mirror.cut.get(urlsplit(self.path).path)
        if cut is not None and not rng:
            self.wfile.write(body[:cut])
            self.wfile.flush()
            self.close_connection = True
            import socket

            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        self.wfile.write(body)

    # ---------------------------------------------------------------- routes
    def do_HEAD(self) -> None:  # noqa: N802
        self._route(head=True)

    def do_GET(self) -> None:  # noqa: N802
        self._route(head=False)

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        self._route(head=False, body=raw)

    def _route(self, *, head: bool, body: bytes = b"") -> None:
        m = self.mirror
        parts = urlsplit(self.path)
        path = unquote(parts.path)
        m.requests.append((self.command, parts.path, self.headers.get("Range")))
        seg = path.strip("/").split("/")
        if len(seg) >= 4 and seg[0] in ("api", "datasets") and self._redirected(seg, parts):
            return
        try:
            if seg[:2] == ["api", "datasets"] and len(seg) >= 6 and seg[4] == "revision":
                return self._dataset_info("/".join(seg[2:4]), "/".join(seg[5:]), parse_qs(parts.query))
            if seg[:2] == ["api", "datasets"] and len(seg) >= 6 and seg[4] == "tree":
                return self._tree("/".join(seg[2:4]), seg[5], "/".join(seg[6:]))
            if seg[:2] == ["api", "datasets"] and len(seg) >= 6 and seg[4] == "paths-info":
                return self._paths_info("/".join(seg[2:4]), seg[5], body)
            if seg[0] == "datasets" and len(seg) >= 6 and seg[3] == "resolve":
                return self._resolve("/".join(seg[1:3]), seg[4], "/".join(seg[5:]), head=head)
            if seg[0] in ("raw", "media") and len(seg) >= 5:
                return self._github_file("/".join(seg[1:3]), seg[3], "/".join(seg[4:]), head=head)
            if seg[:2] == ["ghapi", "repos"] and len(seg) >= 6 and seg[4] == "commits":
                return self._github_commit("/".join(seg[2:4]), "/".join(seg[5:]))
        except (BrokenPipeError, ConnectionResetError):
            return
        self._error(404, f"not found: {path}", head=head)

    # ---------------------------------------------------------------- the Hub
    def _redirected(self, seg: list[str], parts) -> bool:
        """A request naming a repository id that ``redirect.json`` moves (one segment, as the
        legacy ``truthful_qa``, or owner/name): 307 to the same URL with the new id."""
        at = 2 if seg[0] == "api" else 1  # /api/datasets/<id>/... or /datasets/<id>/...
        if seg[0] == "api" and seg[1] != "datasets":
            return False
        for n in (1, 2):
            old = seg[at:at + n]
            red = self.mirror.root / "hf" / "/".join(old) / "redirect.json"
            if len(old) == n and red.is_file():
                new = json.loads(red.read_text())["to"].split("/")
                loc = "/" + "/".join(seg[:at] + new + seg[at + n:]) + (f"?{parts.query}" if parts.query else "")
                self._send(307, b"", {"Location": loc}, head=self.command == "HEAD")
                return True
        return False

    def _hf_commit(self, repo: str, rev: str, *, head: bool = False) -> tuple[str, Path] | None:
        repo_dir = self.mirror.root / "hf" / repo
        if not repo_dir.is_dir():
            self._error(404, f"Repository not found: {repo}", "RepoNotFound", head=head)
            return None
        commit = _resolve_ref(repo_dir, rev)
        if commit is None:
            self._error(404, f"Invalid rev id: {rev}", "RevisionNotFound", head=head)
            return None
        return commit, repo_dir / commit

    def _entry(self, p: Path, base: Path, blobs: bool = True) -> dict:
        data = p.read_bytes()
        e = {"rfilename": p.relative_to(base).as_posix()}
        if blobs:
            e.update({"size": len(data), "blobId": git_blob_id(data)})
            if len(data) >= self.mirror.lfs_min:
                e["lfs"] = {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data), "pointerSize": 134}
        return e

    def _dataset_info(self, repo: str, rev: str, query: dict) -> None:
        found = self._hf_commit(repo, rev)
        if found is None:
            return
        commit, base = found
        blobs = (query.get("blobs") or ["false"])[0].lower() in ("1", "true")
        self._json({"_id": repo, "id": repo, "author": repo.split("/")[0], "sha": commit, "private": False,
                    "disabled": False, "gated": False, "downloads": 0, "likes": 0, "tags": [], "cardData": {},
                    "lastModified": "2026-01-01T00:00:00.000Z", "createdAt": "2026-01-01T00:00:00.000Z",
                    "siblings": [self._entry(p, base, blobs) for p in _files(base)]})

    def _tree_entry(self, p: Path, base: Path) -> dict:
        rel = p.relative_to(base).as_posix()
        if p.is_dir():
            return {"type": "directory", "path": rel, "oid": git_blob_id(rel.encode()), "size": 0}
        data = p.read_bytes()
        e = {"type": "file", "path": rel, "size": len(data), "oid": git_blob_id(data)}
        if len(data) >= self.mirror.lfs_min:
            e["lfs"] = {"oid": hashlib.sha256(data).hexdigest(), "size": len(data), "pointerSize": 134}
        return e

    def _tree(self, repo: str, rev: str, sub: str) -> None:
        found = self._hf_commit(repo, rev)
        if found is None:
            return
        _, base = found
        recursive = "recursive=true" in (urlsplit(self.path).query or "").lower() or \
                    "recursive=1" in (urlsplit(self.path).query or "")
        folder = base / sub if sub else base
        if not folder.is_dir():
            return self._error(404, f"not found: {sub}", "EntryNotFound")
        items = sorted(folder.rglob("*") if recursive else folder.iterdir())
        self._json([self._tree_entry(p, base) for p in items])

    def _paths_info(self, repo: str, rev: str, body: bytes) -> None:
        found = self._hf_commit(repo, rev)
        if found is None:
            return
        _, base = found
        text = body.decode("utf-8", "replace")
        try:
            paths = json.loads(text).get("paths", [])
        except ValueError:
            paths = parse_qs(text).get("paths", [])
        out = [self._tree_entry(base / p, base) for p in paths if (base / p).exists()]
        self._json(out)

    def _resolve(self, repo: str, rev: str, rel: str, *, head: bool) -> None:
        found = self._hf_commit(repo, rev, head=head)
        if found is None:
            return
        commit, base = found
        p = base / rel
        if not p.is_file():
            return self._error(404, f"Entry not found: {rel}", "EntryNotFound", head=head)
        data = p.read_bytes()
        etag = hashlib.sha256(data).hexdigest() if len(data) >= self.mirror.lfs_min else git_blob_id(data)
        self._send_file(p, {"X-Repo-Commit": commit, "ETag": f'"{etag}"', "X-Linked-Etag": f'"{etag}"',
                            "X-Linked-Size": str(len(data))}, head=head)

    # ---------------------------------------------------------------- GitHub
    def _github_file(self, repo: str, commit: str, rel: str, *, head: bool) -> None:
        repo_dir = self.mirror.root / "github" / repo
        resolved = _resolve_ref(repo_dir, commit) if repo_dir.is_dir() else None
        p = repo_dir / (resolved or commit) / rel
        if not p.is_file():
            return self._send(404, b"404: Not Found", {"Content-Type": "text/plain"}, head=head)
        self._send_file(p, {"ETag": f'"{git_blob_id(p.read_bytes())}"'}, head=head)

    def _github_commit(self, repo: str, ref: str) -> None:
        repo_dir = self.mirror.root / "github" / repo
        commit = _resolve_ref(repo_dir, ref) if repo_dir.is_dir() else None
        if commit is None:
            return self._error(422, f"No commit found for SHA: {ref}")
        self._send(200, commit.encode(), {"Content-Type": "text/plain"})


@dataclass
class Stalled:
    """A TCP server on 127.0.0.1 that accepts every connection and never sends a byte."""

    url: str
    accepted: list = field(default_factory=list)
    _sock: object = None

    def stop(self) -> None:
        for c in self.accepted:
            c.close()
        self._sock.close()


def stalled_socket() -> Stalled:
    import socket

    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(64)
    stalled = Stalled(f"http://127.0.0.1:{srv.getsockname()[1]}", _sock=srv)

    def accept() -> None:
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            stalled.accepted.append(conn)

    threading.Thread(target=accept, name="stalled-socket", daemon=True).start()
    return stalled


def start_mirror(root: Path, port: int = 0) -> Mirror:
    """Serve ``root`` on 127.0.0.1 in a background thread; ``mirror.stop()`` ends it."""
    mirror = Mirror(Path(root))
    handler = type("MirrorHandler", (_Handler,), {"mirror": mirror})
    server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    server.daemon_threads = True
    mirror._server = server
    mirror.url = f"http://127.0.0.1:{server.server_address[1]}"
    threading.Thread(target=server.serve_forever, name="hub-mirror", daemon=True).start()
    return mirror


def main() -> None:
    import argparse
    import time

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("root", type=Path)
    ap.add_argument("--port", type=int, default=0)
    args = ap.parse_args()
    m = start_mirror(args.root, args.port)
    print(m.url, flush=True)
    for k, v in m.env().items():
        print(f"export {k}={v}", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        m.stop()


if __name__ == "__main__":
    main()
