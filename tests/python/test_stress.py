"""Randomized stress: several sessions, each a thread with its own connection and Membership,
run every write path of SPEC section 3 against a few communities for a bounded time, including
archive, unarchive, delete (and re-creation) and key rotation, while a separate connection
LISTENs to buzz_membership.

Afterwards: no deadlock (40P01), no serialization failure (40001) and no unexpected error;
member_list_drift() is empty; every live list verifies, is signed by the current relay key and
names exactly relay_members; and, in the NOTIFY stream (delivered in commit order), created_at
strictly increases per community, ids never repeat per community, the stream holds exactly the
lists the sessions saw commit, and its last list per community is the live one.

Retried, and counted: BZLAG (the lead bound), 55P03 (lock timeout) and BZKEY (a session still
signing with the key a rotation just replaced). BZARC and BZNCM are outcomes of racing an
archive or a deletion, counted as such.

BUZZ_STRESS_SECONDS (default 20) bounds the run, BUZZ_STRESS_SESSIONS (default 5) sets the
number of sessions, BUZZ_STRESS_SEED seeds the sessions' random choices (thread timing
still varies). The summary table is written to the
terminal whatever pytest's capture and reporting options.

Rotations run one at a time, as an operator runs them: two rotations to different keys at
once would undo each other for ever. Everything else mixes freely, including the interleavings
that once deadlocked or failed (a rotation re-signing a community being deleted; a batch of
adds holding the pubkey a transfer is making owner; two batches sharing pubkeys; an invite
claim racing another join of the same pubkey).
"""

from __future__ import annotations

import itertools
import json
import os
import random
import threading
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import psycopg
import pytest

pytest.register_assert_rewrite("fixtures_membership")
from fixtures_membership import expected_tags, members_of, new_pubkey

from buzz_signer.errors import BuzzError
from buzz_signer.keys import RelayKey
from buzz_signer.membership import Invite, Membership, MembershipTransaction
from buzz_signer.nostr import KIND_MEMBERSHIP_LIST, verify_event
from buzz_signer.signer import Signer

pytest_plugins = ("fixtures_membership",)

SECONDS = float(os.environ.get("BUZZ_STRESS_SECONDS", "20"))
SESSIONS = int(os.environ.get("BUZZ_STRESS_SESSIONS", "5"))
SEED = int(os.environ.get("BUZZ_STRESS_SEED", str(random.randrange(2**32))))
COMMUNITIES = 4
OWNERS = 8  # pubkeys that own, are made owners (create, bootstrap, transfer) and were owners
MEMBERS = 40  # pubkeys the other paths share
SHARED_BATCH = 40  # at most this many shared pubkeys (owners included) in one batch
# Each list needs a second of created_at; hundreds of lists per second per community run far
# ahead of the clock. The lead bound (300 s by default, tested in test_membership_guard) would
# turn the run into one list per second per community, so it is raised for this test.
MAX_LEAD_SECONDS = 100_000_000
RETRIED = frozenset({"BZLAG", "55P03", "BZKEY"})
OUTCOMES = frozenset({"BZARC", "BZNCM"})
FATAL = frozenset({"40P01", "40001"})
MAX_ATTEMPTS = 200


@dataclass
class PathStats:
    started: int = 0
    committed: int = 0
    lists: int = 0
    outcomes: Counter = field(default_factory=Counter)
    retries: Counter = field(default_factory=Counter)
    errors: Counter = field(default_factory=Counter)

    def merge(self, other: PathStats) -> None:
        self.started += other.started
        self.committed += other.committed
        self.lists += other.lists
        self.outcomes += other.outcomes
        self.retries += other.retries
        self.errors += other.errors


class World:
    """What the sessions share: the communities (a host per slot, its current id), the pubkey
    pools, the open invites and the current relay key."""

    def __init__(self, key: RelayKey, hosts: list[str], ids: list[uuid.UUID]) -> None:
        self.lock = threading.Lock()
        self.key = key
        self.hosts = hosts
        self.ids = ids
        self.owners = [new_pubkey() for _ in range(OWNERS)]
        self.members = [new_pubkey() for _ in range(MEMBERS)]
        self.invites: dict[int, list[Invite]] = defaultdict(list)
        # One rotation at a time, and never during a deletion (see the module docstring).
        self.rotating = threading.Lock()
        self.rotations = 0


