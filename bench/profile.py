"""Where the time goes (``profile`` in bench.json): the phases of a write and of one batch,
the server's functions meanwhile (track_functions), and member_list's parts in the server.

The phases are Membership's own steps, called one by one: this is the only module that uses
Membership's internals (``phased``: the ``Membership(conn, key)`` constructor on a connection
of its own, ``conn.transaction()``, ``_prepare``, ``signer.sign_all``, ``_insert``), so that
a change to how Membership publishes is adapted here alone.
"""

from __future__ import annotations

import itertools
import time
from typing import Any

import psycopg

from buzz_signer.membership import Membership

from .common import BASELINE_INSERT, Bench, log, ms_since, new_pubkey, summary, text_loading

PHASES = ("begin+write", "prepare", "check+sign", "insert", "commit")
PHASES_NOTE = (
    "begin+write: BEGIN and the SQL write; prepare: buzz.prepare_membership_events run and its "
    "rows received (the serialized list included); check+sign: the signer's checks (sha256 of "
    "the list) and signatures, each verified; insert: buzz.insert_signed_events run (building "
    "the list's JSON and keeping it for member_list), its rows counted, and the signed events "
    "built in Python from the signed text (json.loads); commit: COMMIT, with the deferred "
    "commit guard and NOTIFY"
)


def phased(m: Membership, write_sql: str, params: tuple) -> list[float]:
    """One write as Membership does it (its own steps), each timed: PHASES, in ms."""
    t = [time.perf_counter_ns()]
    with m.conn.transaction():
        m.conn.execute(write_sql, params)
        t.append(time.perf_counter_ns())
        prepared = m._prepare()
        t.append(time.perf_counter_ns())
        sigs = m.signer.sign_all(prepared)
        t.append(time.perf_counter_ns())
        m._insert(prepared, sigs)
        t.append(time.perf_counter_ns())
    t.append(time.perf_counter_ns())
    return [(b - a) / 1e6 for a, b in itertools.pairwise(t)]


def tracked(b: Bench) -> Membership:
    """A Membership on a connection of its own that counts its functions' time.

    track_functions = pl, not all: with all, PostgreSQL stops inlining SQL functions (to
    count them), and the profile would time other plans than the writes run (a batch of
    10,000 took 8 s instead of 2, every event's text built by a call that is planned anew)."""
    conn = psycopg.connect(b.url, autocommit=True, options="-c track_functions=pl")
    return Membership(conn, b.key)


def profile(b: Bench) -> None:
    """The phases of writes at the smallest and largest sizes, the server's functions
    meanwhile, one baseline transaction (timed in its two steps) before each write, and
    member_list's parts at the largest size."""
    n = b.plan.profile_writes
    prof: dict[str, Any] = {"writes": {}, "phases_note": PHASES_NOTE}
    base: list[tuple[float, float]] = []
    for size in (b.plan.sizes[0], b.plan.sizes[-1]):
        log(f"where the time goes at {size:,} members ({n} writes)")
        cid = b.communities[size]
        before = function_stats(b.su)
        m = tracked(b)
        phases: list[list[float]] = []
        pending = None
        for _ in range(n + 2):  # the first two: warm-up
            if pending is None:
                pending = new_pubkey()
                call = ("SELECT buzz.add_relay_member(%s, %s)", (cid, pending))
            else:
                call = ("SELECT buzz.remove_relay_member(%s, %s)", (cid, pending))
                pending = None
            base.append(baseline_phased(b))
            phases.append(phased(m, *call))
        m.close()
        prof["writes"][size] = {
            "writes": n,
            "phases_ms": {k: summary([p[j] for p in phases[2:]]) for j, k in enumerate(PHASES)},
            "server_functions_ms": function_stats_after(
                b.su, before, "prepare_membership_events", n + 2
            ),
        }
    prof["baseline_phases_ms"] = {
        "begin+insert": summary([x[0] for x in base]),
        "commit": summary([x[1] for x in base]),
    }
    prof["member_list_parts_ms"] = list_parts(b, b.communities[b.plan.sizes[-1]])
    prof["member_list_parts_size"] = b.plan.sizes[-1]
    b.details["profile"] = prof


