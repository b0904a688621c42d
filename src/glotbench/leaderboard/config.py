"""The leaderboard's settings: limits, rounding and security knobs (``glotbench serve`` options)."""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_MAX_UPLOAD_BYTES = 5 * 1024 * 1024


@dataclass
class Settings:
    max_upload_bytes: int = DEFAULT_MAX_UPLOAD_BYTES
    # submissions per user and task (the SuperGLUE/EvalAI convention); 0 switches a limit off
    max_per_day: int = 5
    max_per_month: int = 30
    score_digits: int = 3  # scores are shown (pages, API, export) rounded to this many decimals
    body_timeout_s: float = 30.0  # a request body not complete by then is answered 408
    max_json_depth: int = 32
    max_int_digits: int = 64
    session_days: int = 14
    login_max_failures: int = 5  # consecutive wrong passwords before the account is locked
    login_lockout_s: int = 900
    https_only: bool = False
