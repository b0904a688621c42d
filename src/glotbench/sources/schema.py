"""The ``source.fetch`` block of a task file: where each file the task reads comes from.

One entry per origin (``kind: github | hf | url``), each precise enough to fetch and check its
files; every field (``to``, ``lfs``, ``git_blob``, an hf origin's ``config(s)``, ``splits``,
``include``, ``assumed``) and the rule that each destination is its own: docs/data.md
"Declaring a source".
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

_SHA256 = re.compile(r"[0-9a-f]{64}")
_GIT_BLOB = re.compile(r"[0-9a-f]{40}")
COMMIT = re.compile(r"[0-9a-f]{40}")


def inside_root(v: str) -> str:
    """A destination under the data root: relative, no ``..``, not the root itself (``.``), no
    backslash or ``~`` (a path that means another folder on another system)."""
    import posixpath

    norm = posixpath.normpath(v)
    if (v.startswith(("/", "~")) or "\\" in v or ":" in v.split("/")[0] or ".." in v.split("/")
            or norm in (".", "")):
        raise ValueError(f"{v!r}: must be a folder or file of its own inside the data root (relative, no '..', "
                         f"not the data root itself)")
    return norm


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SourceFile(_Strict):
    path: str = ""  # the file's path in the repository (github, hf)
    url: str = ""  # kind url: where to download it
    to: str = ""  # where the task reads it, relative to the data root (default: path)
    size: int | None = Field(None, ge=0)
    sha256: str | None = None
    lfs: bool = False  # a Git LFS object (GitHub serves it from its media host)
    git_blob: str | None = None  # the file's git object id (sha1 of "blob <size>\0" + content)
    optional: bool = False  # the task runs without it (a resource only some metrics use): pulled, not required in a root

    @field_validator("sha256")
    @classmethod
    def _hex(cls, v):
        if v is not None and not _SHA256.fullmatch(v):
            raise ValueError(f"sha256 {v!r}: expected 64 lowercase hex digits")
        return v

    @field_validator("git_blob")
    @classmethod
    def _blob(cls, v):
        if v is not None and not _GIT_BLOB.fullmatch(v):
            raise ValueError(f"git_blob {v!r}: expected 40 lowercase hex digits (git ls-tree's object id)")
        return v

    @field_validator("to", "path")
    @classmethod
    def _relative(cls, v):
        return inside_root(v) if v else v

    @property
    def dest(self) -> str:
        return self.to or self.path or self.url.rsplit("/", 1)[-1]


class DataOrigin(_Strict):
    kind: Literal["github", "hf", "url"]
    repo: str = ""  # github: owner/name; hf: the dataset id
    revision: str = ""  # a commit (pinned), or a branch or tag that `glotbench data lock` resolves
    config: str | None = None  # hf: the dataset config the task reads
    configs: list[str] = Field(default_factory=list)  # hf: several configs the task reads (one per subject)
    assumed: str = ""  # what about this layout was not read from the repository but assumed (data list shows it)
    splits: list[str] = Field(default_factory=list)  # hf: the splits the task reads
    to: str = ""  # hf: the folder under the data root holding the snapshot
    include: list[str] = Field(default_factory=list)  # hf: file patterns to fetch (default: all)
    page: str = ""  # kind url: the landing page (files without a url are fetched by hand from it)
    files: list[SourceFile] = Field(default_factory=list)

    @field_validator("to")
    @classmethod
    def _own_folder(cls, v):
        return inside_root(v) if v else v

    @model_validator(mode="after")
    def _complete(self):
        where = f"fetch ({self.kind})"
        if self.kind in ("github", "hf"):
            if not self.repo or (self.kind == "github" and self.repo.count("/") != 1):
                raise ValueError(f"{where}: 'repo' must name the repository (owner/name)")
            if not self.revision:
                raise ValueError(f"{where}: 'revision' is required (a commit, or a branch to lock)")
        if self.kind == "github":
            if not self.files:
                raise ValueError(f"{where}: 'files' must list the files the task reads")
            for f in self.files:
                if not f.path:
                    raise ValueError(f"{where}: every file needs its 'path' in the repository")
        if self.kind == "hf" and not self.to:
            raise ValueError(f"{where}: 'to' must name the folder under the data root")
        if self.kind == "url":
            if not self.files:
                raise ValueError(f"{where}: 'files' must list the files the task reads")
            for f in self.files:
                if not f.url and not self.page:
                    raise ValueError(f"{where}: a file without 'url' needs the origin's 'page'")
                if not f.to:
                    raise ValueError(f"{where}: every file needs 'to' (its path under the data root)")
        return self

    @property
    def pinned(self) -> bool:
        """The revision is a full commit id (a branch or tag can move)."""
        return self.kind == "url" or bool(COMMIT.fullmatch(self.revision))

    @property
    def manual(self) -> bool:
        """Some file has no download URL: a person fetches it from ``page``."""
        return self.kind == "url" and any(not f.url for f in self.files)

    def dests(self, required: bool = False) -> list[str]:
        """What this origin puts under the data root: files, or the hf snapshot folder
        (``required``: without the files marked ``optional``)."""
        return [self.to] if self.kind == "hf" else [f.dest for f in self.files if not (required and f.optional)]

    def label(self) -> str:
        if self.kind == "github":
            return f"github:{self.repo}@{self.revision}"
        if self.kind == "hf":
            cfg = f" ({self.config})" if self.config else (f" ({len(self.configs)} configs)" if self.configs else "")
            return f"hf:{self.repo}{cfg}@{self.revision}"
        return "url:" + (self.page or (self.files[0].url if self.files else ""))

    def layout(self) -> str:
        """What an hf origin's loader reads (configs, splits, files) and what of it is assumed."""
        if self.kind != "hf":
            return ""
        parts = []
        if self.configs:
            shown = ", ".join(self.configs[:3]) + (f", ... ({len(self.configs)})" if len(self.configs) > 3 else "")
            parts.append(f"configs {shown}")
        else:
            parts.append(f"config {self.config or 'default'}")
        parts.append(f"split {', '.join(self.splits) or '?'}")
        parts.append(f"files {', '.join(self.include)}" if self.include else "files: whole repository")
        if self.assumed:
            parts.append(f"assumed: {self.assumed}")
        return "; ".join(parts)

    def key(self) -> str:
        """Names this origin in a lock file (the revision is what the lock pins)."""
        if self.kind == "url":
            return "url:" + ",".join(f.url or f.dest for f in self.files)
        return f"{self.kind}:{self.repo}@{self.revision}" + (f"#{self.to}" if self.kind == "hf" else "")


