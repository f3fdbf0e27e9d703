"""buzz_private.bip340_verify under the server: fuzzed, and agreeing with coincurve.

The fuzz run makes 280,000 calls in one backend, in two rounds of: 100,000 with the right
sizes and random bytes; 20,000 with random sizes (0 to 100 bytes each; the wrong ones are
22023, each caught in its own subtransaction); 10,000 real signatures with one random bit
flipped, each beside the whole one. The backend must survive every call and answer as BIP-340
says, and its RSS must not grow over the second round. The pgTAP suite test_bip340_verify.sql
runs BIP-340's own vectors.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

import psycopg
import pytest

from buzz_signer.keys import RelayKey
from buzz_signer.nostr import verify_signature

# RSS moves by up to about 1.5 MB with the allocator's trimming (measured here); a leak of
# 32 bytes a call over the 140,000 calls of a round is 4.5 MB and fails.
MAX_RSS_GROWTH_KB = 4096


def backend_rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


RIGHT_SIZES = """
SELECT count(*) FILTER (WHERE buzz_private.bip340_verify(
           gen_random_bytes(64), gen_random_bytes(32), gen_random_bytes(32)))
FROM generate_series(1, :calls)
"""

RANDOM_SIZES = """
DO $$
DECLARE
    v_refused integer := 0;
    v_answered integer := 0;
BEGIN
    FOR i IN 1 .. :calls LOOP
        BEGIN
            PERFORM buzz_private.bip340_verify(
                substr(gen_random_bytes(100), 1, (random() * 100)::int),
                substr(gen_random_bytes(100), 1, (random() * 100)::int),
                substr(gen_random_bytes(100), 1, (random() * 100)::int));
            v_answered := v_answered + 1;
        EXCEPTION WHEN invalid_parameter_value THEN
            v_refused := v_refused + 1;
        END;
    END LOOP;
    RAISE NOTICE 'answered % refused %', v_answered, v_refused;
END
$$
"""


@pytest.fixture
def fuzz_conn(db_url: str):
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS pgcrypto")  # gen_random_bytes
        yield conn


def run(conn: psycopg.Connection, sql: str, calls: int) -> psycopg.Cursor:
    return conn.execute(sql.replace(":calls", str(calls)))


def fuzz_round(conn: psycopg.Connection, notices: list[str], key: RelayKey) -> int:
    """One round of the three kinds of calls; the number of calls made."""
    (valid,) = run(conn, RIGHT_SIZES, 100_000).fetchone()
    assert valid == 0  # random bytes are never a signature
    run(conn, RANDOM_SIZES, 20_000)
    answered, refused = (int(x) for x in notices[-1].split()[1::2])
    assert answered + refused == 20_000 and refused > 18_000
    # Real signatures, one bit flipped at random: each false, each whole one true.
    pubkey = bytes.fromhex(key.pubkey)
    with conn.cursor() as cur:
        for _ in range(10_000):
            msg = os.urandom(32)
            sig = bytes.fromhex(key.sign(msg.hex()))
            spoilt = bytearray(sig)
            spoilt[secrets.randbelow(64)] ^= 1 << secrets.randbelow(8)
            cur.execute(
                "SELECT buzz_private.bip340_verify(%s, %s, %s),"
                " buzz_private.bip340_verify(%s, %s, %s)",
                (bytes(spoilt), msg, pubkey, sig, msg, pubkey),
            )
            assert cur.fetchone() == (False, True)
    return 100_000 + 20_000 + 20_000


def test_fuzzing_the_c_function_neither_crashes_nor_leaks(fuzz_conn: psycopg.Connection) -> None:
    conn = fuzz_conn
    pid = conn.info.backend_pid
    notices: list[str] = []
    conn.add_notice_handler(lambda d: notices.append(d.message_primary or ""))
    key = RelayKey.generate()
    # The first round raises the backend's high-water marks (about 1.5 MB here, once); the
    # second must leave RSS where the first did.
    calls = fuzz_round(conn, notices, key)
    before = backend_rss_kb(pid)
    calls += fuzz_round(conn, notices, key)
    after = backend_rss_kb(pid)
    assert conn.execute("SELECT pg_backend_pid()").fetchone() == (pid,), "the backend restarted"
    assert after - before <= MAX_RSS_GROWTH_KB, (before, after)
    print(f"\nbip340_verify fuzz: {calls:,} calls, backend RSS {before} -> {after} kB (2nd round)")


@pytest.mark.parametrize("case", ["valid", "other_key", "other_msg", "random"])
def test_the_server_agrees_with_coincurve(fuzz_conn: psycopg.Connection, case: str) -> None:
    key, other = RelayKey.generate(), RelayKey.generate()
    for _ in range(50):
        msg = os.urandom(32).hex()
        if case == "valid":
            sig = key.sign(msg)
        elif case == "other_key":
            sig = other.sign(msg)
        elif case == "other_msg":
            sig = key.sign(os.urandom(32).hex())
        else:
            sig = os.urandom(64).hex()
        (server,) = fuzz_conn.execute(
            "SELECT buzz_private.bip340_verify(decode(%s, 'hex'), decode(%s, 'hex'), decode(%s, 'hex'))",
            (sig, msg, key.pubkey),
        ).fetchone()
        assert server is verify_signature(key.pubkey, sig, msg) is (case == "valid")
