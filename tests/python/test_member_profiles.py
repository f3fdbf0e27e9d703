"""Members' own profiles in the database (SPEC sections 7 and 8): what pgTAP cannot check.

The id the database computes again must be NIP-01's, so text with every escape NIP-01 names,
and characters it writes as they are, is signed here (buzz_signer.nostr, whose serialization
the wire tests hold to nostr-tools') and must be stored. A stored profile is announced at
commit (NOTIFY buzz_profiles), and goes with its member whichever way they leave: a ban, a
leave, the community's deletion. A profile sent while the member's removal is under way
waits for it, then is refused (several sessions, one shown blocked on the other). The
shapes, limits and reads are tests/pgtap/test_member_profiles.sql's.
"""

from __future__ import annotations

import json
from typing import Any

import psycopg
import pytest
from fixtures_membership import kind0
from sessions import Stage, backend_pid, wait_until_blocked

from buzz_signer.errors import InvalidParameter
from buzz_signer.keys import RelayKey
from buzz_signer.membership import Membership
from buzz_signer.nostr import verify_event

pytest_plugins = ("fixtures_membership",)


def profiles(m: Membership, community: Any) -> list[dict[str, Any]]:
    return [json.loads(text) for text in m.member_profiles(community)]


@pytest.mark.parametrize(
    "content",
    [
        'a "quote", a back\\slash, a line\nbreak, a tab\t, a return\r, \b and \f',
        "ünïcödé, 中文, emoji 😀, U+2028 \u2028, U+2029 \u2029, DEL \x7f, slash /",
        json.dumps({"name": "Nightjar", "about": "line one\nline two", "picture": ""}),
    ],
)
def test_the_ids_nip01_escapes_are_the_databases(mem, reader, community, content) -> None:
    key = RelayKey.generate()
    mem.add_relay_member(community.cid, key.pubkey)
    tags = [["alt", content], ["t", "x", ""]]
    assert mem.set_member_profile(community.cid, kind0(key, content, tags=tags)) == "stored"
    (stored,) = profiles(reader, community.cid)
    assert verify_event(stored)
    assert (stored["content"], stored["tags"], stored["pubkey"]) == (content, tags, key.pubkey)


def test_text_nip01_and_json_write_differently_is_refused(mem, community) -> None:
    """A control character other than those NIP-01 escapes is written as it is by NIP-01 and
    escaped by JSON: the ids would differ, so it is refused with 22023, not stored."""
    key = RelayKey.generate()
    mem.add_relay_member(community.cid, key.pubkey)
    with pytest.raises(InvalidParameter):
        mem.set_member_profile(community.cid, kind0(key, "bell \x07"))
    assert mem.member_profiles(community.cid) == []


def test_a_stored_profile_is_announced_at_commit(db_url, mem, community) -> None:
    key = RelayKey.generate()
    mem.add_relay_member(community.cid, key.pubkey)
    with psycopg.connect(db_url, autocommit=True) as listener:
        listener.execute("LISTEN buzz_profiles")
        assert mem.set_member_profile(community.cid, kind0(key, "{}")) == "stored"
        assert mem.set_member_profile(community.cid, kind0(key, "{}", 1)) == "older"
        heard = [n.payload for n in listener.notifies(timeout=2, stop_after=2)]
    assert heard == [f"{community.cid} {key.pubkey}"]  # the older one announced nothing


def test_the_profile_goes_with_its_member_whichever_way(mem, reader, su, community) -> None:
    keys = [RelayKey.generate() for _ in range(3)]
    for key in keys:
        mem.add_relay_member(community.cid, key.pubkey)
        assert mem.set_member_profile(community.cid, kind0(key, "{}")) == "stored"
    assert mem.ban_pubkey(community.cid, keys[0].pubkey).outcome == "banned"
    assert mem.remove_relay_member(community.cid, keys[1].pubkey).outcome == "removed"  # a leave
    assert [p["pubkey"] for p in profiles(reader, community.cid)] == [keys[2].pubkey]
    assert mem.delete_community(community.cid).outcome == "deleted"
    assert su.execute("SELECT count(*) FROM buzz_private.member_profiles").fetchone() == (0,)


def test_a_profile_waits_for_a_held_removal_then_is_refused(db_url, mem, su, key, community):
    """The removal holds its transaction open; the member's profile, sent meanwhile, waits for
    the member's row, then answers not_member, and nothing is stored."""
    member = RelayKey.generate()
    mem.add_relay_member(community.cid, member.pubkey)
    with Stage(db_url, key) as stage:
        m = stage.membership()
        pid = backend_pid(m.conn)
        removal = stage.raw_writer()
        assert (
            removal.value("SELECT buzz.remove_relay_member(%s, %s)", community.cid, member.pubkey)
            == "removed"
        )
        sending = stage.background(
            lambda: m.set_member_profile(community.cid, kind0(member, "{}")), "set_member_profile"
        )
        wait = wait_until_blocked(su, pid, removal.pid, call=sending)
        assert "set_member_profile" in wait.query, wait
        removal.prepare()
        removal.sign_and_insert()
        removal.commit()
        assert sending.result() == "not_member"
    assert mem.member_profiles(community.cid) == []
