"""make bench, page section: the community's page (SPEC §8) in Chromium at 10,000 members.

    python -m bench.page            # the full run (make bench): 10,000 members against 10
    python -m bench.page --quick    # a smoke run: 100 members against 10, a few samples

Starts two real ``buzz-relay`` processes on loopback ports over a database of its own (default
``buzz_bench_page``, created again and migrated), each serving one community: one of 10,000
members (the batch function, ``add_relay_members``), some holding a few defined roles, and the
baseline, one of 10 members with the same roles. Every member has named themselves: their own
profile (kind 0, signed by their key) is kept (``set_member_profile``). Debian's Chromium (``/usr/bin/chromium``),
driven by Playwright, opens their pages; every timestamp is taken inside the page, by a script
installed before the page's own (``add_init_script``). The two sizes alternate, so that both
see the same load:

- **open**: a fresh browser context each time, from navigation start (``performance.now()``)
  to the moment ``#list-status`` says ``verified``, the first page of ``#member-list`` is drawn
  and ``#member-search`` is enabled (a MutationObserver); beside it the next frame after that,
  when the list's frame arrived on the websocket, and when every row of the first page shows
  its member's name (each profile asked for, arrived and verified in the page);
- **update**: with the page open, a membership write committed through the SQL API
  (``Membership``, add a new member, then remove it); from the commit returning (Python, wall
  clock) to the page showing the new ``#member-count`` (``Date.now()`` in the page, the same
  clock);
- **search**: one input event in ``#member-search`` (a role's label, or a member's npub
  prefix) to the list redrawn, and to the next frame;
- **owner**: the owner's page, the owner already logged in: a fresh context with the owner's
  NIP-07 signer injected as the tests inject it (``window.nostr``, signing on this side), and
  ``#login`` clicked by the probe the moment it shows (no person is that quick). From
  navigation start to the desk *fully drawn*, which is, all at once: the member list verified
  with its first page drawn; ``#desk`` shown; and, on the desk of sections (a
  ``[role=tablist]``), the selected section's ``[role=tabpanel]`` marked ``data-drawn`` (its
  lists asked for and drawn) and every row of the member list's page holding its
  ``.member-manage`` button; on the desk of one long page (before sections), every list of the
  desk drawn (each of its ``ul`` holding at least one ``li``: an entry, or the words that it
  is empty). Then the page's height (``document.documentElement.scrollHeight``) and its
  controls (``button``, ``input``, ``select``, ``textarea`` and ``a[href]`` in the document,
  shown or not).

Prints a table, writes ``bench/out/page.json``. Medians, p90 and ratios to the 10-member
page: the machine is shared.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import statistics
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from playwright.sync_api import Browser, BrowserContext, Page, sync_playwright

from buzz_signer.keys import RelayKey
from buzz_signer.membership import Membership
from buzz_signer.nip19 import encode_npub
from buzz_signer.nostr import compute_id
from buzz_signer.relay.page import ASSET_DIR

from .common import (
    SETUP_BATCH,
    Alternator,
    database_options,
    drop,
    fresh_database,
    raise_lead_bound,
)
from .common import log as common_log
from .wire import RelayUnderTest, free_port

DEFAULT_DB = "buzz_bench_page"
CHROMIUM = Path("/usr/bin/chromium")
BASELINE_SIZE = 10
PAGE_SIZE = 100  # the page draws at most this many members at once (web/src/browse.js)
TARGET_OPEN_MS = 1000.0
TARGET_UPDATE_MS = 500.0
TARGET_OWNER_MS = 1000.0
TARGET_OWNER_CONTROLS = 300  # "a few hundred at most"
TARGET_OWNER_HEIGHT_RATIO = 3.0  # the page's height at the size, against the 10's
WAIT_MS = 60_000  # bounds every wait in the page; the figures are read from the page itself
# Defined roles (id, label, hue): every 10th member holds one, every 100th a second one.
ROLES = (("moderator", "Moderator", 200), ("verified", "Verified", 120), ("guide", "Guide", 30))


@dataclass(frozen=True)
class Plan:
    size: int
    opens: int  # page opens timed at each size (after one untimed)
    updates: int  # writes timed at each size (adds and removes alternately: even)
    searches: int  # of each kind, at each size
    owner_opens: int  # the owner's page opened at each size (after one untimed)


FULL = Plan(size=10_000, opens=12, updates=20, searches=12, owner_opens=8)
QUICK = Plan(size=100, opens=2, updates=4, searches=2, owner_opens=2)

# Installed before the page's own script, in every context. It records, in window.__bench:
# `ready`, when the list is verified and drawn and search enabled (performance.now(), from
# navigation start); `frame`, the next frame after that; `listArrived`, when the websocket
# frame of the list came in; `counts`, each #member-count text shown, with Date.now().
PROBE_JS = """
(() => {
  const bench = (window.__bench = {
    ready: null, frame: null, listArrived: null, named: null, counts: [],
  })
  const nextFrame = (record) => requestAnimationFrame(() => setTimeout(record, 0))
  const Native = window.WebSocket
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args)
      this.addEventListener('message', (m) => {
        if (bench.listArrived === null && typeof m.data === 'string' &&
            m.data.startsWith('["EVENT","list"')) bench.listArrived = performance.now()
      })
    }
  }
  let countShown = null
  const look = () => {
    const count = document.getElementById('member-count')
    const text = count && count.textContent.trim()
    if (text && text !== countShown) {
      countShown = text
      bench.counts.push([text, Date.now()])
    }
    if (bench.ready !== null) {
      // Every member of the first page named: each one's own profile arrived and verified.
      const rows = [...document.querySelectorAll('#member-list li.member')]
      if (bench.named === null && rows.every((row) => row.querySelector('.person-name'))) {
        bench.named = performance.now()
      }
      return
    }
    const status = document.getElementById('list-status')
    const search = document.getElementById('member-search')
    const drawn = document.querySelector('#member-list li.member')
    if (status && status.dataset.state === 'verified' && drawn && search && !search.disabled) {
      bench.ready = performance.now()
      nextFrame(() => { bench.frame = performance.now() })
    }
  }
  new MutationObserver(look).observe(document, {
    subtree: true, childList: true, characterData: true, attributes: true,
  })
})()
"""

# Installed before the page's own script in the owner's contexts: clicks #login the moment it
# shows, and records in window.__owner `login` (when it was clicked) and `drawn` (when the desk
# was fully drawn, as the module's docstring says), both performance.now().
OWNER_PROBE_JS = """
(() => {
  const owner = (window.__owner = { login: null, drawn: null })
  const listDrawn = () => {
    const status = document.getElementById('list-status')
    return status && status.dataset.state === 'verified' &&
      document.querySelector('#member-list li.member') !== null
  }
  const deskDrawn = () => {
    const desk = document.getElementById('desk')
    if (!desk || desk.hidden) return false
    if (desk.querySelector('[role=tablist]')) {
      const open = desk.querySelector('[role=tabpanel]:not([hidden])')
      const rows = [...document.querySelectorAll('#member-list li.member')]
      return open !== null && 'drawn' in open.dataset &&
        rows.every((row) => row.querySelector('.member-manage'))
    }
    const lists = [...desk.querySelectorAll('ul')].filter((ul) => !ul.closest('li'))
    return lists.length > 0 && lists.every((ul) => ul.querySelector('li'))
  }
  const look = () => {
    const login = document.getElementById('login')
    if (owner.login === null && login && !login.hidden) {
      owner.login = performance.now()
      login.click()
    }
    if (owner.drawn === null && listDrawn() && deskDrawn()) owner.drawn = performance.now()
  }
  new MutationObserver(look).observe(document, {
    subtree: true, childList: true, characterData: true, attributes: true,
  })
})()
"""

# The page once the desk is drawn: its height and its controls.
OWNER_SIZE_JS = """() => ({
  height: document.documentElement.scrollHeight,
  controls: document.querySelectorAll('button, input, select, textarea, a[href]').length,
})"""

# One input event in the search box: ms to the list redrawn (the page draws in the handler)
# and to the next frame; and how many members it shows and counts.
SEARCH_JS = """async (query) => {
  const box = document.getElementById('member-search')
  const t0 = performance.now()
  box.value = query
  box.dispatchEvent(new Event('input', { bubbles: true }))
  const drawn = performance.now() - t0
  await new Promise((done) => requestAnimationFrame(() => setTimeout(done, 0)))
  return {
    drawn, frame: performance.now() - t0,
    shown: document.querySelectorAll('#member-list li.member').length,
    page: document.getElementById('members-page').textContent,
  }
}"""


def log(msg: str) -> None:
    common_log(msg, "bench.page")


def summary(xs: Sequence[float]) -> dict[str, Any]:
    s = sorted(xs)
    p90 = s[0] if len(s) == 1 else statistics.quantiles(s, n=10, method="inclusive")[8]
    return {"median": statistics.median(s), "p90": p90, "min": s[0], "max": s[-1], "n": len(s)}


def count_text(n: int) -> str:
    """#member-count's text in an en-US browser: the count in its locale."""
    return "1 member" if n == 1 else f"{n:,} members"


