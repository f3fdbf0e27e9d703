"""What the database's signature check costs: one ``bip340_verify`` (``verify_ms``), what
it adds to a write (``verify_adds_ms@write``) and to the batch (``verify_batch_ms``,
``verify_batch_one_thread_ms``)."""

from __future__ import annotations

import os
import secrets
import time

from .common import Bench, log, ms_since, summary


def verification(b: Bench) -> None:
    """Measured alone in the server: N verifications of a real signature in one query. A
    write at any number of members verifies two signatures (its list, whose id is 32 bytes
    whatever its size, and one 8000); a batch of N adds verifies N + 1."""
    n, p = 2000, b.plan
    log(f"bip340_verify, {n} calls a query")
    msg = secrets.token_hex(32)
    sig = b.key.sign(msg)
    # The signature is made to depend on g (its first 64 bytes are the same): IMMUTABLE
    # with constant arguments, the call would be folded into one at plan time.
    query = (
        "SELECT count(*) FILTER (WHERE buzz_private.bip340_verify("
        "substr(decode(%s, 'hex') || int4send(g), 1, 64), decode(%s, 'hex'), decode(%s, 'hex')))"
        " FROM generate_series(1, %s) g"
    )
    samples = []
    for i in range(8):
        t0 = time.perf_counter_ns()
        (valid,) = b.su.execute(query, (sig, msg, b.key.pubkey, n)).fetchone()
        if valid != n:
            raise RuntimeError("a valid signature did not verify")
        if i >= 3:
            samples.append(ms_since(t0) / n)
    b.put("verify_ms", "one bip340_verify in the server", "ms", summary(samples))
    b.put(
        "verify_adds_ms@write",
        "verification added to a write at any size (2 sigs)",
        "ms",
        {k: v * 2 if k != "n" else v for k, v in summary(samples).items()},
    )

    # The batch's own check: bip340_first_invalid over N + 1 signatures, in threads, as
    # insert_signed_events calls it; and with buzz_bip340.max_threads = 1 for comparison.
    count = p.batch_size + 1
    log(f"bip340_first_invalid over {count:,} signatures, with and without threads")
    msgs = [os.urandom(32) for _ in range(count)]
    sigs = [bytes.fromhex(b.key.sign(m.hex())) for m in msgs]
    batch_query = "SELECT buzz_private.bip340_first_invalid(%s::bytea[], %s::bytea[], %s)"
    pubkey = bytes.fromhex(b.key.pubkey)
    timed: dict[str, list[float]] = {"0": [], "1": []}
    for i in range(6):
        for threads, runs in timed.items():
            b.su.execute("SELECT set_config('buzz_bip340.max_threads', %s, false)", (threads,))
            t0 = time.perf_counter_ns()
            (bad,) = b.su.execute(batch_query, (sigs, msgs, pubkey)).fetchone()
            if bad != 0:
                raise RuntimeError("a valid signature did not verify")
            if i >= 1:  # the first round warms up
                runs.append(ms_since(t0))
    b.su.execute("RESET buzz_bip340.max_threads")
    b.put(
        "verify_batch_ms",
        f"verification added to the batch of {p.batch_size:,} ({count:,} sigs, threads)",
        "ms",
        summary(timed["0"]),
    )
    b.put(
        "verify_batch_one_thread_ms",
        "... the same in one thread (buzz_bip340.max_threads = 1)",
        "ms",
        summary(timed["1"]),
    )
