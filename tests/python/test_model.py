"""Property-based: random sequences of writes against a plain Python model of membership.

A Hypothesis state machine drives the Python layer (`Membership`: one call per transaction, or
several calls in one `Membership.transaction()`) with every write path: add, add batch, remove,
remove if role, update role, claim, invites (create, claim, revoke), bootstrap_owner,
transfer_ownership, allowlist and backfill, archive/unarchive, republish, create and delete
communities. The model is a dict pubkey -> role per community, plus the archived flag, the
allowlist, the invites and the hosts; at most one owner per community, and each owner owns at
most MAX_OWNED communities (the database's setting is lowered to that for this test).

Each step predicts every outcome (or error) from the model, runs the calls, and after the
commit checks that:
- every outcome is the predicted one; an error rolls the whole transaction back, and the model
  with it;
- for every community, the live list names exactly the model's members and roles, in pubkey
  order, is signed by the relay key and verifies, and member_list_drift finds nothing;
- a community whose members changed got a new list whose created_at is strictly greater than
  its previous one, and 8000/8001 events for exactly the pubkeys that joined or left (net
  effect over the transaction); a community the transaction did not touch keeps its live list
  byte for byte; a single call that changed nothing returns snapshot None and no events.

A small pool of pubkeys (fresh for each example) makes collisions common. One database per
test; each example starts with a new community.
"""

from __future__ import annotations

import copy
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conftest import CITUS
from fixtures_membership import expected_tags, live_text, new_pubkey
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.database import DirectoryBasedExampleDatabase
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    precondition,
    rule,
    run_state_machine_as_test,
)

from buzz_signer import citus
from buzz_signer.errors import BuzzError, CommunityArchived, CommunityNotFound
from buzz_signer.keys import RelayKey
from buzz_signer.membership import Invite, Membership, MembershipWrite
from buzz_signer.nostr import KIND_ADD_USER, KIND_MEMBERSHIP_LIST, KIND_REMOVE_USER, verify_event

pytest_plugins = ("fixtures_membership",)

MAX_OWNED = 1  # max_communities_per_owner for this test: makes limit_reached common
POOL = 6  # pubkeys per example
HOSTS = 3  # hosts per example
LIVE_PICKS = 6  # community index draws 0..LIVE_PICKS: below it a live community
REPO = Path(__file__).resolve().parents[2]
RUN: Counter[str] = Counter()
OUTCOMES: Counter[str] = Counter()


class _Any:
    def __eq__(self, other: object) -> bool:
        return True

    def __repr__(self) -> str:
        return "ANY"


ANY = _Any()


# The model.


@dataclass
class CModel:
    host: str
    members: dict[str, str]
    archived: bool = False
    allowlist: set[str] = field(default_factory=set)


@dataclass
class IModel:
    code: str
    invite_id: uuid.UUID
    cid: uuid.UUID
    max_uses: int | None
    use_count: int = 0
    revoked: bool = False


@dataclass
class Model:
    communities: dict[uuid.UUID, CModel] = field(default_factory=dict)
    order: list[uuid.UUID] = field(default_factory=list)  # every community ever, deleted too
    invites: list[IModel] = field(default_factory=list)
    # This transaction: communities whose member rows changed, and those marked for republish.
    touched: set[uuid.UUID] = field(default_factory=set)
    republished: set[uuid.UUID] = field(default_factory=set)

    def begin(self) -> Model:
        m = copy.deepcopy(self)
        m.touched, m.republished = set(), set()
        return m

    def owned(self, pk: str) -> int:
        return sum(1 for c in self.communities.values() if c.members.get(pk) == "owner")

    def host_id(self, host: str) -> uuid.UUID | None:
        return next((cid for cid, c in self.communities.items() if c.host == host), None)


@dataclass
class Call:
    """A bound call: method name and arguments, the expected answer or error, and a hook
    that updates the model from the answer (for ids and codes the database chooses)."""

    method: str
    args: tuple[Any, ...]
    expect: Any = None
    error: type[BuzzError] | None = None
    learn: Any = None


@dataclass
class Ctx:
    pool: list[str]
    hosts: list[str]


def _pick(m: Model, ci: int) -> uuid.UUID:
    """Mostly a live community; ci == LIVE_PICKS: any community ever made, deleted ones too."""
    live = [cid for cid in m.order if cid in m.communities]
    if ci < LIVE_PICKS and live:
        return live[ci % len(live)]
    return m.order[ci % len(m.order)]


