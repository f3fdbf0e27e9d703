"""The main job on a local database: membership changes, each committed with its signed list.

Run by `make demo` against a freshly created database (DATABASE_URL). Uses the relay key in
BUZZ_RELAY_SECRET_KEY when set, else a new one for this run.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections import Counter

from . import migrate
from .keys import RelayKey
from .membership import Membership, MembershipWrite
from .nip19 import encode_npub
from .nostr import verify_event

HOST = "relay.example.org"


def person(name: str) -> str:
    """A stable pubkey for a demo name (any 32-byte x-only key works as a member)."""
    return RelayKey.from_secret(hashlib.sha256(name.encode()).hexdigest()).pubkey


def show(what: str, write: MembershipWrite) -> None:
    kinds = Counter(ev["kind"] for ev in write.events)
    roles = f", {kinds[33534]} role definition(s)" if kinds[33534] else ""
    roles += f", {kinds[5]} role deletion(s)" if kinds[5] else ""
    if write.snapshot is None:
        print(f"  {what:<48} -> {write.outcome!s:<16} (no list){roles or ', no change'}")
    else:
        members = len(write.snapshot["tags"]) - 1
        print(
            f"  {what:<48} -> {write.outcome!s:<16} list {write.snapshot['id'][:12]}… "
            f"created_at {write.snapshot['created_at']}, {members} members, "
            f"{kinds[8000] + kinds[8001]} 8000/8001 event(s){roles}"
        )


def main() -> int:
    url = os.environ.get("DATABASE_URL")
    if not url:
        print("Set DATABASE_URL (make demo does).", file=sys.stderr)
        return 2
    print("1. migrate: tables, roles, grants, every function")
    migrate.upgrade(url)

    if os.environ.get("BUZZ_RELAY_SECRET_KEY"):
        key = RelayKey.from_env()
        print(f"2. relay key from BUZZ_RELAY_SECRET_KEY: {key.npub}")
    else:
        key = RelayKey.generate()
        print(f"2. a new relay key for this run: {key.npub}")

    names = ["owner", "alice", "bob", "carol", "dave", "erin", "frank"]
    pk = {name: person(name) for name in names}
    with Membership.connect(url, key) as m:
        print(f"3. community {HOST}, and membership writes (each one transaction):")
        created = m.create_community(HOST, pk["owner"])
        show(f"create_community({HOST}, owner)", created)
        community = created.details["community_id"]

        show("add_relay_member(alice)", m.add_relay_member(community, pk["alice"]))
        show("add_relay_member(bob, admin)", m.add_relay_member(community, pk["bob"], "admin"))
        show(
            "claim_relay_membership(carol, policy v1)",
            m.claim_relay_membership(community, pk["carol"], "v1"),
        )
        show("add_relay_member(alice) again", m.add_relay_member(community, pk["alice"]))
        invite = m.create_relay_invite(community, pk["bob"], max_uses=2)
        print(
            f"  create_relay_invite(max 2 uses)                  -> code shown once: {invite.code}"
        )
        claim = m.claim_relay_invite(community, invite.code, pk["dave"])
        show(f"claim_relay_invite(dave) [{claim.details['uses_remaining']} use left]", claim)
        show(
            "update_relay_member_role(bob, member)",
            m.update_relay_member_role(community, pk["bob"], "member"),
        )
        show(
            "remove_relay_member_if_role(carol, admin)",
            m.remove_relay_member_if_role(community, pk["carol"], "admin"),
        )
        show("remove_relay_member(carol)", m.remove_relay_member(community, pk["carol"]))
        show("remove_relay_member(owner)", m.remove_relay_member(community, pk["owner"]))
        show(
            "transfer_ownership(alice, expected owner)",
            m.transfer_ownership(community, pk["alice"], pk["owner"]),
        )

        print("4. one transaction, three changes, one list:")
        with m.transaction() as tx:
            print(
                f"  add erin: {tx.add_relay_member(community, pk['erin'])}, "
                f"add frank: {tx.add_relay_member(community, pk['frank'])}, "
                f"remove dave: {tx.remove_relay_member(community, pk['dave'])}"
            )
        kinds = [ev["kind"] for ev in tx.events]
        print(f"  events: {kinds}")

        print("5. roles clients can discover (kind 33534), and member tags that name them:")
        show(
            "define_role(moderator)",
            m.define_role(community, "moderator", "Moderator", "Keeps the peace", 210, 3),
        )
        show("assign_role(erin, moderator)", m.assign_role(community, pk["erin"], "moderator"))
        show("define_role(greeter)", m.define_role(community, "greeter", "Greeter"))
        show("delete_role(greeter)", m.delete_role(community, "greeter"))
        for ev in m.role_definitions(community):
            tags = dict(t for t in ev["tags"][1:] if len(t) == 2)
            print(
                f"  33534 {tags['d']:<10} {tags.get('label', ''):<10} verifies: {verify_event(ev)}"
            )

        live = m.member_list(community)
        print("6. the live signed list (kind 13534), as a relay serves it:")
        print(json.dumps(live, separators=(",", ":")))
        names_by_pk = {v: k for k, v in pk.items()}
        for _, member, role, *held in live["tags"][1:]:
            line = f"  {names_by_pk.get(member, '?'):<6} {role:<7} {encode_npub(member)}"
            print(" ".join([line, *held]))

        print("7. verification, independent of the database:")
        ok_ours = verify_event(live)
        print(f"  buzz_signer.nostr.verify_event (id recomputed, BIP-340 signature): {ok_ours}")
        ok_sdk = True
        try:
            from nostr_sdk import Event
        except ImportError:
            print("  nostr-sdk not installed: skipped")
        else:
            ok_sdk = Event.from_json(json.dumps(live)).verify()
            print(f"  nostr-sdk Event.verify(): {ok_sdk}")
        stored = {(mb.pubkey, mb.role, *mb.roles) for mb in m.relay_members(community)}
        listed = {tuple(t[1:]) for t in live["tags"][1:]}
        print(f"  the list names exactly the stored members and roles: {stored == listed}")
        drift = m.member_list_drift()
        print(f"  member_list_drift(): {drift or 'empty'}")
        return 0 if ok_ours and ok_sdk and stored == listed and not drift else 1


if __name__ == "__main__":
    sys.exit(main())