def baseline_phased(b: Bench) -> tuple[float, float]:
    """The baseline's two steps, timed: BEGIN + INSERT, then COMMIT (ms)."""
    t0 = time.perf_counter_ns()
    with b.base.transaction():
        b.base.execute(BASELINE_INSERT, b.baseline_row())
        t1 = time.perf_counter_ns()
    return (t1 - t0) / 1e6, ms_since(t1)


def batch_profile(b: Bench) -> None:
    """One batch of plan.batch_size adds: its phases and the server's functions."""
    size = b.plan.batch_size
    log(f"where the time goes in one batch of {size:,}")
    cid = b.new_community(1)
    pubkeys = [new_pubkey() for _ in range(size)]
    before = function_stats(b.su)
    m = tracked(b)
    phases = phased(m, "SELECT buzz.add_relay_members(%s, %s::text[])", (cid, pubkeys))
    m.close()
    b.details["profile"]["batch"] = {
        "size": size,
        "phases_ms": dict(zip(PHASES, phases, strict=True)),
        "server_functions_ms": function_stats_after(b.su, before, "prepare_membership_events", 1),
    }


def function_stats(su: psycopg.Connection[Any]) -> dict[str, tuple[int, float, float]]:
    su.execute("SELECT pg_stat_clear_snapshot()")
    rows = su.execute(
        "SELECT schemaname || '.' || funcname, calls, total_time, self_time"
        " FROM pg_stat_user_functions"
    ).fetchall()
    return {r[0]: (r[1], r[2], r[3]) for r in rows}


def function_stats_after(
    su: psycopg.Connection[Any],
    before: dict[str, tuple[int, float, float]],
    marker: str,
    calls: int,
) -> list[dict[str, Any]]:
    """Each function's calls, total and self time per write since `before`, costliest first."""
    # A backend's function counts reach the shared statistics when it exits.
    deadline = time.monotonic() + 3
    while True:
        after = function_stats(su)
        got = after.get(f"buzz.{marker}", (0, 0, 0))[0] - before.get(f"buzz.{marker}", (0,))[0]
        if got >= calls or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    out = []
    for name, (c, total, own) in after.items():
        c0, t0, s0 = before.get(name, (0, 0.0, 0.0))
        if c > c0:
            out.append(
                {
                    "function": name,
                    "calls_per_write": (c - c0) / calls,
                    "total_ms": (total - t0) / calls,
                    "self_ms": (own - s0) / calls,
                }
            )
    return sorted(out, key=lambda f: -f["self_ms"])


def list_parts(b: Bench, cid: Any) -> dict[str, Any]:
    """member_list's parts in the server (each returning a few bytes only), interleaved
    with the whole fetch as text, so that all see the same load."""
    parts = {
        "concat pieces (list_tags)": "SELECT octet_length(buzz_private.list_tags(%s))",
        "served copy written out as text, not sent": (
            "SELECT octet_length(buzz.member_list(%s)::text)"
        ),
        "built from header and pieces (no copy kept), written out, not sent": (
            "SELECT octet_length(buzz_private.list_event(%s)::text)"
        ),
        "whole fetch as text": "SELECT buzz.member_list(%s)",
    }
    with text_loading(psycopg.connect(b.url, autocommit=True)) as conn:
        xs: dict[str, list[float]] = {label: [] for label in parts}
        for i in range(max(5, b.plan.profile_writes) + 3):  # the first three: warm-up
            for label, q in parts.items():
                t0 = time.perf_counter_ns()
                conn.execute(q, (cid,)).fetchone()
                if i >= 3:
                    xs[label].append(ms_since(t0))
    return {label: summary(v) for label, v in xs.items()}
