"""A community of invitations on its page (SPEC sections 3, 7 and 8), in a real browser: the
owner sets the members' invite quota on the desk, a member makes an invite link from their own
view (a 28935 on the page's websocket), a newcomer joins with it, the desk's tree of who
brought whom in follows, the member's next invite is refused in words, and the owner removes
the member with everyone they brought in.

Each person has their own browser context and NIP-07 signer (``nip07_signer``, their key on
this side); the relay and the database are real, and the database is the truth: the quotas,
the invites and who made them, the members and who brought them in, the lists and their 8001
events.
"""

from __future__ import annotations

import os
import re
from typing import Any

from page_browser import (
    REPO,
    Visit,
    confirm,
    expect_said,
    expect_shown,
    expect_verified,
    nip07_signer,
    no_horizontal_overflow,
    open_desk,
    open_section,
    tab_to,
)
from playwright.sync_api import Page, expect
from relay_fixtures import Person, Relay

pytest_plugins = ("fixtures_membership", "relay_fixtures", "page_browser")

DOCS_SCREENSHOT = REPO / "docs" / "page-invitations.png"
NARROW = {"viewport": {"width": 360, "height": 740}}
NO_INVITES_LEFT = "You have no invites left."
# Elements of a part of the page that reach past the screen's right edge.
TOO_WIDE_JS = """(part) => [...document.querySelectorAll(part + ' *')]
    .filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
    .map(e => e.id || e.className || e.tagName)"""
# The text selected in the focused field.
SELECTED_JS = """() => {
    const field = document.activeElement;
    return field.value.substring(field.selectionStart, field.selectionEnd);
}"""


# ------------------------------------------------------------------ helpers


def members(relay: Relay) -> dict[str, str | None]:
    """The database's members: who brought each in (added_by), by pubkey."""
    return {m.pubkey: m.added_by for m in relay.mem.relay_members(relay.community_id)}


def invites_made(relay: Relay) -> list[tuple[str, int | None, int]]:
    """(maker, uses, used) of each invite in the database, oldest first."""
    return [
        (i.created_by, i.max_uses, i.use_count) for i in relay.mem.relay_invites(relay.community_id)
    ]


def own_page(
    visit, relay: Relay, person: Person, path: str = "/", count: int = 3, **options: Any
) -> Visit:
    """`person`'s page in a context of its own, logged in with their signer."""
    v = visit(relay.process, **options)
    nip07_signer(v.context, person)
    v.page.goto(v.origin + path)
    expect_verified(v.page, count)
    v.page.click("#login")
    expect(v.page.locator("#you")).to_be_visible()
    return v


def in_tree(page: Page, *path: str):
    """The tree's item reached from the root by these pubkeys, each under the one before."""
    selector = "#desk-tree-list" + "".join(
        f'{" > ul" if i else ""} > li[data-pubkey="{pubkey}"]' for i, pubkey in enumerate(path)
    )
    return page.locator(selector)


def expect_invite_answer(page: Page, outcome: str, words: str | re.Pattern[str]) -> None:
    status = page.locator("#you-invite-status")
    expect(status).to_have_attribute("role", "status")
    expect(status).to_have_attribute("data-outcome", outcome)
    expect(status).to_have_text(words)
    # The focus follows the answer, so a keyboard user reads on from there.
    assert page.evaluate("document.activeElement.id") == "you-invite-status"


def expect_fits(page: Page, part: str) -> None:
    """Nothing of `part` (a selector) reaches past the screen, and the page does not scroll
    sideways."""
    widths = no_horizontal_overflow(page)
    assert widths["doc_scroll"] <= widths["doc_client"], widths
    assert page.evaluate(TOO_WIDE_JS, part) == []


def expect_clean(*visits: Visit) -> None:
    for v in visits:
        assert v.csp_violations() == []
        assert v.errors == []


# ------------------------------------------------------------------ the whole story