def _community(m: Model, ci: int, allow_archived: bool = False):
    cid = _pick(m, ci)
    c = m.communities.get(cid)
    if c is None:
        return cid, None, CommunityNotFound
    if c.archived and not allow_archived:
        return cid, c, CommunityArchived
    return cid, c, None


# Operations: Hypothesis draws these; bind() predicts from the model (updating it) and says
# what to call.


@dataclass(frozen=True)
class Add:
    ci: int
    pk: int
    role: str

    def bind(self, m: Model, x: Ctx) -> Call:
        cid, c, err = _community(m, self.ci)
        pk = x.pool[self.pk]
        call = Call("add_relay_member", (cid, pk.upper(), self.role, "model"))
        if err:
            call.error = err
        elif pk in c.members:
            call.expect = "already_member"
        else:
            c.members[pk] = self.role
            m.touched.add(cid)
            call.expect = "added"
        return call


@dataclass(frozen=True)
class AddBatch:
    ci: int
    pks: tuple[int, ...]
    upper: tuple[bool, ...]
    role: str

    def bind(self, m: Model, x: Ctx) -> Call:
        cid, c, err = _community(m, self.ci)
        given = [
            x.pool[i].upper() if up else x.pool[i]
            for i, up in zip(self.pks, self.upper + (False,) * len(self.pks), strict=False)
        ]
        call = Call("add_relay_members", (cid, given, self.role, "batch"))
        if err:
            call.error = err
            return call
        new = {pk.lower() for pk in given} - set(c.members)
        for pk in new:
            c.members[pk] = self.role
        if new:
            m.touched.add(cid)
        call.expect = len(new)
        return call


@dataclass(frozen=True)
class Remove:
    ci: int
    pk: int

    def bind(self, m: Model, x: Ctx) -> Call:
        cid, c, err = _community(m, self.ci)
        pk = x.pool[self.pk]
        call = Call("remove_relay_member", (cid, pk))
        if err:
            call.error = err
        elif pk not in c.members:
            call.expect = "not_member"
        elif c.members[pk] == "owner":
            call.expect = "is_owner"
        else:
            del c.members[pk]
            m.touched.add(cid)
            call.expect = "removed"
        return call


@dataclass(frozen=True)
class RemoveIfRole:
    ci: int
    pk: int
    role: str

    def bind(self, m: Model, x: Ctx) -> Call:
        cid, c, err = _community(m, self.ci)
        pk = x.pool[self.pk]
        call = Call("remove_relay_member_if_role", (cid, pk, self.role))
        current = c.members.get(pk) if c else None
        if err:
            call.error = err
        elif current is None:
            call.expect = "not_member"
        elif current == "owner":
            call.expect = "is_owner"
        elif current != self.role:
            call.expect = "role_mismatch"
        else:
            del c.members[pk]
            m.touched.add(cid)
            call.expect = "removed"
        return call


@dataclass(frozen=True)
class UpdateRole:
    ci: int
    pk: int
    role: str

    def bind(self, m: Model, x: Ctx) -> Call:
        cid, c, err = _community(m, self.ci)
        pk = x.pool[self.pk]
        call = Call("update_relay_member_role", (cid, pk, self.role))
        current = c.members.get(pk) if c else None
        if err:
            call.error = err
        elif current is None:
            call.expect = "not_member"
        elif current == "owner":
            call.expect = "is_owner"
        elif current == self.role:
            call.expect = "unchanged"
        else:
            c.members[pk] = self.role
            m.touched.add(cid)
            call.expect = "updated"
        return call


@dataclass(frozen=True)
class Claim:
    ci: int
    pk: int
    policy: str | None

    def bind(self, m: Model, x: Ctx) -> Call:
        cid, c, err = _community(m, self.ci)
        pk = x.pool[self.pk]
        call = Call("claim_relay_membership", (cid, pk, self.policy))
        if err:
            call.error = err
        elif pk in c.members:
            call.expect = "already_member"
        else:
            c.members[pk] = "member"
            m.touched.add(cid)
            call.expect = "joined"
        return call


@dataclass(frozen=True)
class CreateInvite:
    ci: int
    max_uses: int | None

    def bind(self, m: Model, x: Ctx) -> Call:
        cid, _, err = _community(m, self.ci)
        call = Call("create_relay_invite", (cid, "model", self.max_uses), expect=ANY, error=err)

        def learn(invite: Invite) -> None:
            assert len(invite.code) == 32
            m.invites.append(IModel(invite.code, invite.invite_id, cid, self.max_uses))

        call.learn = learn
        return call


