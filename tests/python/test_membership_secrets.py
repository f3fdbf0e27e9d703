"""The relay's secret key stays in the signing process: not in what the Python layer returns or
raises, not in anything sent to the database, not in any table, not in the server log."""

from __future__ import annotations

import datetime as dt
import traceback
import uuid
from pathlib import Path
from typing import Any

import psycopg
import pytest
from fixtures_membership import TamperingConnection, new_host, new_pubkey
from psycopg import sql

from buzz_signer.errors import BuzzError, translated
from buzz_signer.keys import RelayKey
from buzz_signer.membership import Membership
from buzz_signer.signer import RefusedToSign

pytest_plugins = ("fixtures_membership",)


def _texts_of_exception(exc: BaseException) -> list[str]:
    texts = [str(exc), repr(exc), "".join(traceback.format_exception(exc))]
    texts += [str(a) for a in exc.args]
    if isinstance(exc, BuzzError):
        texts += [str(exc.hint), str(exc.sqlstate)]
    cause = exc.__cause__
    if isinstance(cause, psycopg.Error):
        d = cause.diag
        texts += [
            str(cause),
            repr(cause),
            str(d.message_primary),
            str(d.message_detail),
            str(d.message_hint),
            str(d.context),
            str(d.internal_query),
        ]
    return texts


def _server_log(admin_url: str) -> Path | None:
    """The log file of the project's local cluster, when that is the server under test."""
    with psycopg.connect(admin_url) as c:
        data = Path(c.execute("SHOW data_directory").fetchone()[0])
    log = data.parent / "log" / "postgresql.log"
    return log if log.is_file() else None


