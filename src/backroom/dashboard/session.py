"""Signed session cookies and the CSRF tokens bound to them.

A session cookie holds the SHA-256 digest of the API key a person logged in with
(never the key) and when they did, signed with HMAC-SHA256 under the server's session
secret. Every request looks the digest up again, so a revoked key ends its sessions at
once. A form's CSRF token is an HMAC of the session cookie under the same secret: only
a page served to that session can carry it, and it dies with the session.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass

SESSION_COOKIE = "backroom_session"
LOGIN_COOKIE = "backroom_login"
SESSION_MS = 12 * 3_600_000
"""A session lasts twelve hours from login."""

_VERSION = "v1"


@dataclass(frozen=True, slots=True)
class Session:
    """A logged-in person: the digest of their key and when they logged in."""

    key_hash: str
    issued_at: int


class SessionSigner:
    """Signs and checks session cookies and CSRF tokens under one secret."""

    def __init__(self, secret: str) -> None:
        self._secret = secret.encode()

    def _mac(self, purpose: str, text: str) -> str:
        message = f"{purpose}|{text}".encode()
        return hmac.new(self._secret, message, hashlib.sha256).hexdigest()

    def cookie(self, session: Session) -> str:
        """The cookie value for `session`."""
        body = f"{_VERSION}.{session.key_hash}.{session.issued_at}"
        return f"{body}.{self._mac('session', body)}"

    def session(self, cookie: str | None, now: int) -> Session | None:
        """The session a cookie holds, or None if it is missing, forged or expired."""
        if not cookie:
            return None
        body, _, signature = cookie.rpartition(".")
        if not hmac.compare_digest(signature, self._mac("session", body)):
            return None
        version, key_hash, issued = [*body.split("."), "", "", ""][:3]
        if version != _VERSION or not issued.isdigit():
            return None
        if not 0 <= now - int(issued) < SESSION_MS:
            return None
        return Session(key_hash, int(issued))

    def csrf_token(self, cookie: str) -> str:
        """The CSRF token of forms served to the session with this cookie."""
        return self._mac("csrf", cookie)

    def csrf_ok(self, cookie: str | None, token: str | None) -> bool:
        """Whether `token` is the CSRF token of the session with `cookie`."""
        if not cookie or not token:
            return False
        return hmac.compare_digest(token, self.csrf_token(cookie))