@dataclass(frozen=True)
class ClaimInvite:
    ii: int
    ci: int | None  # None: the invite's own community
    pk: int
    upper: bool

    def bind(self, m: Model, x: Ctx) -> Call:
        inv = m.invites[self.ii % len(m.invites)] if m.invites else None
        if self.ci is None and inv is not None:
            cid = inv.cid
            c = m.communities.get(cid)
            err = None if c and not c.archived else CommunityArchived if c else CommunityNotFound
        else:
            cid, c, err = _community(m, self.ci or 0)
        pk = x.pool[self.pk]
        code = inv.code if inv else "0" * 32
        call = Call("claim_relay_invite", (cid, code.upper() if self.upper else code, pk, "v1"))
        if err:
            call.error = err
            return call
        if inv is None or inv.cid != cid or inv.revoked:
            call.expect = ("invalid", None, None)
            return call
        remaining = None if inv.max_uses is None else inv.max_uses - inv.use_count
        if pk in c.members:
            call.expect = ("already_member", inv.use_count, remaining)
        elif remaining == 0:
            call.expect = ("exhausted", inv.use_count, 0)
        else:
            inv.use_count += 1
            c.members[pk] = "member"
            m.touched.add(cid)
            call.expect = ("joined", inv.use_count, None if remaining is None else remaining - 1)
        return call


@dataclass(frozen=True)
class RevokeInvite:
    ii: int
    ci: int | None  # None: the invite's own community

    def bind(self, m: Model, x: Ctx) -> Call:
        inv = m.invites[self.ii % len(m.invites)] if m.invites else None
        if self.ci is None and inv is not None:
            cid = inv.cid
            err = None if cid in m.communities else CommunityNotFound
        else:
            cid, _, err = _community(m, self.ci or 0, allow_archived=True)
        call = Call("revoke_relay_invite", (cid, inv.invite_id if inv else uuid.uuid4()))
        if err:
            call.error = err
        elif inv is None or inv.cid != cid or inv.revoked:
            call.expect = "not_found"
        else:
            inv.revoked = True
            call.expect = "revoked"
        return call


@dataclass(frozen=True)
class Bootstrap:
    ci: int
    pk: int

    def bind(self, m: Model, x: Ctx) -> Call:
        cid, c, err = _community(m, self.ci)
        pk = x.pool[self.pk]
        call = Call("bootstrap_owner", (cid, pk))
        if err:
            call.error = err
        elif c.members.get(pk) == "owner":
            call.expect = "unchanged"
        else:
            for other, role in list(c.members.items()):
                if role == "owner":
                    c.members[other] = "admin"
            c.members[pk] = "owner"
            m.touched.add(cid)
            call.expect = "provisioned"
        return call


@dataclass(frozen=True)
class Transfer:
    ci: int
    pk: int
    expected: int | None  # pool index of the expected owner, or None

    def bind(self, m: Model, x: Ctx) -> Call:
        cid, c, err = _community(m, self.ci)
        new = x.pool[self.pk]
        expected = None if self.expected is None else x.pool[self.expected]
        call = Call("transfer_ownership", (cid, new, expected))
        if err:
            call.error = err
            return call
        owner = next((pk for pk, role in c.members.items() if role == "owner"), None)
        if owner is None:
            call.expect = "no_owner"
        elif owner == new:
            call.expect = "already_owner"
        elif expected is not None and expected != owner:
            call.expect = "owner_conflict"
        elif m.owned(new) >= MAX_OWNED:
            call.expect = "limit_reached"
        else:
            c.members[owner] = "member"
            c.members[new] = "owner"
            m.touched.add(cid)
            call.expect = "transferred"
        return call


@dataclass(frozen=True)
class AllowlistAdd:
    ci: int
    pk: int

    def bind(self, m: Model, x: Ctx) -> Call:
        cid, c, err = _community(m, self.ci)
        pk = x.pool[self.pk]
        call = Call("allowlist_add", (cid, pk, "model"))
        if err:
            call.error = err
        elif pk in c.allowlist:
            call.expect = "already_listed"
        else:
            c.allowlist.add(pk)
            call.expect = "added"
        return call


@dataclass(frozen=True)
class Backfill:
    ci: int

    def bind(self, m: Model, x: Ctx) -> Call:
        cid, c, err = _community(m, self.ci)
        call = Call("backfill_from_allowlist", (cid,))
        if err:
            call.error = err
        elif any(role != "owner" for role in c.members.values()):
            call.expect = 0
        else:
            new = c.allowlist - set(c.members)
            for pk in new:
                c.members[pk] = "member"
            if new:
                m.touched.add(cid)
            call.expect = len(new)
        return call


