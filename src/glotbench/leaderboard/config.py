"""The leaderboard's settings: limits, rounding and security knobs (``glotbench serve`` options)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

DEFAULT_MAX_UPLOAD_BYTES = 5 * 1024 * 1024


@dataclass
class Settings:
    max_upload_bytes: int = DEFAULT_MAX_UPLOAD_BYTES
    # submissions per user and task (the SuperGLUE/EvalAI convention); 0 switches a limit off
    max_per_day: int = 5
    max_per_month: int = 30
    # uploads per network address and task per day, over all accounts (None: 3 x max_per_day)
    max_per_address_day: int | None = None
    # new self-registered accounts (0 switches a limit off); see docs/leaderboard.md for the bound on probing
    register_per_address_hour: int = 3
    register_per_address_day: int = 10
    register_per_hour: int = 60  # over the whole site
    approve_accounts: bool = False  # new accounts upload only after `glotbench admin approve-user`
    score_digits: int = 3  # scores are shown (pages, API, export) rounded to this many decimals
    body_timeout_s: float = 30.0  # a request body not complete by then is answered 408
    max_json_depth: int = 32
    max_int_digits: int = 64
    parse_budget_s: float = 3.0  # seconds one request may spend parsing JSON before a 422
    session_days: int = 14
    login_max_failures: int = 5  # consecutive wrong passwords before the account is locked
    login_lockout_s: int = 900
    https_only: bool = False
    # addresses or networks (CIDR) of reverse proxies whose X-Forwarded-For is read; none by default,
    # loopback included: a local process could otherwise claim any address (docs/leaderboard.md)
    trusted_proxies: tuple[str, ...] = ()

    def trusted_networks(self) -> tuple:
        return _networks(tuple(self.trusted_proxies))

    def address_limit(self) -> int:
        if self.max_per_address_day is not None:
            return self.max_per_address_day
        return 3 * self.max_per_day


@lru_cache(maxsize=8)
def _networks(proxies: tuple[str, ...]) -> tuple:
    """The trusted proxies as networks; a value that is no address or network raises ValueError."""
    import ipaddress

    return tuple(ipaddress.ip_network(p.strip(), strict=False) for p in proxies if p.strip())