def test_a_member_invites_by_the_quota_and_the_owner_removes_the_branch(
    relay: Relay, visit
) -> None:
    cid, owner, member = relay.community_id, relay.owner.pubkey, relay.member.pubkey
    desk = open_desk(visit, relay, relay.owner)
    page = desk.page
    open_section(page, "tree")
    # The tree: the owner at the root, the admin and the member (brought in by no member) below.
    for pubkey in (relay.admin.pubkey, member):
        expect(in_tree(page, owner, pubkey)).to_have_count(1)
    expect(in_tree(page, owner, member).locator(".tree-left").first).to_have_text("no invites left")
    expect(page.locator("#desk-tree-quota-member")).to_have_value("0")
    expect(page.locator("#desk-tree-quota-admin")).to_have_value("")  # no limit

    # The owner lets each member bring in one.
    page.fill("#desk-tree-quota-member", "1")
    page.click("#desk-tree-quota-member-save")
    expect_said(page, "tree", "ok", "Saved: each member may now bring in 1 member.")
    assert relay.mem.invite_quotas(cid) == {"admin": None, "member": 1}
    expect(in_tree(page, owner, member).locator(".tree-left").first).to_have_text("1 invite left")

    # The member makes an invite link from their own view, with the keyboard alone.
    mine = own_page(visit, relay, relay.member)
    tab_to(mine.page, "you-invite")
    mine.page.keyboard.press("Enter")
    expect_invite_answer(mine.page, "made", re.compile(r"^Your invite link is ready: one person"))
    link = mine.page.input_value("#you-invite-link")
    assert link.startswith(mine.origin + "/?claim=")
    code = link.removeprefix(mine.origin + "/?claim=")
    assert re.fullmatch(r"[0-9a-f]{32}", code), "a code the database drew"
    assert invites_made(relay) == [(member, 1, 0)]  # one use, made by the member
    expect(mine.page.locator("#you-invite-qr svg.qr")).to_have_attribute(
        "aria-label", "QR code of your invite link"
    )
    # The link is selected whole when it takes the focus.
    mine.page.focus("#you-invite-link")
    assert mine.page.evaluate(SELECTED_JS) == link
    mine.shot("invite-made")

    # A newcomer joins with it, in their own context.
    newcomer = Person.new()
    joining = visit(relay.process)
    nip07_signer(joining.context, newcomer)
    joining.page.goto(link)
    expect_verified(joining.page, 3)
    joining.page.click("#join-button")
    expect(joining.page.locator("#join-status")).to_have_attribute("data-outcome", "joined")
    assert members(relay)[newcomer.pubkey] == member
    assert invites_made(relay) == [(member, 1, 1)]
    # The owner's tree follows: the member brought one in, shown when their level is opened.
    opens = in_tree(page, owner, member).locator(":scope > .tree-member > .tree-open")
    expect(opens).to_have_text("Show the 1 they brought in")
    opens.click()
    expect(in_tree(page, owner, member, newcomer.pubkey)).to_have_count(1)
    expect(in_tree(page, owner, member).locator(".tree-size").first).to_have_text(
        "(1 member below)"
    )
    desk.shot("tree")
    if os.environ.get("BUZZ_PAGE_SCREENSHOT") == "1":
        page.locator("#desk-tree").screenshot(path=str(DOCS_SCREENSHOT))

    # The member's second invite is refused, in words; no invite is made.
    mine.page.click("#you-invite")
    expect_invite_answer(mine.page, "no_invites_left", NO_INVITES_LEFT)
    assert invites_made(relay) == [(member, 1, 1)]
    assert relay.mem.invites_left(cid, member) == 0

    # The owner removes the member with everyone they brought in: the confirmation names 2.
    before = relay.mem.member_list(cid)
    remove = in_tree(page, owner, member).locator(".tree-remove").first
    remove.click()
    expect(page.locator("#desk-confirm-text")).to_contain_text(
        "and everyone they brought in? 2 members leave the community."
    )
    confirm(page, yes=False)  # cancelled: nothing sent, nothing changes
    expect_said(page, "tree", "cancelled", "nothing was sent")
    assert relay.mem.member_list(cid) == before
    remove.click()
    desk.shot("removebranch-confirmation")
    confirm(page)
    expect_said(page, "tree", "ok", re.compile(r"^Removed 2 members: npub1\S+ and everyone"))
    remaining = {owner: None, relay.admin.pubkey: None}
    assert set(members(relay)) == set(remaining)
    # In one list: one new 13534, and its moment holds an 8001 for each of the two.
    after = relay.mem.member_list(cid)
    assert after["created_at"] > before["created_at"]
    since = [e for e in relay.mem.membership_events(cid) if e["created_at"] > before["created_at"]]
    assert {e["created_at"] for e in since} == {after["created_at"]}
    assert sorted((e["kind"], e["tags"][1][1]) for e in since) == sorted(
        [(8001, member), (8001, newcomer.pubkey)]
    )
    assert sorted(t[1] for t in after["tags"] if t[0] == "member") == sorted(remaining)
    assert relay.mem.member_list_drift() == []
    # Gone from the page's list and from the tree, and from the member's own view.
    expect_shown(page, set(remaining))
    expect(page.locator(f'#desk-tree-list li[data-pubkey="{member}"]')).to_have_count(0)
    expect(mine.page.locator("#you-role")).to_have_attribute("data-state", "not_member")
    expect(mine.page.locator("#you-invite")).to_be_hidden()
    desk.shot("branch-removed")
    expect_clean(desk, mine, joining)