@dataclass
class Community:
    """One community, its relay, and what the page should show of it."""

    size: int
    cid: Any
    relay: RelayUnderTest
    origin: str
    npubs: list[str]
    holders: dict[str, int]  # role id -> members holding it
    list_bytes: int  # the live 13534's JSON
    owner: RelayKey  # the owner's key, for their signer


def build(mem: Membership, size: int, owner: RelayKey) -> tuple[Any, list[str], dict[str, int]]:
    """A community of `size` members, each named by their own profile (kind 0, signed by
    their key), the roles defined and held (setup, not timed)."""
    cid = mem.create_community(f"page{size}.bench.example.org", owner.pubkey).details[
        "community_id"
    ]
    people = [owner, *(RelayKey.generate() for _ in range(size - 1))]
    for start in range(1, size, SETUP_BATCH):
        mem.add_relay_members(cid, [k.pubkey for k in people[start : start + SETUP_BATCH]])
    for number, person in enumerate(people):
        mem.set_member_profile(cid, profile(person, f"Member {number:,}"))
    pubkeys = sorted(m.pubkey for m in mem.relay_members(cid))
    holders = dict.fromkeys((r for r, _, _ in ROLES), 0)
    with mem.transaction() as tx:
        for role, label, hue in ROLES:
            tx.define_role(cid, role, label, color=hue)
        for i, pubkey in enumerate(pubkeys):
            held = [ROLES[i // 10 % 3][0]] if i % 10 == 0 else []
            if i % 100 == 0:
                held.append(ROLES[(i // 10 + 1) % 3][0])
            for role in held:
                tx.assign_role(cid, pubkey, role)
                holders[role] += 1
    return cid, pubkeys, holders


def wait_in_page(page: Page, expression: str, arg: Any = None) -> None:
    page.wait_for_function(expression, arg=arg, timeout=WAIT_MS, polling=20)


def signed(key: RelayKey, template: dict[str, Any]) -> dict[str, Any]:
    """The event of a NIP-01 template (created_at, kind, tags, content), signed by `key`."""
    event = {
        "pubkey": key.pubkey,
        "created_at": int(template["created_at"]),
        "kind": int(template["kind"]),
        "tags": template.get("tags", []),
        "content": template.get("content", ""),
    }
    event["id"] = compute_id(event)
    event["sig"] = key.sign(event["id"])
    return event


def profile(person: RelayKey, name: str) -> str:
    """The person's own kind 0 naming them, signed by their key, as NIP-01 JSON text."""
    template = {"created_at": time.time(), "kind": 0, "content": json.dumps({"name": name})}
    return json.dumps(signed(person, template))


@contextmanager
def opened(browser: Browser, c: Community) -> Iterator[Page]:
    """A fresh context on the community's page, open until the list is verified and drawn."""
    context = browser.new_context(locale="en-US", timezone_id="UTC")
    try:
        context.add_init_script(PROBE_JS)
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(c.origin + "/")
        wait_in_page(page, "() => window.__bench.frame !== null")
        shown = page.evaluate(
            """() => [document.querySelectorAll('#member-list li.member').length,
                      document.getElementById('member-count').textContent.trim()]"""
        )
        if shown != [min(c.size, PAGE_SIZE), count_text(c.size)] or errors:
            raise RuntimeError(f"the page at {c.size} members shows {shown}; errors {errors}")
        yield page
    finally:
        context.close()


def owner_signer(context: BrowserContext, key: RelayKey) -> None:
    """window.nostr in every page of `context`, as a NIP-07 extension provides it (as the
    page's tests inject it): signing on this side with the owner's key."""
    context.expose_function("__benchSignEvent", lambda template: signed(key, template))
    context.add_init_script(
        "window.nostr = {"
        f" getPublicKey: async () => {json.dumps(key.pubkey)},"
        " signEvent: async (event) => window.__benchSignEvent(event),"
        " };"
    )


def owner_opens(browser: Browser, communities: Sequence[Community], runs: int) -> dict[str, Any]:
    """Per size: ms from navigation start to the owner's desk fully drawn (and to the login
    click), the page's height and its controls; a fresh context each time, the sizes
    alternating, the first of each untimed."""
    samples: dict[int, dict[str, list[float]]] = {
        c.size: {"drawn": [], "login": [], "height": [], "controls": []} for c in communities
    }
    for i in range(runs + 1):
        for c in communities:
            context = browser.new_context(locale="en-US", timezone_id="UTC")
            try:
                owner_signer(context, c.owner)
                context.add_init_script(OWNER_PROBE_JS)
                page = context.new_page()
                errors: list[str] = []
                page.on("pageerror", lambda exc, errors=errors: errors.append(str(exc)))
                page.goto(c.origin + "/")
                wait_in_page(page, "() => window.__owner.drawn !== null")
                marks = page.evaluate("() => window.__owner")
                size = page.evaluate(OWNER_SIZE_JS)
                if errors:
                    raise RuntimeError(f"the owner's page at {c.size} members: {errors}")
            finally:
                context.close()
            if i:
                got = samples[c.size]
                got["drawn"].append(marks["drawn"])
                got["login"].append(marks["login"])
                got["height"].append(size["height"])
                got["controls"].append(size["controls"])
    return samples


def page_opens(browser: Browser, communities: Sequence[Community], runs: int) -> dict[str, Any]:
    """Per size: ms from navigation start to ready, to the next frame, and to the list's
    arrival; each open in a fresh context, the sizes alternating; the first of each untimed."""
    samples: dict[int, dict[str, list[float]]] = {
        c.size: {"ready": [], "frame": [], "listArrived": [], "named": []} for c in communities
    }
    for i in range(runs + 1):
        for c in communities:
            with opened(browser, c) as page:
                wait_in_page(page, "() => window.__bench.named !== null")
                marks = page.evaluate("() => window.__bench")
            if i:
                for key, xs in samples[c.size].items():
                    xs.append(marks[key])
    return samples


def list_updates(
    browser: Browser, communities: Sequence[Community], mem: Membership, writes: int
) -> dict[int, list[float]]:
    """Per size: ms from a write's commit returning to the page showing the new count; the
    pages open side by side, the writes alternating between them."""
    latencies: dict[int, list[float]] = {c.size: [] for c in communities}
    with opened(browser, communities[0]) as first, opened(browser, communities[1]) as second:
        pages = {communities[0].size: first, communities[1].size: second}
        alternators = {c.size: Alternator(mem, c.cid) for c in communities}
        # An add and a remove untimed first; an even number of writes leaves the sizes as
        # they were, for the searches.
        for i in range(writes + 2):
            for c in communities:
                page, alt = pages[c.size], alternators[c.size]
                seen = page.evaluate("() => window.__bench.counts.length")
                kind, _ = alt.step()
                committed = time.time() * 1000
                want = count_text(c.size + (kind == "add"))
                wait_in_page(
                    page,
                    """([seen, want]) => window.__bench.counts.slice(seen)
                        .some(([text]) => text === want)""",
                    [seen, want],
                )
                counts = page.evaluate("() => window.__bench.counts")[seen:]
                shown = next(t for text, t in counts if text == want)
                if i >= 2:
                    latencies[c.size].append(shown - committed)
                time.sleep(0.1)  # one list at a time: the page's latency, not a queue
    return latencies


def searches(browser: Browser, communities: Sequence[Community], runs: int) -> dict[str, Any]:
    """Per size and kind: one input event to the list redrawn, and to the next frame; each
    result checked against the database's members, then the box cleared (not timed)."""
    rng = random.Random(1)
    out = {c.size: {k: {"drawn": [], "frame": []} for k in ("role", "npub")} for c in communities}
    with opened(browser, communities[0]) as first, opened(browser, communities[1]) as second:
        pages = {communities[0].size: first, communities[1].size: second}
        for _ in range(runs):
            for c in communities:
                role_id, label, _ = ROLES[0]  # held at both sizes
                prefix = rng.choice(c.npubs)[:12]
                queries = {
                    "role": (label.lower(), c.holders[role_id]),
                    "npub": (prefix, sum(n.startswith(prefix) for n in c.npubs)),
                }
                for kind, (query, matching) in queries.items():
                    result = pages[c.size].evaluate(SEARCH_JS, query)
                    if result["shown"] != min(matching, PAGE_SIZE):
                        raise RuntimeError(f"{kind} search {query!r} at {c.size}: {result}")
                    out[c.size][kind]["drawn"].append(result["drawn"])
                    out[c.size][kind]["frame"].append(result["frame"])
                    pages[c.size].evaluate(SEARCH_JS, "")
    return out


def measure(url: str, plan: Plan, out: Path) -> dict[str, Any]:
    key = RelayKey.generate()
    communities: list[Community] = []
    with Membership.connect(url, key) as mem, sync_playwright() as playwright:
        try:
            for size in (plan.size, BASELINE_SIZE):
                log(f"a community of {size:,} members, {len(ROLES)} roles held (not timed)")
                owner = RelayKey.generate()
                cid, pubkeys, holders = build(mem, size, owner)
                port = free_port()
                relay = RelayUnderTest(url, key, cid, port, out / f"page-relay-{size}.log")
                communities.append(
                    Community(size, cid, relay, f"http://127.0.0.1:{port}",
                              [encode_npub(p) for p in pubkeys], holders,
                              len(json.dumps(mem.member_list(cid))), owner)
                )  # fmt: skip
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM))
            try:
                log(f"{plan.opens} page opens at each size, in fresh contexts")
                opens = page_opens(browser, communities, plan.opens)
                log(f"{plan.updates} list updates at each size")
                updates = list_updates(browser, communities, mem, plan.updates)
                log(f"{plan.searches} searches of each kind at each size")
                found = searches(browser, communities, plan.searches)
                log(f"{plan.owner_opens} opens of the owner's page at each size")
                owners = owner_opens(browser, communities, plan.owner_opens)
                chromium = browser.version
            finally:
                browser.close()
        finally:
            for c in communities:
                c.relay.stop()
    figures: dict[str, Any] = {}

    def put(key: str, label: str, xs: Sequence[float], unit: str = "ms") -> None:
        figures[key] = {"label": label, "unit": unit, **summary(xs)}

    for c in communities:
        n, o = c.size, opens[c.size]
        put(f"open_ms@{n}", f"page open at {n:,} members: verified, drawn, search on", o["ready"])
        put(f"open_frame_ms@{n}", f"page open at {n:,} members, to the next frame", o["frame"])
        put(f"open_list_arrived_ms@{n}", f"the list's frame arrives, {n:,} members",
            o["listArrived"])  # fmt: skip
        put(f"open_in_page_ms@{n}", f"list arrived to shown, in the page, {n:,} members",
            [r - a for r, a in zip(o["ready"], o["listArrived"], strict=True)])  # fmt: skip
        put(f"open_named_ms@{n}", f"page open at {n:,} members: the first page's names drawn",
            o["named"])  # fmt: skip
        put(f"update_ms@{n}", f"commit to the new count shown, {n:,} members", updates[n])
        for kind, what in (("role", "a role's label"), ("npub", "an npub prefix")):
            s = found[n][kind]
            put(f"search_{kind}_ms@{n}", f"search {what} at {n:,} members, drawn", s["drawn"])
            put(f"search_{kind}_frame_ms@{n}", f"search {what} at {n:,} members, next frame",
                s["frame"])  # fmt: skip
        w = owners[n]
        put(f"owner_ms@{n}", f"the owner's page at {n:,} members: the desk fully drawn",
            w["drawn"])  # fmt: skip
        put(f"owner_login_ms@{n}", f"the owner's page at {n:,} members: login clicked",
            w["login"])  # fmt: skip
        put(f"owner_height_px@{n}", f"the owner's page at {n:,} members: its height",
            w["height"], "px")  # fmt: skip
        put(f"owner_controls@{n}", f"the owner's page at {n:,} members: its controls",
            w["controls"], "controls")  # fmt: skip
    for key, f in figures.items():
        base = figures[key.split("@")[0] + f"@{BASELINE_SIZE}"]
        f["ratio_of"] = key.split("@")[0] + f"@{BASELINE_SIZE}"
        f["ratio"] = f["median"] / base["median"] if base["median"] > 0 else None
    return {
        "meta": {
            "timestamp": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "nproc": os.cpu_count(),
            "chromium": chromium,
            "list_bytes": {str(c.size): c.list_bytes for c in communities},
        },
        "plan": plan.__dict__,
        "sizes": [plan.size, BASELINE_SIZE],
        "figures": figures,
    }


def targets(results: dict[str, Any]) -> list[tuple[str, str, str]]:
    f, n = results["figures"], results["plan"]["size"]
    full = n >= FULL.size

    def judge(ok: bool) -> str:
        return ("pass" if ok else "MISS") if full else "n/a (quick)"

    def value(key: str) -> str:
        x = f[key]
        unit = x["unit"]
        return f"{x['median']:.0f} {unit} (p90 {x['p90']:.0f} {unit}, {x['ratio']:.2f}x the 10's)"

    return [
        (f"page open at {n:,} members, median", value(f"open_ms@{n}"),
         judge(f[f"open_ms@{n}"]["median"] < TARGET_OPEN_MS)),
        (f"list update at {n:,} members, median", value(f"update_ms@{n}"),
         judge(f[f"update_ms@{n}"]["median"] < TARGET_UPDATE_MS)),
        (f"the owner's desk drawn at {n:,} members, median", value(f"owner_ms@{n}"),
         judge(f[f"owner_ms@{n}"]["median"] < TARGET_OWNER_MS)),
        (f"the owner's page's controls at {n:,} members", value(f"owner_controls@{n}"),
         judge(f[f"owner_controls@{n}"]["median"] <= TARGET_OWNER_CONTROLS)),
        (f"the owner's page's height at {n:,} members", value(f"owner_height_px@{n}"),
         judge(f[f"owner_height_px@{n}"]["ratio"] <= TARGET_OWNER_HEIGHT_RATIO)),
    ]  # fmt: skip


def print_table(results: dict[str, Any]) -> None:
    f, n = results["figures"], results["plan"]["size"]
    rows = [
        ("page open: verified, drawn, search on", "open_ms"),
        ("  to the next frame", "open_frame_ms"),
        ("  the list's frame arrived", "open_list_arrived_ms"),
        ("  from its arrival to shown, in the page", "open_in_page_ms"),
        ("  every name of its first page drawn", "open_named_ms"),
        ("list update: commit to the new count", "update_ms"),
        ("search a role's label: drawn", "search_role_ms"),
        ("search an npub prefix: drawn", "search_npub_ms"),
        ("the owner's page: the desk fully drawn", "owner_ms"),
        ("  the login clicked", "owner_login_ms"),
        ("  its height (px)", "owner_height_px"),
        ("  its controls", "owner_controls"),
    ]
    width = max(len(label) for label, _ in rows)
    print(f"\n{'page figure (ms unless said)':<{width}}  {'at ' + format(n, ','):>17}  "
          f"{'at ' + str(BASELINE_SIZE):>17}  ratio")  # fmt: skip
    for label, key in rows:
        big, small = f[f"{key}@{n}"], f[f"{key}@{BASELINE_SIZE}"]
        cells = [f"{x['median']:7.1f} (p90 {x['p90']:6.1f})" for x in (big, small)]
        ratio = "" if big["ratio"] is None else f"{big['ratio']:.2f}x"
        print(f"{label:<{width}}  {cells[0]}  {cells[1]}  {ratio}")
    judged = targets(results)
    width = max(len(t) for t, _, _ in judged)
    print(f"\n{'page target':<{width}}  value  result")
    for t, v, r in judged:
        print(f"{t:<{width}}  {v}  {r}")


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.page", description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="smoke run: 100 members, few samples")
    database_options(ap, DEFAULT_DB)
    args = ap.parse_args(argv)
    plan = QUICK if args.quick else FULL
    dbname = args.db or (f"{DEFAULT_DB}_quick" if args.quick else DEFAULT_DB)
    if not CHROMIUM.exists():
        sys.exit(f"bench.page: {CHROMIUM} is missing (scripts/setup installs Debian's chromium)")
    if not (ASSET_DIR / "manifest.json").exists():
        sys.exit(f"bench.page: the page's script is not built in {ASSET_DIR}: run scripts/setup")
    args.out.mkdir(parents=True, exist_ok=True)
    admin_url, url = fresh_database(args.admin_url, dbname, "bench.page")
    load_before = os.getloadavg()
    try:
        raise_lead_bound(url)
        results = measure(url, plan, args.out)
    finally:
        if args.drop:
            drop(admin_url, dbname)
    results["meta"] |= {"loadavg_before": load_before, "loadavg_after": os.getloadavg()}
    results["targets"] = [{"target": t, "value": v, "result": r} for t, v, r in targets(results)]
    path = args.out / "page.json"
    path.write_text(json.dumps(results, indent=2) + "\n")
    print_table(results)
    print(f"\nwrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