class Session:
    """One thread's connection and its record of what it did."""

    def __init__(self, url: str, world: World, rng: random.Random) -> None:
        self.world = world
        self.rng = rng
        self.m = Membership.connect(url, world.key)
        self.stats: dict[str, PathStats] = defaultdict(PathStats)
        self.committed_lists: list[tuple[str, str, int]] = []  # (community, id, created_at)
        self.fatal: list[str] = []
        self.unexpected: list[str] = []
        self._path = ""

    def slot(self) -> int:
        return self.rng.randrange(COMMUNITIES)

    def cid(self, slot: int) -> uuid.UUID:
        with self.world.lock:
            return self.world.ids[slot]

    def write(self, call: Callable[[MembershipTransaction], Any]) -> Any:
        """One transaction: the call, its lists, COMMIT; records the lists it committed."""
        with self.m.transaction() as tx:
            answer = call(tx)
        for community, ev in tx.lists.items():
            assert ev["kind"] == KIND_MEMBERSHIP_LIST
            self.committed_lists.append((community, ev["id"], ev["created_at"]))
        self.stats[self._path].committed += 1
        self.stats[self._path].lists += len(tx.lists)
        return answer

    def run(self, name: str, path: Callable[[Session], Any]) -> None:
        self._path = name
        stats = self.stats[name]
        stats.started += 1
        for _ in range(MAX_ATTEMPTS):
            if self.m.signer.pubkey != self.world.key.pubkey:
                self.m.signer = Signer(self.world.key)
            try:
                outcome = path(self)
            except BuzzError as exc:
                code = exc.sqlstate or type(exc).__name__
                if code in RETRIED:
                    stats.retries[code] += 1
                    time.sleep(self.rng.uniform(0.005, 0.05))
                    continue
                if code in OUTCOMES:
                    stats.outcomes[code] += 1
                    return
                stats.errors[code] += 1
                (self.fatal if code in FATAL else self.unexpected).append(f"{name}: {code} {exc}")
                return
            except Exception as exc:  # noqa: BLE001 - a bug of this test or of the Python layer
                stats.errors[type(exc).__name__] += 1
                self.unexpected.append(f"{name}: {type(exc).__name__} {exc}")
                return
            if isinstance(outcome, int) and not isinstance(outcome, bool):
                outcome = "added some" if outcome else "added none"  # a batch's row count
            stats.outcomes[str(outcome)] += 1
            return
        stats.errors["gave_up"] += 1
        self.unexpected.append(f"{name}: still retrying after {MAX_ATTEMPTS} attempts")

    def close(self) -> None:
        self.m.close()


# The write paths. Each returns the outcome it records.


def shared_pubkey(s: Session) -> str:
    """Mostly a pubkey of the shared pool; now and then one of the owners'."""
    pool = s.world.owners if s.rng.random() < 0.1 else s.world.members
    return s.rng.choice(pool)


def add_member(s: Session) -> Any:
    cid, pk, role = s.cid(s.slot()), shared_pubkey(s), s.rng.choice(["member", "admin"])
    return s.write(lambda tx: tx.add_relay_member(cid, pk, role, "stress"))


def add_members_shared(s: Session) -> Any:
    cid = s.cid(s.slot())
    pool = s.world.members + s.world.owners
    batch = s.rng.sample(pool, s.rng.randint(1, min(SHARED_BATCH, len(pool))))
    return s.write(lambda tx: tx.add_relay_members(cid, batch))


def add_members_fresh(s: Session) -> Any:
    cid = s.cid(s.slot())
    batch = [new_pubkey() for _ in range(s.rng.randint(10, 120))]
    return s.write(lambda tx: tx.add_relay_members(cid, batch, "member", "import"))


def claim(s: Session) -> Any:
    cid, pk = s.cid(s.slot()), shared_pubkey(s)
    version = s.rng.choice([None, "v1", "v2"])
    return s.write(lambda tx: tx.claim_relay_membership(cid, pk, version))