@dataclass(frozen=True)
class Archive:
    ci: int
    archive: bool

    def bind(self, m: Model, x: Ctx) -> Call:
        cid, c, err = _community(m, self.ci, allow_archived=True)
        archived = [cid for cid in m.order if cid in m.communities and m.communities[cid].archived]
        if not self.archive and archived and self.ci < LIVE_PICKS:  # mostly unarchive one
            cid = archived[self.ci % len(archived)]
            c, err = m.communities[cid], None
        call = Call("archive_community" if self.archive else "unarchive_community", (cid,))
        if err:
            call.error = err
        elif c.archived == self.archive:
            call.expect = "unchanged"
        else:
            c.archived = self.archive
            call.expect = "archived" if self.archive else "unarchived"
        return call


@dataclass(frozen=True)
class Republish:
    ci: int

    def bind(self, m: Model, x: Ctx) -> Call:
        cid, _, err = _community(m, self.ci, allow_archived=True)
        call = Call("republish_member_list", (cid,), error=err)
        if not err:
            m.republished.add(cid)
        return call


@dataclass(frozen=True)
class CreateCommunity:
    hi: int
    pk: int
    upper: bool

    def bind(self, m: Model, x: Ctx) -> Call:
        host, owner = x.hosts[self.hi], x.pool[self.pk]
        call = Call("create_community", (host.upper() if self.upper else host, owner))
        existing = m.host_id(host)
        if existing is not None:
            mine = m.communities[existing].members.get(owner) == "owner"
            call.expect = ("exists", existing) if mine else ("host_taken", None)
        elif m.owned(owner) >= MAX_OWNED:
            call.expect = ("limit_reached", None)
        else:
            call.expect = ("created", ANY)

            def learn(answer: tuple[str, uuid.UUID]) -> None:
                cid = answer[1]
                assert cid not in m.order
                m.communities[cid] = CModel(host, {owner: "owner"})
                m.order.append(cid)
                m.touched.add(cid)

            call.learn = learn
        return call


@dataclass(frozen=True)
class Delete:
    ci: int

    def bind(self, m: Model, x: Ctx) -> Call:
        cid = _pick(m, self.ci)
        call = Call("delete_community", (cid,))
        if cid in m.communities:
            del m.communities[cid]
            m.touched.discard(cid)
            m.republished.discard(cid)
            call.expect = "deleted"
        else:
            call.expect = "not_found"
        return call


ci = st.integers(0, LIVE_PICKS)
pk = st.integers(0, POOL - 1)
member_role = st.sampled_from(["member", "admin"])
# (strategy, weight): one_of picks each branch equally often, so a branch is repeated `weight`
# times. Deleting is rare, so that communities live long enough to collect members.
WEIGHTED = [
    (st.builds(Add, ci, pk, member_role), 3),
    (
        st.builds(
            AddBatch,
            ci,
            st.lists(pk, max_size=4).map(tuple),
            st.lists(st.booleans(), max_size=4).map(tuple),
            member_role,
        ),
        2,
    ),
    (st.builds(Remove, ci, pk), 3),
    (st.builds(RemoveIfRole, ci, pk, st.sampled_from(["owner", "admin", "member"])), 2),
    (st.builds(UpdateRole, ci, pk, member_role), 2),
    (st.builds(Claim, ci, pk, st.sampled_from([None, "v1", "v2"])), 2),
    (st.builds(CreateInvite, ci, st.sampled_from([1, 2, None])), 2),
    (st.builds(ClaimInvite, st.integers(0, 3), st.none() | ci, pk, st.booleans()), 4),
    (st.builds(RevokeInvite, st.integers(0, 3), st.none() | ci), 1),
    (st.builds(Bootstrap, ci, pk), 1),
    (st.builds(Delete, ci), 1),
    (st.builds(Transfer, ci, pk, st.none() | pk), 2),
    (st.builds(AllowlistAdd, ci, pk), 2),
    (st.builds(Backfill, ci), 1),
    (st.builds(Archive, ci, st.just(True)), 1),
    (st.builds(Archive, ci, st.just(False)), 3),
    (st.builds(Republish, ci), 1),
    (st.builds(CreateCommunity, st.integers(0, HOSTS - 1), pk, st.booleans()), 2),
]
OPS = st.one_of(*[strategy for strategy, weight in WEIGHTED for _ in range(weight)])


