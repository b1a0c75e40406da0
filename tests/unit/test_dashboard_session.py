"""Dashboard sessions: a signed cookie that expires, and CSRF tokens bound to it."""

from __future__ import annotations

from backroom.dashboard.session import SESSION_MS, Session, SessionSigner

SIGNER = SessionSigner("secret-one")
SESSION = Session("ab" * 32, issued_at=1_000)


def test_a_cookie_gives_back_its_session_until_it_expires() -> None:
    cookie = SIGNER.cookie(SESSION)

    assert SIGNER.session(cookie, 1_000) == SESSION
    assert SIGNER.session(cookie, 1_000 + SESSION_MS - 1) == SESSION
    assert SIGNER.session(cookie, 1_000 + SESSION_MS) is None
    assert SIGNER.session(cookie, 999) is None  # issued in the future: not trusted


def test_a_changed_or_foreign_cookie_is_refused() -> None:
    cookie = SIGNER.cookie(SESSION)
    other_key = cookie.replace("ab", "cd", 1)

    assert SIGNER.session(other_key, 1_000) is None
    assert SessionSigner("secret-two").session(cookie, 1_000) is None
    assert SIGNER.session("v1.nonsense", 1_000) is None
    assert SIGNER.session(None, 1_000) is None


def test_a_csrf_token_belongs_to_one_session() -> None:
    cookie = SIGNER.cookie(SESSION)
    other = SIGNER.cookie(Session("ab" * 32, issued_at=2_000))
    token = SIGNER.csrf_token(cookie)

    assert SIGNER.csrf_ok(cookie, token)
    assert not SIGNER.csrf_ok(other, token)
    assert not SIGNER.csrf_ok(cookie, "")
    assert not SIGNER.csrf_ok(None, token)
