"""Roles (SPEC §6): what defined roles held by every member add to a write and to the list,
and what the role writes themselves cost, at the largest size.

A second community of that size is built with two defined roles held by every member (setup,
not timed). The same writes (add a new pubkey, then remove it) alternate between it and the
community without roles, so both see the same load: ``write_ms_roles@N`` against
``write_ms_plain@N``, and likewise ``member_list`` as text (with each list's size in bytes). ``assign_ms@N`` times
``assign_role`` / ``unassign_role`` of one member (a list rewrite, no 8000/8001), and
``define_role_ms`` a definition-only change (its 33534, no list).
"""

from __future__ import annotations

import itertools
import time

import psycopg

from .common import Alternator, Bench, log, ms_since, summary, text_loading

ROLES = ("moderator", "verified")


def _community_with_roles(b: Bench, size: int) -> object:
    cid = b.new_community(size)
    with b.m.transaction() as tx:
        for role in ROLES:
            tx.define_role(cid, role, role.title())
        pubkeys = [
            r[0]
            for r in b.su.execute("SELECT pubkey FROM buzz.relay_members(%s)", (cid,)).fetchall()
        ]
        for pk in pubkeys:
            for role in ROLES:
                tx.assign_role(cid, pk, role)
    b.su.execute("ANALYZE buzz_private.relay_members")
    return cid


def roles(b: Bench) -> None:
    size = b.plan.sizes[-1]
    reps = b.plan.write_reps[-1]
    log(f"roles at {size:,} members (every member holding {len(ROLES)} defined roles)")
    with_roles = _community_with_roles(b, size)
    plain = Alternator(b.m, b.communities[size])
    roled = Alternator(b.m, with_roles)
    for _ in range(b.plan.warmup[-1]):
        plain.step()
        roled.step()
    plain_ms: list[float] = []
    roles_ms: list[float] = []
    for _ in range(reps):
        plain_ms.append(plain.timed())
        roles_ms.append(roled.timed())
    label = f"write at {size:,} members"
    b.put(f"write_ms_plain@{size}", f"{label}, no defined roles (paired)", "ms", summary(plain_ms))
    b.put(
        f"write_ms_roles@{size}",
        f"{label}, each holding {len(ROLES)} roles",
        "ms",
        summary(roles_ms),
    )

    q = "SELECT buzz.member_list(%s)"
    list_plain: list[float] = []
    list_roles: list[float] = []
    with text_loading(psycopg.connect(b.url, autocommit=True)) as conn:
        plain_bytes, roles_bytes = (
            len(conn.execute(q, (cid,)).fetchone()[0].encode())
            for cid in (b.communities[size], with_roles)
        )
        for _ in range(b.plan.list_reps[-1]):
            for cid, out in ((b.communities[size], list_plain), (with_roles, list_roles)):
                t0 = time.perf_counter_ns()
                conn.execute(q, (cid,)).fetchone()
                out.append(ms_since(t0))
    b.put(
        f"member_list_text_ms_plain@{size}",
        f"member_list at {size:,}, no roles (paired)",
        "ms",
        summary(list_plain),
        list_bytes=plain_bytes,
    )
    b.put(
        f"member_list_text_ms_roles@{size}",
        f"member_list at {size:,}, with roles",
        "ms",
        summary(list_roles),
        list_bytes=roles_bytes,
    )

    member = b.su.execute(
        "SELECT pubkey FROM buzz.relay_members(%s) LIMIT 1", (with_roles,)
    ).fetchone()[0]
    assign: list[float] = []
    for i in range(reps):
        call = b.m.unassign_role if i % 2 == 0 else b.m.assign_role
        t0 = time.perf_counter_ns()
        w = call(with_roles, member, ROLES[0])
        assign.append(ms_since(t0))
        if w.outcome not in ("assigned", "unassigned"):
            raise RuntimeError(f"{call.__name__} answered {w.outcome!r}")
    b.put(
        f"assign_ms@{size}",
        f"assign_role / unassign_role at {size:,} members",
        "ms",
        summary(assign),
    )

    define: list[float] = []
    labels = itertools.cycle(("Moderators", "Moderator"))  # it was defined as "Moderator"
    for _ in range(reps):
        t0 = time.perf_counter_ns()
        w = b.m.define_role(with_roles, ROLES[0], next(labels))
        define.append(ms_since(t0))
        if w.outcome != "updated":
            raise RuntimeError(f"define_role answered {w.outcome!r}")
    b.put(
        "define_role_ms",
        "define_role (a definition-only change: its 33534, no list)",
        "ms",
        summary(define),
    )
