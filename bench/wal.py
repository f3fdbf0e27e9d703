"""WAL per write: the LSN difference around each write (``wal_bytes@N``,
``baseline_wal_bytes``) and the write's own records read back with pg_waldump
(``wal_own_bytes@N``, ``wal_own_nofpi_bytes@N`` and the baseline's)."""

from __future__ import annotations

from typing import Any

import psycopg

from .common import Alternator, Bench, log, new_pubkey, summary


def wal_lsn(su: psycopg.Connection[Any]) -> str:
    return su.execute("SELECT pg_current_wal_insert_lsn()::text").fetchone()[0]


def wal_since(su: psycopg.Connection[Any], lsn: str) -> int:
    return su.execute(
        "SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), %s::pg_lsn)::bigint", (lsn,)
    ).fetchone()[0]


def list_xid(su: psycopg.Connection[Any], cid: Any) -> int:
    """The transaction of the community's last write: it replaced the list's header row."""
    return su.execute(
        "SELECT xmin::text::bigint FROM buzz_private.member_lists WHERE community_id = %s",
        (cid,),
    ).fetchone()[0]


def own(b: Bench, before: str, after: str, xid: int) -> tuple[int, int] | None:
    return b.waldump.own_bytes(before, after, xid) if b.waldump else None


def wal(b: Bench, i: int, size: int) -> None:
    log(f"WAL per write at {size:,} members ({b.plan.wal_reps[i]} writes)")
    cid = b.communities[size]
    alt = Alternator(b.m, cid)
    samples, owned = [], []
    for _ in range(b.plan.wal_reps[i]):
        lsn = wal_lsn(b.su)
        alt.step()
        end = wal_lsn(b.su)
        samples.append(wal_since(b.su, lsn))
        owned.append(own(b, lsn, end, list_xid(b.su, cid)))
    put_wal(b, f"wal_bytes@{size}", f"WAL per write at {size:,} members", samples, owned)


def baseline_wal(b: Bench) -> None:
    log("WAL per baseline transaction")
    samples, owned = [], []
    for _ in range(max(b.plan.wal_reps)):
        pk = new_pubkey()
        lsn = wal_lsn(b.su)
        b.baseline_once(pk=pk)
        end = wal_lsn(b.su)
        samples.append(wal_since(b.su, lsn))
        xid = b.su.execute(
            "SELECT xmin::text::bigint FROM public.bench_baseline"
            " WHERE community_id = %s AND pubkey = %s",
            (b.baseline_cid, pk),
        ).fetchone()[0]
        owned.append(own(b, lsn, end, xid))
    put_wal(b, "baseline_wal_bytes", "WAL per baseline transaction", samples, owned)


def put_wal(
    b: Bench, key: str, label: str, samples: list[int], owned: list[tuple[int, int] | None]
) -> None:
    """The LSN difference (the whole cluster's WAL meanwhile), and the WAL records that are
    the write's own, read back with pg_waldump (`owned`: None where that failed), with and
    without their full-page images (8 kB for each page first changed since a checkpoint)."""
    b.put(key, f"{label} (LSN diff)", "bytes", summary(samples))
    mine = [x for x in owned if x is not None]
    if mine and len(mine) * 2 >= len(owned):  # most were read back
        unread = len(owned) - len(mine)
        family = key.replace("wal_", "wal_own_", 1)
        b.put(family, f"{label} (own)", "bytes", summary([x[0] for x in mine]), unread=unread)
        b.put(
            family.replace("wal_own_", "wal_own_nofpi_", 1),
            f"{label} (own, less page images)",
            "bytes",
            summary([x[1] for x in mine]),
            unread=unread,
        )
    else:
        b.details.setdefault("waldump_failed", []).append(key)
