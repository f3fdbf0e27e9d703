"""The buzz_bip340 extension's helpers for the write path: nip01_json, the kept list tags and
buzz_bip340.retained_memory, each under the server (the BIP-340 functions have their own
suite, test_bip340_extension.py)."""

from __future__ import annotations

import os
import secrets

import psycopg
import pytest
from psycopg.conninfo import make_conninfo
from psycopg.types.string import TextLoader


def test_nip01_json_types_its_text_unchanged(conn: psycopg.Connection) -> None:
    conn.adapters.register_loader("json", TextLoader)
    text = '{"id":"ab","tags":[["-"],["member","cd","owner"]],"content":""}'
    row = conn.execute(
        "SELECT buzz_private.nip01_json(%s), pg_typeof(buzz_private.nip01_json(%s))", (text, text)
    ).fetchone()
    assert row == (text, "json")


class RolledBack(Exception):
    pass


def test_kept_list_tags_last_to_the_end_of_their_transaction(db_url: str) -> None:
    list_id, other_id = secrets.token_hex(32), secrets.token_hex(32)
    tags = '[["-"],["member","' + secrets.token_hex(32) + '","owner"]]' + "x" * 100_000
    with psycopg.connect(db_url) as conn:
        kept = "SELECT buzz_private.kept_list_tags(%s)"
        conn.execute("SELECT buzz_private.keep_list_tags(%s, %s)", (list_id, tags))
        assert conn.execute(kept, (list_id,)).fetchone() == (tags,)
        assert conn.execute(kept, (other_id,)).fetchone() == (None,)
        # A savepoint rolled back leaves what was kept in it: it is that id's text anyway.
        with pytest.raises(RolledBack), conn.transaction():
            conn.execute("SELECT buzz_private.keep_list_tags(%s, %s)", (other_id, "[]"))
            raise RolledBack
        assert conn.execute(kept, (other_id,)).fetchone() == ("[]",)
        assert conn.execute(kept, (list_id,)).fetchone() == (tags,)
        conn.commit()
        assert conn.execute(kept, (list_id,)).fetchone() == (None,)
        conn.execute("SELECT buzz_private.keep_list_tags(%s, %s)", (list_id, tags))
        conn.rollback()
        assert conn.execute(kept, (list_id,)).fetchone() == (None,)
        with pytest.raises(psycopg.errors.InvalidParameterValue, match="64 hexadecimal"):
            conn.execute(kept, ("abc",))


def test_keeping_stops_at_32_mb_a_transaction(db_url: str) -> None:
    with psycopg.connect(db_url) as conn:
        ids = [secrets.token_hex(32) for _ in range(5)]
        big = "t" * (10 * 1024 * 1024)
        for i in ids:
            conn.execute("SELECT buzz_private.keep_list_tags(%s, %s)", (i, big))
        found = [
            conn.execute("SELECT buzz_private.kept_list_tags(%s) IS NOT NULL", (i,)).fetchone()[0]
            for i in ids
        ]
        assert found == [True, True, True, False, False]


def test_only_buzz_owner_may_call_the_helpers(db_url: str) -> None:
    role = "helpers_" + secrets.token_hex(4)
    with psycopg.connect(db_url, autocommit=True) as su:
        su.execute(f"CREATE ROLE {role} LOGIN IN ROLE buzz_writer")
        try:
            with psycopg.connect(make_conninfo(db_url, user=role), autocommit=True) as w:
                for sql in (
                    "SELECT buzz_private.nip01_json('{}')",
                    "SELECT buzz_private.kept_list_tags(repeat('a', 64))",
                    "SELECT buzz_private.keep_list_tags(repeat('a', 64), '[]')",
                ):
                    with pytest.raises(psycopg.errors.InsufficientPrivilege):
                        w.execute(sql)
            su.execute("SELECT buzz_private.nip01_json('{}')")  # loads the library
            assert su.execute(
                "SELECT context, unit, boot_val FROM pg_settings"
                " WHERE name = 'buzz_bip340.retained_memory'"
            ).fetchone() == ("superuser", "kB", "16384")
        finally:
            su.execute(f"DROP ROLE {role}")


def minor_faults(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[7])


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="needs /proc")
def test_retained_memory_spares_a_backend_its_page_faults(db_url: str) -> None:
    """Texts of 600 kB, built and freed again and again: with glibc's defaults each one is
    mapped afresh (hundreds of page faults); with the memory kept, nearly none. Each setting
    in a backend of its own: memory already kept stays in use whatever the setting becomes."""
    kept = faults_of_20_texts(db_url, [])
    returned = faults_of_20_texts(db_url, ["SET buzz_bip340.retained_memory = 0"])
    assert returned > 20 * 100 > 20 * kept, (returned, kept)


def faults_of_20_texts(db_url: str, settings: list[str]) -> int:
    with psycopg.connect(db_url, autocommit=True) as conn:
        pid = conn.info.backend_pid
        if not os.path.exists(f"/proc/{pid}/stat"):
            pytest.skip("the server's processes are not visible here")
        conn.execute("SELECT buzz_private.nip01_json('{}')")  # loads the library
        for setting in settings:
            conn.execute(setting)
        text = "SELECT length(repeat('x', 600000) || 'y')"
        conn.execute(text)
        before = minor_faults(pid)
        for _ in range(20):
            conn.execute(text)
        return minor_faults(pid) - before