# ------------------------------------------------------------------ the tree and the quotas


def test_the_tree_hangs_members_without_a_member_inviter_from_the_owner(
    relay: Relay, visit
) -> None:
    cid, owner, admin = relay.community_id, relay.owner.pubkey, relay.admin.pubkey
    # The admin brought in two; one of them brought in a third. An operator (a label, not a
    # member) brought in one more, and a pubkey that is no member another.
    first, second, third, operators, orphan = (Person.new() for _ in range(5))
    relay.mem.add_relay_member(cid, first.pubkey, "member", admin)
    relay.mem.add_relay_member(cid, second.pubkey, "member", admin)
    relay.mem.add_relay_member(cid, third.pubkey, "member", first.pubkey)
    relay.mem.add_relay_member(cid, operators.pubkey, "member", "buzz-admin")
    relay.mem.add_relay_member(cid, orphan.pubkey, "member", Person.new().pubkey)
    relay.mem.set_invite_quota(cid, "admin", 5)
    desk = open_desk(visit, relay, relay.owner, count=8, **NARROW)
    page = desk.page
    open_section(page, "tree")
    # The root's level is open; the others open one at a time.
    expect(page.locator("#desk-tree-list li[data-pubkey]")).to_have_count(5)
    in_tree(page, owner, admin).locator(":scope > .tree-member > .tree-open").click()
    in_tree(page, owner, admin, first.pubkey).locator(":scope > .tree-member > .tree-open").click()
    for path in (
        (owner, admin),
        (owner, admin, first.pubkey),
        (owner, admin, second.pubkey),
        (owner, admin, first.pubkey, third.pubkey),
        (owner, operators.pubkey),
        (owner, orphan.pubkey),
        (owner, relay.member.pubkey),
    ):
        expect(in_tree(page, *path)).to_have_count(1)
    expect(page.locator("#desk-tree-list li[data-pubkey]")).to_have_count(8)
    # Each line: the npub, the base role, the invites left (the database's).
    line = in_tree(page, owner, admin).locator(".tree-member").first
    expect(line.locator(".base-role")).to_have_text("admin")
    expect(line.locator(".tree-left")).to_have_text("3 invites left")  # 5, less two still in
    assert relay.mem.invites_left(cid, admin) == 3
    expect(line.locator(".tree-size")).to_have_text("(3 members below)")
    root = in_tree(page, owner).locator(".tree-member").first
    expect(root.locator(".tree-left")).to_have_text("invites: no limit")
    expect(root.locator(".tree-remove")).to_have_count(0)  # no way to remove the owner
    expect(page.locator("#desk-tree-quota-admin")).to_have_value("5")
    # Four generations deep on a 360 px screen: nothing reaches past its edge.
    expect_fits(page, "#desk-tree")
    desk.shot("tree-360px")

    # Quotas: an unchanged one says so; empty is no limit; a bad one is refused on the page.
    page.fill("#desk-tree-quota-admin", "5")
    page.click("#desk-tree-quota-admin-save")
    expect_said(page, "tree", "ok", "Each admin may bring in 5 members already.")
    page.fill("#desk-tree-quota-admin", "")
    page.click("#desk-tree-quota-admin-save")
    expect_said(page, "tree", "ok", "Saved: each admin may now bring in any number of members.")
    assert relay.mem.invite_quotas(cid) == {"admin": None, "member": 0}
    expect(line.locator(".tree-left")).to_have_text("invites: no limit")
    page.fill("#desk-tree-quota-member", "-2")
    page.click("#desk-tree-quota-member-save")
    expect_said(page, "tree", "error", "a quota is a whole number from 0")
    assert relay.mem.invite_quotas(cid) == {"admin": None, "member": 0}

    # The admin's branch: four go, in one list.
    before = relay.mem.member_list(cid)
    in_tree(page, owner, admin).locator(".tree-member").first.locator(".tree-remove").click()
    expect(page.locator("#desk-confirm-text")).to_contain_text("4 members leave the community.")
    confirm(page)
    expect_said(page, "tree", "ok", "Removed 4 members:")
    left = {owner, operators.pubkey, orphan.pubkey, relay.member.pubkey}
    assert set(members(relay)) == left
    after = relay.mem.member_list(cid)
    since = [e for e in relay.mem.membership_events(cid) if e["created_at"] > before["created_at"]]
    assert [e["kind"] for e in since] == [8001] * 4
    assert {e["created_at"] for e in since} == {after["created_at"]}
    expect(page.locator("#desk-tree-list li[data-pubkey]")).to_have_count(4)
    expect_shown(page, left)
    expect_clean(desk)


