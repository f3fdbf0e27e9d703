"""Latency: a full write per community size (``write_ms@N``, with the baseline interleaved)
and ``buzz.member_list`` fetched as text and parsed (``member_list_text_ms@N``,
``member_list_parsed_ms@N``)."""

from __future__ import annotations

import gc
import time

import psycopg

from .common import Alternator, Bench, log, ms_since, summary, text_loading


def writes(b: Bench, i: int, size: int) -> None:
    """Full writes at one size, each after a baseline transaction (interleaved), so both see
    the same load."""
    log(f"writes at {size:,} members ({b.plan.write_reps[i]} timed)")
    alt = Alternator(b.m, b.communities[size])
    for _ in range(b.plan.warmup[i]):
        alt.step()
        b.baseline_once()
    gc.collect()
    adds: list[float] = []
    removes: list[float] = []
    base: list[float] = []
    for _ in range(b.plan.write_reps[i]):
        base.append(b.baseline_once())
        kind, took = alt.step()
        (adds if kind == "add" else removes).append(took)
    b.baseline_samples += base
    b.put(
        f"write_ms@{size}",
        f"write at {size:,} members (add/remove, whole call)",
        "ms",
        summary(adds + removes),
        add=summary(adds),
        remove=summary(removes),
        baseline_interleaved=summary(base),
    )


def baseline(b: Bench) -> None:
    """The baseline samples taken before each write of every size, pooled."""
    b.put(
        "baseline_ms",
        "baseline: bare INSERT of one row + COMMIT",
        "ms",
        summary(b.baseline_samples),
    )


def lists(b: Bench, i: int, size: int) -> None:
    """buzz.member_list fetched by psycopg: parsed (json.loads, its default for json and
    jsonb) and as text (a text loader: no parsing in Python, the database's part and the
    wire's). The two interleaved."""
    log(f"member_list at {size:,} members ({b.plan.list_reps[i]} timed, each way)")
    cid = b.communities[size]
    q = "SELECT buzz.member_list(%s)"
    with (
        psycopg.connect(b.url, autocommit=True) as parsed,
        text_loading(psycopg.connect(b.url, autocommit=True)) as text,
    ):
        doc = parsed.execute(q, (cid,)).fetchone()[0]
        raw = text.execute(q, (cid,)).fetchone()[0]
        if len(doc["tags"]) - 1 != size or not isinstance(raw, str):
            raise RuntimeError(f"member_list at {size}: {len(doc['tags']) - 1} members")
        for _ in range(b.plan.warmup[i]):
            parsed.execute(q, (cid,)).fetchone()
            text.execute(q, (cid,)).fetchone()
        gc.collect()
        a: list[float] = []
        p: list[float] = []
        for _ in range(b.plan.list_reps[i]):
            t0 = time.perf_counter_ns()
            text.execute(q, (cid,)).fetchone()
            a.append(ms_since(t0))
            t0 = time.perf_counter_ns()
            parsed.execute(q, (cid,)).fetchone()
            p.append(ms_since(t0))
    b.put(
        f"member_list_text_ms@{size}",
        f"member_list at {size:,}, fetched as text",
        "ms",
        summary(a),
        list_bytes=len(raw.encode()),
    )
    b.put(
        f"member_list_parsed_ms@{size}",
        f"member_list at {size:,}, parsed (json.loads)",
        "ms",
        summary(p),
    )