def destination_clashes(specs) -> dict[str, str]:
    """Tasks whose destinations reach into another origin's: an hf origin replaces its ``to`` folder
    whole, so no other origin may put a file under it, nor may it sit inside another hf folder; two
    origins may not write the same file. ``specs``: ``{name: (spec, path)}``. Returns name -> one
    line naming the file and field (the first clash; the task that came second is the one named)."""
    owners: list[tuple[str, str, str, bool, object]] = []  # (dest, origin key, task, is a folder, path)
    out: dict[str, str] = {}
    for name, (spec, path) in specs.items():
        for i, o in enumerate(spec.source.fetch):
            for d in o.dests():
                folder = o.kind == "hf"
                for dest, key, other, other_folder, other_path in owners:
                    if key == o.key() and dest == d:
                        continue  # the same origin, shared by two tasks
                    clash = (d == dest or (other_folder and d.startswith(dest + "/"))
                             or (folder and dest.startswith(d + "/")))
                    if clash and name not in out:
                        out[name] = (f"{path}: field 'source.fetch.{i}.to': {d!r} reaches into "
                                     f"{dest!r}, which task {other} ({other_path}) fetches: give each origin "
                                     f"a folder of its own")
                owners.append((d, o.key(), name, folder, path))
    return out


def covers(origins: list[DataOrigin], rel: str) -> bool:
    """Some origin puts ``rel`` (a file, or a folder of files) under the data root."""
    rel = rel.strip("/")
    for o in origins:
        for d in o.dests():
            d = d.strip("/")
            if rel == d or rel.startswith(d + "/") or d.startswith(rel + "/"):
                return True
    return False