def test_a_member_with_no_quota_is_told_in_words_and_a_visitor_sees_no_invite_button(
    relay: Relay, visit
) -> None:
    mine = own_page(visit, relay, relay.member)
    mine.page.click("#you-invite")
    expect_invite_answer(mine.page, "no_invites_left", NO_INVITES_LEFT)
    expect(mine.page.locator("#you-invite-made")).to_be_hidden()
    assert invites_made(relay) == []
    # The member gets no desk (no tree, no quotas).
    expect(mine.page.locator("#desk")).to_be_hidden()
    # Someone logged in who is not a member: no invite button.
    stranger = own_page(visit, relay, Person.new())
    expect(stranger.page.locator("#you-role")).to_have_attribute("data-state", "not_member")
    expect(stranger.page.locator("#you-invite")).to_be_hidden()
    expect_clean(mine, stranger)


def test_an_admin_makes_invite_links_freely_by_default(relay: Relay, visit) -> None:
    mine = own_page(visit, relay, relay.admin, **NARROW)
    for n in (1, 2):
        mine.page.click("#you-invite")
        expect_invite_answer(mine.page, "made", re.compile(r"^Your invite link is ready"))
        expect(mine.page.locator("#you-invite-status")).to_have_attribute("data-outcome", "made")
        assert len(invites_made(relay)) == n
    assert {maker for maker, _, _ in invites_made(relay)} == {relay.admin.pubkey}
    expect(mine.page.locator("#you-invite-qr svg.qr")).to_be_visible()
    expect_fits(mine.page, "#you")
    mine.shot("invite-360px")
    # The link shown is the newest invite's: it lets someone in, brought in by the admin.
    code = mine.page.input_value("#you-invite-link").rsplit("=", 1)[1]
    newcomer = Person.new().pubkey
    assert relay.mem.claim_relay_invite(relay.community_id, code, newcomer).outcome == "joined"
    assert members(relay)[newcomer] == relay.admin.pubkey
    expect_clean(mine)
