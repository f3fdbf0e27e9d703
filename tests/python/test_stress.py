"""Randomized stress: several sessions, each a thread with its own connection and Membership,
run every write path of SPEC section 3 against a few communities for a bounded time, including
archive, unarchive, delete (and re-creation) and key rotation, while a separate connection
LISTENs to buzz_membership.

Bans and join requests (SPEC section 3, amended 2026-12-02) mix in too: bans and unbans of
pooled pubkeys (their ban lock against every join), join policies changing, requests, and
approvals and rejections of pending ones.

The role paths of SPEC section 6 mix in: define_role (a small pool of role ids shared by all
sessions, base roles included, with labels and the other fields changing), delete_role,
assign_role and unassign_role of pooled pubkeys, and a transaction that defines a role, gives
it and adds a member at once.

Afterwards: no deadlock (40P01), no serialization failure (40001) and no unexpected error;
member_list_drift() is empty; every live list verifies, is signed by the current relay key and
names exactly relay_members, each member tag with exactly the defined roles relay_members
reports; every role held is defined, every defined role has its live 33534 (signed by the
current key) and no deletion, and every live 33534 and kind 5 verifies. In the NOTIFY stream
(delivered in commit order): created_at never decreases per community and strictly increases
from list to list, ids never repeat per community, the stream holds exactly the lists, 33534s
and kind 5s the sessions saw commit, its last list per community is the live one and its last
role event per role the live definition or deletion.

Retried, and counted: BZLAG (the lead bound), 55P03 (lock timeout) and BZKEY (a session still
signing with the key a rotation just replaced). BZARC and BZNCM are outcomes of racing an
archive or a deletion, counted as such; so is BZIRL, for assign_role only, when the role it
gives is not defined (never defined, or deleted by a racing session).

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
from conftest import CITUS
from fixtures_membership import new_pubkey

from buzz_signer.errors import BuzzError
from buzz_signer.keys import RelayKey
from buzz_signer.membership import Invite, Membership, MembershipTransaction
from buzz_signer.nostr import KIND_DELETION, KIND_MEMBERSHIP_LIST, KIND_ROLE, verify_event
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
# Role ids the role paths share (few, so that sessions race on the same roles), and the base
# roles, which define_role may redefine.
ROLE_IDS = ("mod", "helper", "vip", "bot-ops", "elder_1")
BASE_ROLES = ("owner", "admin", "member")
LABELS = ("Moderators", "Helpers", "Very important", "Bots", "Elders", "\u00c4ltere \u2603")
FATAL = frozenset({"40P01", "40001"})
MAX_ATTEMPTS = 200


@dataclass
class PathStats:
    started: int = 0
    committed: int = 0
    lists: int = 0
    role_events: int = 0  # 33534s and kind 5s committed
    outcomes: Counter = field(default_factory=Counter)
    retries: Counter = field(default_factory=Counter)
    errors: Counter = field(default_factory=Counter)

    def merge(self, other: PathStats) -> None:
        self.started += other.started
        self.committed += other.committed
        self.lists += other.lists
        self.role_events += other.role_events
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
        # The committed 33534s and kind 5s: (id, kind, created_at), and each event by id.
        self.committed_role_events: list[tuple[str, int, int]] = []
        self.role_events: dict[str, dict[str, Any]] = {}
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
        roles = [ev for ev in tx.events if ev["kind"] in (KIND_ROLE, KIND_DELETION)]
        for ev in roles:
            self.committed_role_events.append((ev["id"], ev["kind"], ev["created_at"]))
            self.role_events[ev["id"]] = ev
        self.stats[self._path].committed += 1
        self.stats[self._path].lists += len(tx.lists)
        self.stats[self._path].role_events += len(roles)
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
                (self.fatal if code in FATAL else self.unexpected).append(
                    f"{name}: {code} {exc}{server_detail(exc)}"
                )
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


def server_detail(exc: BuzzError) -> str:
    """The server's DETAIL and CONTEXT: for a deadlock, the cycle's processes and locks."""
    diag = getattr(exc.__cause__, "diag", None)
    parts = [diag.message_detail, diag.context] if diag else []
    return "".join(f"\n  {part}" for part in parts if part)


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
    # Looked up under the lock: a lookup made outside it could be overwritten by one made
    # later by another session (after a deletion and a new community), or overwrite it.
    with s.world.lock:
        found = s.m.community_id(host)
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


def _role_definition(s: Session) -> tuple[str, str | None, int | None, int | None]:
    """A label and the other fields, from few enough choices that some repeat (unchanged)."""
    label = s.rng.choice(LABELS)
    description = s.rng.choice([None, None, "Keeps the peace", '"quoted" \\ d\u00e9j\u00e0'])
    color = s.rng.choice([None, 0, 120, 360])
    order = s.rng.choice([None, 0, 7, -(2**31), 2**31 - 1])
    return label, description, color, order


def define_role(s: Session) -> Any:
    cid = s.cid(s.slot())
    role = s.rng.choice(BASE_ROLES) if s.rng.random() < 0.15 else s.rng.choice(ROLE_IDS)
    fields = _role_definition(s)
    return s.write(lambda tx: tx.define_role(cid, role, *fields))


def delete_role(s: Session) -> Any:
    cid, role = s.cid(s.slot()), s.rng.choice(ROLE_IDS)
    return s.write(lambda tx: tx.delete_role(cid, role))


def assign_role(s: Session) -> Any:
    cid, pk, role = s.cid(s.slot()), shared_pubkey(s), s.rng.choice(ROLE_IDS)
    try:
        return s.write(lambda tx: tx.assign_role(cid, pk, role))
    except BuzzError as exc:
        if exc.sqlstate != "BZIRL":
            raise
        return "BZIRL (undefined)"  # not defined, or deleted by a racing session


def unassign_role(s: Session) -> Any:
    cid, pk, role = s.cid(s.slot()), shared_pubkey(s), s.rng.choice(ROLE_IDS)
    if s.rng.random() < 0.6:  # mostly a role someone holds (as read a moment ago)
        holders = [(m.pubkey, r) for m in s.m.relay_members(cid) for r in m.roles]
        if holders:
            pk, role = s.rng.choice(holders)
    return s.write(lambda tx: tx.unassign_role(cid, pk, role))


def define_assign_add(s: Session) -> Any:
    """One transaction: define a role, give it to a pooled pubkey, add a fresh member."""
    cid, pk, role = s.cid(s.slot()), shared_pubkey(s), s.rng.choice(ROLE_IDS)
    fields = _role_definition(s)

    def together(tx: MembershipTransaction) -> str:
        defined = tx.define_role(cid, role, *fields)
        given = tx.assign_role(cid, pk, role)
        added = tx.add_relay_member(cid, new_pubkey(), "member", "stress")
        return f"{defined}+{given}+{added}"

    return s.write(together)


def ban(s: Session) -> Any:
    cid, pk = s.cid(s.slot()), shared_pubkey(s)
    return s.write(lambda tx: tx.ban_pubkey(cid, pk, "stress", "stress"))


def unban(s: Session) -> Any:
    cid, pk = s.cid(s.slot()), shared_pubkey(s)
    return s.write(lambda tx: tx.unban_pubkey(cid, pk))


def set_join_policy(s: Session) -> Any:
    cid, policy = s.cid(s.slot()), s.rng.choice(["invite", "request", "open"])
    return s.write(lambda tx: tx.set_join_policy(cid, policy))


def request_membership(s: Session) -> Any:
    cid, pk = s.cid(s.slot()), shared_pubkey(s)
    return s.write(lambda tx: tx.request_membership(cid, pk, new_pubkey(), "stress"))


def decide_join_request(s: Session) -> Any:
    """Approve or reject a pending request (as read a moment ago), or one that never was."""
    cid = s.cid(s.slot())
    pending = [r.request_id for r in s.m.join_requests(cid)]
    request_id = s.rng.choice(pending) if pending and s.rng.random() < 0.9 else new_pubkey()
    if s.rng.random() < 0.7:
        return s.write(lambda tx: tx.approve_join_request(cid, request_id, "stress"))
    return s.write(lambda tx: tx.reject_join_request(cid, request_id))


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
    "define_role": (define_role, 6),
    "delete_role": (delete_role, 1.5),
    "assign_role": (assign_role, 6),
    "unassign_role": (unassign_role, 3),
    "define+assign+add in one tx": (define_assign_add, 1.5),
    "ban_pubkey": (ban, 2),
    "unban_pubkey": (unban, 2),
    "set_join_policy": (set_join_policy, 1),
    "request_membership": (request_membership, 3),
    "approve or reject a join request": (decide_join_request, 3),
}
if CITUS:  # refused there with 0A000 (docs/scale-out.md), which test_citus.py shows
    del PATHS["two communities in one tx"]


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
        (
            f"{'path':<30} {'calls':>6} {'commits':>7} {'lists':>6} {'roles':>5}"
            "  outcomes | retries | errors"
        ),
    ]
    for name in PATHS:
        st = stats.get(name, PathStats())
        lines.append(
            f"{name:<30} {st.started:>6} {st.committed:>7} {st.lists:>6} {st.role_events:>5}"
            f"  {words(st.outcomes)} | {words(st.retries)} | {words(st.errors)}"
        )
    lines.append(
        f"{'total':<30} {total.started:>6} {total.committed:>7} {total.lists:>6}"
        f" {total.role_events:>5}"
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
    committed_roles = [entry for s in sessions for entry in s.committed_role_events]
    role_events = {i: ev for s in sessions for i, ev in s.role_events.items()}
    listener.wait_for(len(committed) + len(committed_roles))
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

    # The database: every live list exact, verified, signed by the current key, its member
    # tags naming exactly the defined roles relay_members reports.
    assert reader.member_list_drift() == []
    by_host = dict(su.execute("SELECT host, community_id FROM buzz_private.communities"))
    assert set(by_host) <= set(world.hosts)
    # Each host's community is the one the sessions last saw created there. A host may have
    # none: its last recreation can fail (limit_reached, host_taken) after its deletion.
    assert by_host == {h: i for h, i in zip(world.hosts, world.ids, strict=True) if h in by_host}
    communities = list(by_host.values())
    live = {}
    live_roles: dict[tuple[str, str], dict[str, Any]] = {}  # (community, role id) -> 33534 or 5
    held_roles = 0
    for cid in communities:
        ev = reader.member_list(cid)
        assert ev is not None, cid
        assert verify_event(ev), ev
        assert ev["pubkey"] == world.key.pubkey
        members = reader.relay_members(cid)
        assert ev["tags"] == [["-"]] + [["member", m.pubkey, m.role, *m.roles] for m in members]
        live[str(cid)] = ev

        # Roles: what is defined has its live 33534 (by the current key) and no deletion; what
        # is held is defined; every 33534 and kind 5 verifies.
        defined = {
            r[0]: r[1:]
            for r in su.execute(
                "SELECT role_id, label, description, color, sort_order FROM buzz_private.roles"
                " WHERE community_id = %s",
                (cid,),
            )
        }
        assert set(BASE_ROLES) <= set(defined), defined
        definitions = reader.role_definitions(cid)
        by_role = {d["tags"][1][1]: d for d in definitions}
        assert len(by_role) == len(definitions)
        assert set(by_role) == set(defined)
        for role, d in by_role.items():
            assert verify_event(d), d
            assert d["kind"] == KIND_ROLE and d["pubkey"] == world.key.pubkey
            label, description, color, order = defined[role]
            fields = {"label": label, "description": description, "color": color, "order": order}
            want = [
                [k, str(v) if isinstance(v, int) else v] for k, v in fields.items() if v is not None
            ]
            assert d["tags"] == [["-"], ["d", role], *want], (d, defined[role])
            live_roles[(str(cid), role)] = d
        for deletion in reader.role_deletions(cid):
            assert verify_event(deletion), deletion
            assert deletion["kind"] == KIND_DELETION
            minus, (a, address), k = deletion["tags"]
            kind, pubkey, role = address.split(":")
            assert (minus, a, k, kind) == (["-"], "a", ["k", str(KIND_ROLE)], str(KIND_ROLE))
            assert pubkey == deletion["pubkey"]  # deletes the 33534 that key signed
            assert role not in defined, deletion
            live_roles[(str(cid), role)] = deletion
        for m in members:
            assert set(m.roles) <= set(defined) - set(BASE_ROLES), m
            assert m.roles == sorted(m.roles), m
            held_roles += len(m.roles)
    with capsys.disabled():
        print(f"at the end: {held_roles} defined roles held, {len(live_roles)} role events live")

    # The NOTIFY stream, in commit order: exactly the committed lists, 33534s and kind 5s;
    # per community created_at never decreases (a transaction's events share one) and
    # strictly increases from list to list; no id repeats; the last list is the live one,
    # and the last event of each role its live definition or deletion.
    notes = listener.payloads
    note_lists = [p for p in notes if p["kind"] == KIND_MEMBERSHIP_LIST]
    note_roles = [p for p in notes if p["kind"] != KIND_MEMBERSHIP_LIST]
    assert sorted((p["community_id"], p["id"], p["created_at"]) for p in note_lists) == sorted(
        committed
    )
    assert sorted((p["id"], p["kind"], p["created_at"]) for p in note_roles) == sorted(
        committed_roles
    )
    assert {p["kind"] for p in note_roles} <= {KIND_ROLE, KIND_DELETION}
    by_community: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for p in notes:
        by_community[p["community_id"]].append(p)
    for community, seq in by_community.items():
        times = [p["created_at"] for p in seq]
        assert all(a <= b for a, b in itertools.pairwise(times)), (community, times)
        list_times = [p["created_at"] for p in seq if p["kind"] == KIND_MEMBERSHIP_LIST]
        assert all(a < b for a, b in itertools.pairwise(list_times)), (community, list_times)
        assert len({p["id"] for p in seq}) == len(seq)
        if community not in live:
            continue
        last_list = [p for p in seq if p["kind"] == KIND_MEMBERSHIP_LIST][-1]
        assert (last_list["id"], last_list["created_at"]) == (
            live[community]["id"],
            live[community]["created_at"],
        )
        last_by_role: dict[str, dict[str, Any]] = {}
        for p in seq:
            if p["kind"] == KIND_ROLE:
                last_by_role[role_events[p["id"]]["tags"][1][1]] = p
            elif p["kind"] == KIND_DELETION:
                last_by_role[role_events[p["id"]]["tags"][1][1].rsplit(":", 1)[1]] = p
        for role, p in last_by_role.items():
            ev = live_roles[(community, role)]
            assert (p["id"], p["kind"], p["created_at"]) == (
                ev["id"],
                ev["kind"],
                ev["created_at"],
            ), (community, role)