class SecondCommunity(BuzzError):
    """On a Citus cluster a transaction writes one community: 0A000 (docs/scale-out.md)."""

    sqlstate = "0A000"


NEW = uuid.UUID(int=0)  # what a creation routes to: the community it creates
ROUTED = {*citus.WORKER_WRITES, *citus.COORDINATOR_WRITES}


def _routed_to(call: Call) -> uuid.UUID | None:
    """On a cluster, the community whose worker a call's transaction is then pinned to: that
    of a write of one community, whatever its outcome, or the one a creation makes. None on
    one server, and for changes of the communities table (archive, delete), which any
    community's transaction may make."""
    if not CITUS:
        return None
    if call.method == "create_community":
        return NEW if call.expect[0] == "created" else None
    return call.args[0] if call.method in ROUTED else None


def _normalize(method: str, answer: Any) -> Any:
    """The answer of a MembershipTransaction method, or of a Membership call, in one shape."""
    if isinstance(answer, MembershipWrite):
        if method in ("claim_relay_invite", "create_community"):
            answer = {"outcome": answer.outcome, **answer.details}
        else:
            return answer.outcome
    if method == "claim_relay_invite":
        return (answer["outcome"], answer["use_count"], answer["uses_remaining"])
    if method == "create_community":
        return (answer["outcome"], answer["community_id"])
    return answer


