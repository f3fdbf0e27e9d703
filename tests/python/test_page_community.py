"""The community's page as two people use it together (SPEC section 8), in a real browser: the
owner makes an invite on the desk, a friend opens its link and joins in one click, the owner sees
them arrive live; the owner bans them, they are gone from both pages, and their next join is
refused with the ban's sentence. The database is the truth at each step.

The desk and the join are each tested on their own in test_page_desk.py and test_page_join.py;
this is the story across them, each person in their own browser context with their own signer.
"""

from __future__ import annotations

from page_browser import expect_shown, expect_verified, nip07_signer
from playwright.sync_api import expect
from relay_fixtures import Person, Relay

pytest_plugins = ("fixtures_membership", "relay_fixtures", "page_browser")


def members(relay: Relay) -> set[str]:
    return {m.pubkey for m in relay.mem.relay_members(relay.community_id)}


def test_an_invite_from_the_desk_joins_a_friend_whom_a_ban_then_keeps_out(
    relay: Relay, visit
) -> None:
    owner = visit(relay.process)
    nip07_signer(owner.context, relay.owner)
    desk = owner.open()
    expect_verified(desk, 3)
    desk.click("#login")
    expect(desk.locator("#desk")).to_be_visible()

    # The owner makes an invite for two uses: its link is what they send the friend.
    desk.fill("#desk-invite-uses", "2")
    desk.click("#desk-invite-create")
    expect(desk.locator("#desk-invites-status")).to_have_attribute("data-outcome", "ok")
    link = desk.input_value("#desk-invite-link")
    assert link.startswith(owner.origin + "/?claim=")

    # The friend opens the link in their own browser and joins with one click.
    friend_person = Person.new()
    friend = visit(relay.process)
    nip07_signer(friend.context, friend_person)
    page = friend.page
    page.goto(link)
    expect_verified(page, 3)
    page.click("#join-button")
    status = page.locator("#join-status")
    expect(status).to_have_attribute("data-outcome", "joined")
    assert friend_person.pubkey in members(relay)
    (joined,) = [
        m for m in relay.mem.relay_members(relay.community_id) if m.pubkey == friend_person.pubkey
    ]
    assert joined.added_by == relay.owner.pubkey
    # Both pages show them, the owner's without a reload.
    expect_shown(page, members(relay))
    expect_shown(desk, members(relay))
    owner.shot("friend-arrived")

    # The owner bans them from their row of the list.
    desk.click(f'#member-list li.member[data-pubkey="{friend_person.pubkey}"] .member-manage')
    desk.fill("#desk-manage-reason", "spam")
    desk.click("#desk-manage-ban")
    desk.click("#desk-confirm-yes")
    expect(desk.locator("#desk-rows-status")).to_have_attribute("data-outcome", "ok")
    assert friend_person.pubkey not in members(relay)
    assert [b.pubkey for b in relay.mem.banned_pubkeys(relay.community_id)] == [
        friend_person.pubkey
    ]
    expect_shown(desk, members(relay))
    expect_shown(page, members(relay))
    expect(page.locator("#you-role")).to_have_attribute("data-state", "not_member")

    # The invite has a use left, but the ban keeps them out, and says so.
    page.goto(link)
    expect_verified(page, 3)
    page.click("#join-button")
    expect(status).to_have_attribute("data-outcome", "banned")
    expect(status).to_have_text("You are banned from this community.")
    assert friend_person.pubkey not in members(relay)
    (invite,) = relay.mem.relay_invites(relay.community_id)
    assert invite.use_count == 1  # the refused join used nothing
    friend.shot("friend-banned")
    for v in (owner, friend):
        assert v.csp_violations() == []
        assert v.errors == []