def create_invite(s: Session) -> Any:
    slot = s.slot()
    cid = s.cid(slot)
    uses = s.rng.choice([1, 2, 3, None])
    invite = s.write(lambda tx: tx.create_relay_invite(cid, "stress", uses))
    with s.world.lock:
        if s.world.ids[slot] == cid:
            s.world.invites[slot].append(invite)
    return "created"


def claim_invite(s: Session) -> Any:
    slot = s.slot()
    cid = s.cid(slot)
    with s.world.lock:
        invites = list(s.world.invites[slot])
    code = s.rng.choice(invites).code if invites and s.rng.random() < 0.9 else uuid.uuid4().hex
    # Mostly pubkeys other sessions also add and remove (racing joins); a fresh one sometimes,
    # whose second claim must then answer already_member (no other session touches it).
    fresh = s.rng.random() < 0.3
    pk = new_pubkey() if fresh else shared_pubkey(s)
    row = s.write(lambda tx: tx.claim_relay_invite(cid, code, pk, "v1"))
    if fresh and row["outcome"] == "joined" and s.rng.random() < 0.3:
        again = s.write(lambda tx: tx.claim_relay_invite(cid, code, pk))
        assert again["outcome"] in ("already_member", "invalid"), again  # invalid: revoked since
    return row["outcome"]


def revoke_invite(s: Session) -> Any:
    slot = s.slot()
    cid = s.cid(slot)
    with s.world.lock:
        invites = s.world.invites[slot]
        invite_id = invites.pop(s.rng.randrange(len(invites))).invite_id if invites else None
    return s.write(lambda tx: tx.revoke_relay_invite(cid, invite_id or uuid.uuid4()))


def remove(s: Session) -> Any:
    cid, pk = s.cid(s.slot()), shared_pubkey(s)
    return s.write(lambda tx: tx.remove_relay_member(cid, pk))


def remove_if_role(s: Session) -> Any:
    cid, pk = s.cid(s.slot()), shared_pubkey(s)
    role = s.rng.choice(["member", "admin", "owner"])
    return s.write(lambda tx: tx.remove_relay_member_if_role(cid, pk, role))


def update_role(s: Session) -> Any:
    cid, pk = s.cid(s.slot()), shared_pubkey(s)
    role = s.rng.choice(["member", "admin"])
    return s.write(lambda tx: tx.update_relay_member_role(cid, pk, role))


def bootstrap(s: Session) -> Any:
    cid, pk = s.cid(s.slot()), s.rng.choice(s.world.owners)
    return s.write(lambda tx: tx.bootstrap_owner(cid, pk))


def transfer(s: Session) -> Any:
    cid, pk = s.cid(s.slot()), s.rng.choice(s.world.owners)
    expected = None
    if s.rng.random() < 0.5:  # what the caller believes (possibly stale: owner_conflict)
        owners = [m.pubkey for m in s.m.relay_members(cid) if m.role == "owner"]
        expected = owners[0] if owners else s.rng.choice(s.world.owners)
    return s.write(lambda tx: tx.transfer_ownership(cid, pk, expected))


def allowlist(s: Session) -> Any:
    cid = s.cid(s.slot())
    return s.write(lambda tx: tx.allowlist_add(cid, new_pubkey(), "stress"))


def backfill(s: Session) -> Any:
    cid = s.cid(s.slot())
    return s.write(lambda tx: tx.backfill_from_allowlist(cid))


def republish(s: Session) -> Any:
    cid = s.cid(s.slot())
    s.write(lambda tx: tx.republish_member_list(cid))
    return "republished"


def archive(s: Session) -> Any:
    cid = s.cid(s.slot())
    return s.write(lambda tx: tx.archive_community(cid))


def unarchive(s: Session) -> Any:
    cid = s.cid(s.slot())
    return s.write(lambda tx: tx.unarchive_community(cid))


def _recreate(s: Session, slot: int) -> str:
    host = s.world.hosts[slot]
    owner = s.rng.choice(s.world.owners)
    row = s.write(lambda tx: tx.create_community(host, owner))
    found = s.m.community_id(host)
    with s.world.lock:
        if found is not None and s.world.ids[slot] != found:
            s.world.ids[slot] = found
            s.world.invites[slot] = []
    return row["outcome"]