def test_relay_secret_never_leaks(admin_url, db_url, monkeypatch):
    key, new_key = RelayKey.generate(), RelayKey.generate()
    needles = [s.lower() for k in (key, new_key) for s in (k.secret_hex(), k.nsec())]
    log = _server_log(admin_url)
    log_start = log.stat().st_size if log else 0

    # Everything sent to the server, with its parameters.
    sent: list[str] = []
    real_execute = psycopg.Cursor.execute

    def recording_execute(self, query, params=None, **kw):
        sent.append(f"{query!r} {params!r}")
        return real_execute(self, query, params, **kw)

    monkeypatch.setattr(psycopg.Cursor, "execute", recording_execute)

    texts: list[str] = []
    failures: list[BaseException] = []

    def expect_failure(call: Any) -> None:
        try:
            call()
        except (BuzzError, RefusedToSign, psycopg.Error) as exc:
            failures.append(exc)
        else:
            pytest.fail("the call was expected to fail")

    # log_statement = all: every statement and its bound parameters go to the server log.
    with Membership.connect(db_url, key, options="-c log_statement=all") as m:
        texts += [repr(m), str(m), repr(m.signer), str(m.signer), repr(m.conn)]
        owner, a, b = new_pubkey(), new_pubkey(), new_pubkey()
        w = m.create_community(new_host(), owner)
        cid = w.details["community_id"]
        writes = [w]
        inv = m.create_relay_invite(cid, owner, max_uses=3, ttl=dt.timedelta(hours=1))
        texts += [repr(inv), str(inv)]
        writes += [
            m.add_relay_member(cid, a, "admin", owner),
            m.add_relay_members(cid, [b, new_pubkey()]),
            m.claim_relay_membership(cid, new_pubkey(), "v1"),
            m.claim_relay_invite(cid, inv.code, new_pubkey()),
            m.claim_relay_invite(cid, "nope", new_pubkey()),
            m.remove_relay_member(cid, b),
            m.remove_relay_member_if_role(cid, a, "member"),
            m.update_relay_member_role(cid, a, "member"),
            m.bootstrap_owner(cid, a),
            m.transfer_ownership(cid, owner),
            m.republish_member_list(cid),
        ]
        other = m.create_community(new_host(), new_pubkey()).details["community_id"]
        m.allowlist_add(other, new_pubkey())
        writes.append(m.backfill_from_allowlist(other))
        with m.transaction() as tx:
            tx.add_relay_member(cid, new_pubkey())
            tx.add_relay_member(cid, new_pubkey(), "admin")
        texts += [repr(tx.events), repr(tx.lists)]

        # Failing writes, and what they raise.
        expect_failure(lambda: m.add_relay_member(cid, "not a pubkey"))
        expect_failure(lambda: m.add_relay_member(uuid.uuid4(), new_pubkey()))
        expect_failure(lambda: m.create_community("bad host/", new_pubkey()))
        assert m.archive_community(other) == "archived"
        expect_failure(lambda: m.add_relay_member(other, new_pubkey()))
        with monkeypatch.context() as mp:
            mp.setattr(m.signer, "sign_all", lambda events: ["zz" * 64 for _ in events])
            expect_failure(lambda: m.add_relay_member(cid, new_pubkey()))
        # The signer refuses a prepared event that is not what its id says.
        real_conn = m.conn
        m.conn = TamperingConnection(
            real_conn, lambda rows: [(*rows[0][:4], rows[0][4].replace('"-"', '"x"')), *rows[1:]]
        )
        try:
            expect_failure(lambda: m.add_relay_member(cid, new_pubkey()))
        finally:
            m.conn = real_conn
        assert isinstance(failures[-1], RefusedToSign)

        def unsigned() -> None:
            with translated(), m.conn.transaction():
                m.conn.execute("SELECT buzz.add_relay_member(%s, %s)", (cid, new_pubkey()))

        expect_failure(unsigned)
        m.conn.isolation_level = psycopg.IsolationLevel.SERIALIZABLE
        expect_failure(lambda: m.add_relay_member(cid, new_pubkey()))
        m.conn.isolation_level = None
        with Membership.connect(db_url, new_key) as m2:
            expect_failure(lambda: m2.add_relay_member(cid, new_pubkey()))  # BZKEY
            expect_failure(lambda: m.rotate_relay_key(new_key.pubkey))  # signed by the old key
            while (r := m2.rotate_relay_key(new_key.pubkey)).outcome:
                writes.append(r)
            writes.append(m2.add_relay_member(cid, new_pubkey()))
            writes.append(m2.delete_community(other))
            texts += [repr(m2), str(m2)]
        expect_failure(lambda: m.add_relay_member(cid, new_pubkey()))  # old key: BZKEY

    assert len(failures) == 11
    for w in writes:
        texts += [repr(w), str(w)]
    for exc in failures:
        texts += _texts_of_exception(exc)
    for i, text in enumerate(texts + sent):
        low = text.lower()
        assert not any(n in low for n in needles), f"secret in text {i}"

    # No table, in any schema of the database, holds it (rows as text cover every column).
    with psycopg.connect(db_url) as c:
        tables = c.execute(
            "SELECT table_schema, table_name FROM information_schema.tables"
            " WHERE table_schema NOT IN ('pg_catalog', 'information_schema')"
        ).fetchall()
        assert ("buzz_private", "relay_members") in tables
        assert ("buzz_private", "member_lists") in tables
        for schema, table in tables:
            rows = c.execute(
                sql.SQL("SELECT t::text FROM {}.{} t").format(
                    sql.Identifier(schema), sql.Identifier(table)
                )
            ).fetchall()
            for (row,) in rows:
                assert not any(n in row.lower() for n in needles), f"secret in {schema}.{table}"
        # The public keys, by contrast, are there: the scan does look at the right place.
        assert c.execute("SELECT pubkey FROM buzz_private.relay_key").fetchone() == (
            new_key.pubkey,
        )

    if log is not None:
        with log.open("rb") as f:
            f.seek(log_start)
            logged = f.read().decode("utf-8", "replace").lower()
        assert "buzz.prepare_membership_events" in logged  # log_statement did log
        assert not any(n in logged for n in needles), "secret in the server log"