def make_machine(mem: Membership, reader: Membership, key: RelayKey) -> type:
    class MembershipMachine(RuleBasedStateMachine):
        @initialize()
        def start(self) -> None:
            RUN["examples"] += 1
            self.ctx = Ctx(
                [new_pubkey() for _ in range(POOL)],
                [f"h{i}-{uuid.uuid4().hex[:12]}.model.example.org" for i in range(HOSTS)],
            )
            self.model = Model()
            self.live: dict[uuid.UUID, str | None] = {}
            self.created_at: dict[uuid.UUID, int] = {}
            self.step([CreateCommunity(0, POOL // 2, False)], single=True)

        @precondition(lambda self: not self.model.communities)
        @rule(hi=st.integers(0, HOSTS - 1), pk=pk)
        def recreate(self, hi: int, pk: int) -> None:
            """Everything deleted: most calls would only answer BZNCM now."""
            self.step([CreateCommunity(hi, pk, False)], single=True)

        @rule(op=OPS)
        def single(self, op: Any) -> None:
            self.step([op], single=True)

        @rule(ops=st.lists(OPS, min_size=2, max_size=4))
        def batch(self, ops: list[Any]) -> None:
            self.step(ops, single=False)

        def step(self, ops: list[Any], single: bool) -> None:
            RUN["steps"] += 1
            RUN["calls"] += len(ops)
            before = self.model
            pending = before.begin()
            error: type[BuzzError] | None = None
            answers: list[Any] = []
            lists: dict[str, dict[str, Any]] = {}
            try:
                if single:
                    call = ops[0].bind(pending, self.ctx)
                    error = call.error
                    answer = getattr(mem, call.method)(*call.args)
                    self._check_answer(call, answer)
                    answers.append(answer)
                else:
                    with mem.transaction() as tx:
                        routed: uuid.UUID | None = None
                        for op in ops:
                            call = op.bind(pending, self.ctx)
                            error = call.error
                            target = _routed_to(call)
                            if target is not None and routed not in (None, target):
                                error = SecondCommunity
                            answer = getattr(tx, call.method)(*call.args)
                            self._check_answer(call, answer)
                            if target is not None and routed is None:
                                routed = (
                                    _normalize(call.method, answer)[1] if target is NEW else target
                                )
                        # Members of a community archived later in this transaction changed:
                        # prepare refuses (BZARC), at the end of the block.
                        error = self._archived_at_prepare(pending)
                        call = Call("prepare_membership_events", ())
                    lists = tx.lists
            except BuzzError as exc:
                assert error is not None, f"unexpected {exc!r}"
                assert isinstance(exc, error) or exc.sqlstate == error.sqlstate, (
                    f"expected {error.__name__}, got {exc!r}"
                )
                RUN[f"rolled back ({error.__name__})"] += 1
                OUTCOMES[f"{call.method}:{error.__name__}"] += 1
                self.check_committed(before, before.begin(), {})
                return
            assert error is None, f"expected {error.__name__}, nothing raised"
            if single:
                self._check_single(pending, answers[0])
                if isinstance(answers[0], MembershipWrite) and answers[0].snapshot is not None:
                    cid = next(iter(pending.touched | pending.republished))
                    lists = {str(cid): answers[0].snapshot}
            self.model = pending
            self.check_committed(before, pending, lists)

        def _archived_at_prepare(self, m: Model) -> type[BuzzError] | None:
            for cid in m.touched:
                c = m.communities.get(cid)
                if c is not None and c.archived:
                    return CommunityArchived
            return None

        def _check_answer(self, call: Call, answer: Any) -> None:
            assert call.error is None, f"{call.method} should have raised {call.error}"
            got = _normalize(call.method, answer)
            assert got == call.expect, (call.method, call.args, got, call.expect)
            outcome = got[0] if isinstance(got, tuple) else got
            OUTCOMES[f"{call.method}:{'invite' if isinstance(got, Invite) else outcome}"] += 1
            if call.learn is not None:
                call.learn(got)

        def _check_single(self, m: Model, answer: Any) -> None:
            """A single call: a list exactly when it changed members (or republished)."""
            if not isinstance(answer, MembershipWrite):
                return  # invites, allowlist, archive: no list, their answer as it is
            wrote = bool(m.touched | m.republished)
            assert (answer.snapshot is not None) == wrote, (answer, m.touched, m.republished)
            if not wrote:
                assert answer.events == ()
                RUN["no-op calls (snapshot None)"] += 1

        def check_committed(self, before: Model, after: Model, lists: dict[str, Any]) -> None:
            """The committed state equals the model: members, lists, events, created_at."""
            for host in self.ctx.hosts:  # rolled-back creations and deletions included
                assert reader.community_id(host.upper()) == after.host_id(host)
            for cid in after.order:
                c = after.communities.get(cid)
                members = {m.pubkey: m.role for m in reader.relay_members(cid)}
                text = live_text(reader, cid)
                if c is None:
                    assert members == {} and text is None
                    continue
                assert members == c.members
                assert list(members) == sorted(members)
                assert sum(1 for r in members.values() if r == "owner") <= 1
                live = reader.member_list(cid)
                assert live["kind"] == KIND_MEMBERSHIP_LIST
                assert live["pubkey"] == key.pubkey
                assert live["tags"] == expected_tags(c.members)
                assert verify_event(live), live
                assert reader.member_list_drift(cid) == []
                old = before.communities.get(cid)
                old_members = old.members if old else {}
                changed = old is None or old_members != c.members
                if str(cid) in lists:
                    assert lists[str(cid)] == live
                    if cid in self.created_at:
                        assert live["created_at"] > self.created_at[cid]
                    self._check_events(cid, live, old_members, c.members)
                    RUN["lists committed"] += 1
                else:
                    assert not changed and cid not in after.republished, cid
                    assert text == self.live[cid]  # byte for byte
                if cid not in after.touched and cid not in after.republished:
                    assert str(cid) not in lists
                self.live[cid] = text
                self.created_at[cid] = live["created_at"]

        def _check_events(
            self, cid: uuid.UUID, live: dict[str, Any], old: dict[str, str], new: dict[str, str]
        ) -> None:
            events = reader.membership_events(cid, live["created_at"])
            joined, left = sorted(set(new) - set(old)), sorted(set(old) - set(new))
            assert [(e["kind"], e["tags"]) for e in events] == (
                [(KIND_ADD_USER, [["-"], ["p", pk]]) for pk in joined]
                + [(KIND_REMOVE_USER, [["-"], ["p", pk]]) for pk in left]
            )
            for e in events:
                assert e["created_at"] == live["created_at"] and verify_event(e)

    return MembershipMachine


def test_membership_matches_model(mem, reader, key, su, capsys) -> None:
    su.execute("UPDATE buzz_private.settings SET max_communities_per_owner = %s", (MAX_OWNED,))
    RUN.clear()
    OUTCOMES.clear()
    machine = make_machine(mem, reader, key)
    run_state_machine_as_test(
        machine,
        settings=settings(
            max_examples=60,
            stateful_step_count=25,
            deadline=None,
            database=DirectoryBasedExampleDatabase(str(REPO / ".hypothesis" / "examples")),
            suppress_health_check=[HealthCheck.too_slow],
            print_blob=True,
        ),
    )
    with capsys.disabled():
        print(
            "\nmodel: "
            + ", ".join(f"{n} {what}" for what, n in sorted(RUN.items(), key=lambda kv: kv[0]))
        )
        print("outcomes: " + ", ".join(f"{what} {n}" for what, n in sorted(OUTCOMES.items())))