def delete_and_recreate(s: Session) -> Any:
    slot = s.slot()
    cid = s.cid(slot)
    deleted = s.write(lambda tx: tx.delete_community(cid))
    recreated = _recreate(s, slot)
    return f"{deleted}+{recreated}"


def create_existing(s: Session) -> Any:
    return _recreate(s, s.slot())  # the host exists but in a deletion: exists / host_taken


def rotate(s: Session) -> Any:
    new_key = RelayKey.generate()
    rounds = 0
    with s.world.rotating:
        s.m.signer = Signer(new_key)
        while True:
            marked = s.write(lambda tx: tx.rotate_relay_key(new_key.pubkey, 2))
            with s.world.lock:
                s.world.key = new_key  # committed: from now on prepare accepts only this key
                s.world.rotations += 1
            rounds += 1
            if marked == 0:
                return f"rounds={rounds}"


def two_communities(s: Session) -> Any:
    first, second = s.rng.sample(range(COMMUNITIES), 2)
    a, b = s.cid(first), s.cid(second)

    def both(tx: MembershipTransaction) -> str:
        tx.claim_relay_membership(a, new_pubkey())
        tx.claim_relay_membership(b, new_pubkey())
        return "joined_both"

    return s.write(both)


PATHS: dict[str, tuple[Callable[[Session], Any], float]] = {
    "add_relay_member": (add_member, 8),
    "add_relay_members (shared)": (add_members_shared, 4),
    "add_relay_members (fresh)": (add_members_fresh, 1),
    "claim_relay_membership": (claim, 6),
    "create_relay_invite": (create_invite, 3),
    "claim_relay_invite": (claim_invite, 5),
    "revoke_relay_invite": (revoke_invite, 1),
    "remove_relay_member": (remove, 6),
    "remove_relay_member_if_role": (remove_if_role, 3),
    "update_relay_member_role": (update_role, 4),
    "bootstrap_owner": (bootstrap, 1),
    "transfer_ownership": (transfer, 2),
    "allowlist_add": (allowlist, 1),
    "backfill_from_allowlist": (backfill, 1),
    "republish_member_list": (republish, 2),
    "archive_community": (archive, 0.7),
    "unarchive_community": (unarchive, 3),
    "delete_community (+ create)": (delete_and_recreate, 0.4),
    "create_community": (create_existing, 0.5),
    "rotate_relay_key": (rotate, 0.1),
    "two communities in one tx": (two_communities, 2),
}


def session_loop(s: Session, deadline: float) -> None:
    names = list(PATHS)
    weights = [PATHS[n][1] for n in names]
    first_round = names[:]
    s.rng.shuffle(first_round)  # every path at least once per session
    while time.monotonic() < deadline or first_round:
        name = first_round.pop() if first_round else s.rng.choices(names, weights)[0]
        s.run(name, PATHS[name][0])


class Listener:
    """LISTEN buzz_membership on a connection of its own, in a thread, until stopped."""

    def __init__(self, url: str) -> None:
        self.payloads: list[dict[str, Any]] = []
        self.conn = psycopg.connect(url, autocommit=True)
        self.conn.execute("LISTEN buzz_membership")
        self._stop = threading.Event()
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="listener", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                for note in self.conn.notifies(timeout=0.2):
                    self.payloads.append(json.loads(note.payload))
        except BaseException as exc:  # noqa: BLE001 - reported by the test thread
            self.error = exc

    def wait_for(self, count: int, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while len(self.payloads) < count and time.monotonic() < deadline:
            time.sleep(0.05)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(30)
        self.conn.close()


def summary(stats: dict[str, PathStats], seconds: float, world: World) -> str:
    def words(c: Counter) -> str:
        return ", ".join(f"{k} {v}" for k, v in sorted(c.items(), key=lambda kv: -kv[1])) or "-"

    total = PathStats()
    for st in stats.values():
        total.merge(st)
    lines = [
        "",
        (
            f"stress: {SESSIONS} sessions, {COMMUNITIES} communities, {seconds:.1f} s,"
            f" seed {SEED}, max_list_lead_seconds raised to {MAX_LEAD_SECONDS}"
        ),
        f"{'path':<30} {'calls':>6} {'commits':>7} {'lists':>6}  outcomes | retries | errors",
    ]
    for name in PATHS:
        st = stats.get(name, PathStats())
        lines.append(
            f"{name:<30} {st.started:>6} {st.committed:>7} {st.lists:>6}  {words(st.outcomes)}"
            f" | {words(st.retries)} | {words(st.errors)}"
        )
    lines.append(
        f"{'total':<30} {total.started:>6} {total.committed:>7} {total.lists:>6}"
        f"  retries: {words(total.retries)}; errors: {words(total.errors)};"
        f" {total.committed / seconds:.0f} commits/s; {world.rotations} rotation rounds"
    )
    return "\n".join(lines)


def test_stress_every_write_path(db_url, reader, su, capsys):
    su.execute("UPDATE buzz_private.settings SET max_list_lead_seconds = %s", (MAX_LEAD_SECONDS,))
    key = RelayKey.generate()
    hosts = [f"s{i}.stress.example.org" for i in range(COMMUNITIES)]
    world = World(key, hosts, [])
    with Membership.connect(db_url, key) as m:
        for i, host in enumerate(hosts):
            owner = world.owners[i % OWNERS]
            world.ids.append(m.create_community(host, owner).details["community_id"])
            m.add_relay_members(world.ids[-1], world.members[i * 5 : i * 5 + 5])

    listener = Listener(db_url)
    sessions = [Session(db_url, world, random.Random(SEED + n)) for n in range(SESSIONS)]
    started = time.monotonic()
    deadline = started + SECONDS
    threads = [
        threading.Thread(target=session_loop, args=(s, deadline), name=f"session {n}")
        for n, s in enumerate(sessions)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(SECONDS + 300)
    elapsed = time.monotonic() - started
    still_running = [t.name for t in threads if t.is_alive()]

    committed = [entry for s in sessions for entry in s.committed_lists]
    listener.wait_for(len(committed))
    listener.stop()
    for s in sessions:
        s.close()

    stats: dict[str, PathStats] = defaultdict(PathStats)
    for s in sessions:
        for name, st in s.stats.items():
            stats[name].merge(st)
    with capsys.disabled():
        print(summary(stats, elapsed, world), flush=True)

    assert not still_running
    assert listener.error is None, listener.error
    fatal = [msg for s in sessions for msg in s.fatal]
    unexpected = [msg for s in sessions for msg in s.unexpected]
    if fatal:
        pytest.fail(f"{len(fatal)} deadlock or serialization failures:\n" + "\n".join(fatal[:20]))
    if unexpected:
        pytest.fail(f"{len(unexpected)} unexpected errors:\n" + "\n".join(unexpected[:20]))
    assert all(stats[name].started for name in PATHS)

    # The database: every live list exact, verified, signed by the current key.
    assert reader.member_list_drift() == []
    communities = [r[0] for r in su.execute("SELECT community_id FROM buzz_private.communities")]
    assert sorted(communities) == sorted(world.ids)
    live = {}
    for cid in communities:
        ev = reader.member_list(cid)
        assert ev is not None, cid
        assert verify_event(ev), ev
        assert ev["pubkey"] == world.key.pubkey
        assert ev["tags"] == expected_tags(members_of(reader, cid))
        live[str(cid)] = ev

    # The NOTIFY stream, in commit order: exactly the committed lists; per community
    # strictly increasing created_at and no repeated id; the last one is the live one.
    notes = listener.payloads
    assert sorted((p["community_id"], p["id"], p["created_at"]) for p in notes) == sorted(committed)
    assert all(p["kind"] == KIND_MEMBERSHIP_LIST for p in notes)
    by_community: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for p in notes:
        by_community[p["community_id"]].append(p)
    for community, seq in by_community.items():
        times = [p["created_at"] for p in seq]
        assert all(a < b for a, b in itertools.pairwise(times)), (community, times)
        assert len({p["id"] for p in seq}) == len(seq)
        if community in live:
            assert (seq[-1]["id"], seq[-1]["created_at"]) == (
                live[community]["id"],
                live[community]["created_at"],
            )
