"""The owner's and admins' desk on the community's page (SPEC section 8), in a real browser:
sections a person moves between (tabs), invites with their link and QR code, each member's
actions from their row of the member list, the invitation tree a level at a time, roles, join
requests (first, with their count, while any are pending), the profile and the join policy,
each action one NIP-86 call signed by the person's NIP-07 signer; and the desk at 1,000
members, which holds a few hundred controls, not thousands.

Each person has their own browser context and signer (``nip07_signer``, their key on this
side); the relay and the database are real, and the database is the truth. The QR code is
read back by a decoder we did not write: zbar's ``zbarimg`` (Debian's zbar-tools, which
scripts/setup installs), on a screenshot of the element. Screenshots of each state go to the
test's temporary directory (``Visit.shot``); with ``BUZZ_PAGE_SCREENSHOT=1`` the desk is also
saved as docs/page-desk.png.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import secrets
import shutil
import subprocess
from typing import Any

import pytest
from page_browser import (
    ICON_URL,
    ONE_PIXEL_PNG,
    PAGE_SIZE,
    REPO,
    Visit,
    confirm,
    expect_said,
    expect_verified,
    manage,
    nip07_signer,
    no_horizontal_overflow,
    open_desk,
    open_section,
    tab_to,
)
from playwright.sync_api import Page, expect
from relay_client import signed
from relay_fixtures import Person, Relay

from buzz_signer.nip19 import encode_npub

pytest_plugins = ("fixtures_membership", "relay_fixtures", "page_browser")

DOCS_SCREENSHOT = REPO / "docs" / "page-desk.png"
ZBARIMG = shutil.which("zbarimg")
PANELS = ["invites", "members", "requests", "tree", "roles", "profile"]
# Everything a person can operate: what the desk's size is counted in.
CONTROLS_JS = (
    """() => document.querySelectorAll('button, input, select, textarea, a[href]').length"""
)
# Elements of a part of the page that reach past the screen's right edge.
TOO_WIDE_JS = """(part) => [...document.querySelectorAll(part + ' *')]
    .filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
    .map(e => e.id || e.className || e.tagName)"""


# ------------------------------------------------------------------ helpers


def members(relay: Relay) -> dict[str, tuple[str, list[str]]]:
    """The database's members: (base role, defined roles held) by pubkey."""
    return {m.pubkey: (m.role, m.roles) for m in relay.mem.relay_members(relay.community_id)}


def shown_member(page: Page, pubkey: str):
    return page.locator(f'#member-list li.member[data-pubkey="{pubkey}"]')


def short(pubkey: str) -> str:
    """A person's short npub, as the page names them while it has no profile's name."""
    npub = encode_npub(pubkey)
    return f"{npub[:14]}…{npub[-6:]}"


def expect_tabs(page: Page, names: list[str]) -> None:
    """The desk's tabs, in this order, each controlling its section."""
    tabs = page.locator("#desk-tabs [role=tab]")
    expect(tabs).to_have_count(len(names))
    for i, name in enumerate(names):
        expect(tabs.nth(i)).to_have_attribute("aria-controls", f"desk-{name}")


def expect_asks(page: Page, words: str) -> None:
    """The confirmation on screen asks this (its text contains `words`)."""
    expect(page.locator("#desk-confirm")).to_be_visible()
    expect(page.locator("#desk-confirm-text")).to_contain_text(words)


def expect_fits(page: Page, part: str) -> None:
    widths = no_horizontal_overflow(page)
    assert widths["doc_scroll"] <= widths["doc_client"], widths
    assert page.evaluate(TOO_WIDE_JS, part) == []


def invites(relay: Relay) -> list[Any]:
    return relay.mem.relay_invites(relay.community_id)


def claims(relay: Relay, code: str) -> str:
    """What claiming `code` now gives a newcomer (the database's outcome)."""
    return relay.mem.claim_relay_invite(relay.community_id, code, Person.new().pubkey).outcome


def decoded_qr(v: Visit, name: str) -> str:
    """The text zbarimg reads from a screenshot of the invite's QR code."""
    if ZBARIMG is None:
        pytest.fail("zbarimg is missing: scripts/setup installs Debian's zbar-tools")
    path = v.shots / f"{name}.png"
    v.page.locator("#desk-invite-qr svg").screenshot(path=str(path))
    done = subprocess.run(
        [ZBARIMG, "--raw", "-q", str(path)], capture_output=True, text=True, timeout=30, check=False
    )
    assert done.returncode == 0, f"zbarimg read no code from {path}: {done.stderr}"
    return done.stdout.strip()


def expect_clean(v: Visit, *allowed: str) -> None:
    """No CSP violation, no script error; `allowed`: console errors expected (a refusal's
    HTTP status, which Chromium logs)."""
    assert v.csp_violations() == []
    assert [e for e in v.errors if not any(a in e for a in allowed)] == []


# ------------------------------------------------------------------ invites


def test_owner_creates_an_invite_with_link_and_qr_code_and_revokes_it(relay: Relay, visit):
    v = open_desk(visit, relay, relay.owner)
    page = v.page
    # No request pending: the invites first, shown; the other sections behind their tabs.
    expect_tabs(page, PANELS)
    expect(page.locator("#desk-tab-invites")).to_have_attribute("aria-selected", "true")
    expect(page.locator("#desk-invites")).to_be_visible()
    for panel in PANELS[1:]:
        expect(page.locator(f"#desk-{panel}")).to_be_hidden()
    expect(page.locator("#desk-tab-invites")).to_have_text("Invites (0 live)")
    v.shot("desk-owner")

    page.fill("#desk-invite-uses", "3")
    page.select_option("#desk-invite-ttl", "86400")
    t0 = dt.datetime.now(dt.UTC)
    page.click("#desk-invite-create")
    expect_said(page, "invites", "ok", "Invite created: 3 uses, for 1 day.")
    link = page.input_value("#desk-invite-link")
    assert link.startswith(v.origin + "/?claim=")
    code = link.removeprefix(v.origin + "/?claim=")
    assert re.fullmatch(r"[A-Za-z0-9]{16,}", code), "the drawn code: 16+ letters and digits"
    # The database has it: 3 uses, a day, made by the owner, its code sealed to the relay.
    (made,) = invites(relay)
    assert (made.max_uses, made.use_count, made.created_by) == (3, 0, relay.owner.pubkey)
    assert abs((made.expires_at - t0).total_seconds() - 86400) < 60
    assert relay.key.unseal(made.sealed) == code
    # The QR code is the link.
    assert decoded_qr(v, "desk-invite-qr") == link
    # One list of invites; the live code is also a choice of the select that shows its link.
    expect(page.locator(f'#desk-claim-pick option[value="{code}"]')).to_have_count(1)
    listed = page.locator(f'#desk-invite-list li[data-id="{made.invite_id}"]')
    expect(listed).to_contain_text("used 0 of 3")
    expect(page.locator("#desk-invite-list li")).to_have_count(1)
    expect(page.locator("#desk-tab-invites")).to_have_text("Invites (1 live)")
    v.shot("invite-created")
    if os.environ.get("BUZZ_PAGE_SCREENSHOT") == "1":
        page.locator("#desk").screenshot(path=str(DOCS_SCREENSHOT))

    # Someone takes it: the new list arrives, and the desk's lists follow it.
    taker = Person.new()
    assert relay.mem.claim_relay_invite(relay.community_id, code, taker.pubkey).outcome == "joined"
    expect(shown_member(page, taker.pubkey)).to_have_count(1)
    expect(listed).to_contain_text("used 1 of 3")

    # A code typed by the owner.
    page.fill("#desk-invite-code", "Typed-code_42")
    page.fill("#desk-invite-uses", "1")
    page.click("#desk-invite-create")
    expect_said(page, "invites", "ok", "Invite created: 1 use, for 1 day.")
    assert page.input_value("#desk-invite-link") == v.origin + "/?claim=Typed-code_42"
    assert decoded_qr(v, "invite-qr-typed") == v.origin + "/?claim=Typed-code_42"
    expect(page.locator("#desk-claim-pick option")).to_have_count(2)
    expect(page.locator("#desk-invite-list li")).to_have_count(2)
    assert len(invites(relay)) == 2

    # The first code's link again, chosen in the select; revoking it asks first; cancelled,
    # nothing is sent.
    page.select_option("#desk-claim-pick", code)
    page.click("#desk-claim-show")
    assert page.input_value("#desk-invite-link") == link
    assert decoded_qr(v, "invite-qr-again") == link
    page.click("#desk-invite-made-revoke")
    v.shot("revoke-confirmation")
    confirm(page, yes=False)
    expect_said(page, "invites", "cancelled", "nothing was sent")
    assert len(invites(relay)) == 2
    page.click("#desk-invite-made-revoke")
    confirm(page)
    expect_said(page, "invites", "ok", "Invite revoked")
    assert made.invite_id not in [i.invite_id for i in invites(relay)]
    assert claims(relay, code) == "invalid"
    expect(page.locator(f'#desk-claim-pick option[value="{code}"]')).to_have_count(0)
    expect(page.locator("#desk-invite-made")).to_be_hidden()
    expect(listed).to_have_count(0)

    # An invite no claim names (a one-use invite, as 28935 mints them): revoked by its id.
    minted = relay.mem.create_relay_invite(relay.community_id, relay.owner.pubkey)
    # Any action asks for the lists again; this one makes another invite too.
    page.click("#desk-invite-create")
    expect_said(page, "invites", "ok", "Invite created")
    row = page.locator(f'#desk-invite-list li[data-id="{minted.invite_id}"]')
    expect(row).to_contain_text("used 0 of 1")
    maker = row.locator(f'.person[data-pubkey="{relay.owner.pubkey}"]')
    expect(maker.locator("svg.identicon")).to_have_count(1)  # drawn as every list draws people
    expect(maker).to_contain_text(short(relay.owner.pubkey))
    row.locator(".invite-revoke").click()
    confirm(page)
    expect_said(page, "invites", "ok", "Invite revoked")
    expect(row).to_have_count(0)
    assert minted.invite_id not in [i.invite_id for i in invites(relay)]
    assert claims(relay, minted.code) == "invalid"
    assert claims(relay, "Typed-code_42") == "joined"  # the others still work
    v.shot("invites-revoked")
    expect_clean(v)


def test_keyboard_creates_an_invite_with_tab_and_enter(relay: Relay, visit):
    v = visit(relay.process)
    nip07_signer(v.context, relay.owner)
    page = v.open()
    expect_verified(page, 3)
    tab_to(page, "login")
    page.keyboard.press("Enter")
    expect(page.locator("#desk")).to_be_visible()
    expect(page.locator("#desk-invites")).to_have_attribute("data-drawn", "")
    # The tabs: one tab stop, the arrows move along them, Enter opens one.
    tab_to(page, "desk-tab-invites")
    page.keyboard.press("ArrowRight")
    assert page.evaluate("document.activeElement.id") == "desk-tab-members"
    page.keyboard.press("Enter")
    expect(page.locator("#desk-members")).to_be_visible()
    expect(page.locator("#desk-invites")).to_be_hidden()
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("Enter")
    expect(page.locator("#desk-invites")).to_be_visible()
    tab_to(page, "desk-invite-create")
    page.keyboard.press("Enter")
    expect_said(page, "invites", "ok", "Invite created: 1 use, for 7 days.")
    (made,) = invites(relay)
    assert (made.max_uses, made.use_count) == (1, 0)
    assert abs((made.expires_at - made.created_at).total_seconds() - 7 * 86400) < 60
    code = relay.key.unseal(made.sealed)
    assert page.input_value("#desk-invite-link") == f"{v.origin}/?claim={code}"
    # The focus is back on the button, so Tab goes on from there.
    assert page.evaluate("document.activeElement.id") == "desk-invite-create"
    v.shot("keyboard-invite")
    expect_clean(v)


# ------------------------------------------------------------------ members


def test_owner_adds_by_key_then_acts_on_the_member_from_their_row(relay: Relay, visit):
    mem, cid = relay.mem, relay.community_id
    mem.define_role(cid, "guide", "Field guide", color=20)
    v = open_desk(visit, relay, relay.owner)
    page = v.page
    newcomer = Person.new()
    name = short(newcomer.pubkey)

    # Added by npub, in the Members section (someone not in the list yet).
    open_section(page, "members")
    expect(page.locator("#desk-tab-members")).to_have_text("Members (3)")
    page.fill("#desk-member-key", encode_npub(newcomer.pubkey))
    expect(page.locator("#desk-member-state")).to_contain_text("is not a member")
    page.click("#desk-member-add")
    expect_said(page, "members", "ok", "a member now")
    assert members(relay)[newcomer.pubkey] == ("member", [])
    row = shown_member(page, newcomer.pubkey)
    expect(row.locator(".base-role")).to_have_text("member")
    expect(page.locator("#desk-member-state")).to_contain_text("is a member, base role member")
    expect(page.locator("#desk-tab-members")).to_have_text("Members (4)")

    # Their row: one Manage button, named for them, which opens their dialog.
    expect(row.locator("button")).to_have_count(1)
    expect(row.locator(".member-manage")).to_have_attribute("aria-label", f"Manage {name}")
    manage(page, newcomer.pubkey)
    expect(page.locator("#desk-manage-title")).to_contain_text(name)
    expect(page.locator("#desk-manage-state")).to_have_text(
        "Base role member; holds no defined role."
    )

    # The base role, to admin (a confirmation that names them; cancelled first) and back.
    expect(page.locator("#desk-manage-base-role")).to_have_value("admin")
    page.click("#desk-manage-set-base")
    expect_asks(page, f"Make {name} an admin?")
    v.shot("member-base-role-confirmation")
    confirm(page, yes=False)
    expect_said(page, "manage", "cancelled", "nothing was sent")
    assert members(relay)[newcomer.pubkey] == ("member", [])
    page.click("#desk-manage-set-base")
    confirm(page)
    expect_said(page, "manage", "ok", f"{name} is an admin now")
    assert members(relay)[newcomer.pubkey] == ("admin", [])
    expect(row.locator(".base-role")).to_have_text("admin")
    expect(page.locator("#desk-manage-state")).to_contain_text("Base role admin")
    v.shot("member-admin")
    expect(page.locator("#desk-manage-base-role")).to_have_value("member")
    page.click("#desk-manage-set-base")
    expect_asks(page, f"Make {name} a plain member?")
    confirm(page)
    expect_said(page, "manage", "ok", "is a plain member now")
    assert members(relay)[newcomer.pubkey] == ("member", [])
    expect(row.locator(".base-role")).to_have_text("member")

    # A defined role, given and taken away, each confirmed.
    expect(page.locator("#desk-manage-role")).to_have_value("guide")
    expect(page.locator("#desk-manage-role-toggle")).to_have_text("Give this role")
    page.click("#desk-manage-role-toggle")
    expect_asks(page, f"Give {name} the role Field guide?")
    confirm(page)
    expect_said(page, "manage", "ok", "holds Field guide now")
    assert members(relay)[newcomer.pubkey] == ("member", ["guide"])
    expect(row.locator(".role")).to_have_text(["Field guide"])
    expect(page.locator("#desk-manage-role-toggle")).to_have_text("Take this role away")
    page.click("#desk-manage-role-toggle")
    expect_asks(page, f"Take the role Field guide from {name}?")
    confirm(page)
    expect_said(page, "manage", "ok", "does not hold Field guide now")
    assert members(relay)[newcomer.pubkey] == ("member", [])
    expect(row.locator(".role")).to_have_count(0)

    # Removed from their row, after a confirmation that names them: said above the list.
    page.click("#desk-manage-remove")
    expect_asks(page, f"Remove {name} from the community?")
    confirm(page)
    expect(page.locator("#desk-manage")).to_be_hidden()
    expect(page.locator("#desk-rows-status")).to_have_text(f"Removed {name}: not a member now.")
    assert page.evaluate("document.activeElement.id") == "desk-rows-status"
    assert newcomer.pubkey not in members(relay)
    expect(row).to_have_count(0)

    # Banned from their row with a reason: removed, and listed in the Members section.
    banned = relay.member.pubkey
    manage(page, banned)
    page.fill("#desk-manage-reason", "spam")
    page.click("#desk-manage-ban")
    expect_asks(page, f"Ban {short(banned)}?")
    confirm(page)
    expect(page.locator("#desk-rows-status")).to_contain_text(f"Banned {short(banned)}")
    assert [(b.pubkey, b.reason) for b in mem.banned_pubkeys(cid)] == [(banned, "spam")]
    assert banned not in members(relay)
    expect(shown_member(page, banned)).to_have_count(0)
    ban_row = page.locator(f'#desk-banned-list li[data-pubkey="{banned}"]')
    expect(ban_row).to_contain_text("spam")
    page.fill("#desk-member-key", banned)
    expect(page.locator("#desk-member-state")).to_contain_text("is banned: spam")
    v.shot("member-banned")
    expect(ban_row.locator(".banned-unban")).to_have_attribute(
        "aria-label", f"Unban {short(banned)}"
    )
    ban_row.locator(".banned-unban").click()
    expect_said(page, "members", "ok", "Unbanned")
    assert mem.banned_pubkeys(cid) == []
    expect(ban_row).to_have_count(0)
    expect(page.locator("#desk-banned-list li")).to_have_text(["No one is banned."])
    assert banned not in members(relay)  # an unban lets them back, it does not add them

    # A stranger (in no row) banned by key, then unbanned from the banned list.
    stranger = Person.new().pubkey
    page.fill("#desk-member-key", encode_npub(stranger))
    page.click("#desk-member-ban")
    expect_asks(page, f"Ban {short(stranger)}?")
    confirm(page)
    expect_said(page, "members", "ok", "Banned")
    assert [b.pubkey for b in mem.banned_pubkeys(cid)] == [stranger]
    page.locator(f'#desk-banned-list li[data-pubkey="{stranger}"] .banned-unban').click()
    expect_said(page, "members", "ok", "Unbanned")
    assert mem.banned_pubkeys(cid) == []
    expect_verified(page, 2)
    expect_clean(v)


# ------------------------------------------------------------------ roles


def test_owner_defines_edits_and_deletes_a_role(relay: Relay, visit):
    mem, cid = relay.mem, relay.community_id
    v = open_desk(visit, relay, relay.owner)
    page = v.page
    open_section(page, "roles")
    page.fill("#desk-role-id", "recorder")
    page.fill("#desk-role-label", "Sound recorder")
    page.fill("#desk-role-description", "Records the dawn chorus")
    page.fill("#desk-role-hue", "200")
    page.fill("#desk-role-order", "2")
    expect(page.locator("#desk-role-save")).to_have_text("Define role")
    page.click("#desk-role-save")
    expect_said(page, "roles", "ok", "Role recorder defined.")
    definitions = {ev["tags"][1][1]: ev["tags"] for ev in mem.role_definitions(cid)}
    assert definitions["recorder"] == [
        ["-"],
        ["d", "recorder"],
        ["label", "Sound recorder"],
        ["description", "Records the dawn chorus"],
        ["color", "200"],
        ["order", "2"],
    ]
    row = page.locator('#desk-role-list li[data-role="recorder"]')
    expect(row).to_contain_text("Sound recorder")
    colors = page.evaluate(
        """() => [...document.querySelectorAll('#desk-role-list li')].map(li =>
            [li.dataset.role, getComputedStyle(li.querySelector('.swatch')).backgroundColor])"""
    )
    swatches = dict(colors)
    assert swatches["recorder"] != swatches["owner"], swatches  # a hue, and no hue
    v.shot("role-defined")

    # Edited: the form filled from the list, the label and hue changed.
    row.locator(".role-edit").click()
    expect(page.locator("#desk-role-id")).to_have_value("recorder")
    expect(page.locator("#desk-role-save")).to_have_text("Save changes")
    page.fill("#desk-role-label", "Recordist")
    page.fill("#desk-role-hue", "90")
    page.click("#desk-role-save")
    expect_said(page, "roles", "ok", "Role recorder changed.")
    definitions = {ev["tags"][1][1]: ev["tags"] for ev in mem.role_definitions(cid)}
    assert ["label", "Recordist"] in definitions["recorder"]
    assert ["color", "90"] in definitions["recorder"]
    expect(row).to_contain_text("Recordist")

    # Deleted (after a confirmation): gone from the definitions and from whoever held it.
    mem.assign_role(cid, relay.member.pubkey, "recorder")
    expect(shown_member(page, relay.member.pubkey).locator(".role")).to_have_text(["Recordist"])
    expect(page.locator('#desk-role-list li[data-role="owner"] .role-delete')).to_have_count(0)
    row.locator(".role-delete").click()
    confirm(page)
    expect_said(page, "roles", "ok", "Role recorder deleted")
    assert "recorder" not in {ev["tags"][1][1] for ev in mem.role_definitions(cid)}
    assert members(relay)[relay.member.pubkey] == ("member", [])
    expect(row).to_have_count(0)
    expect(shown_member(page, relay.member.pubkey).locator(".role")).to_have_count(0)
    v.shot("role-deleted")
    expect_clean(v)


# ------------------------------------------------------------------ join requests


def test_join_requests_approved_and_rejected(relay: Relay, visit):
    mem, cid = relay.mem, relay.community_id
    mem.set_join_policy(cid, "request")
    cellist, drummer, late = Person.new(), Person.new(), Person.new()
    ids = {p.pubkey: secrets.token_hex(32) for p in (cellist, drummer, late)}
    for person, note in ((cellist, "I play the cello"), (drummer, None)):
        asked = mem.request_membership(cid, person.pubkey, ids[person.pubkey], note)
        assert asked.outcome == "requested"
    v = open_desk(visit, relay, relay.owner)
    page = v.page
    # Pending requests come first, with their count, and are shown at once.
    expect_tabs(page, ["requests", *[p for p in PANELS if p != "requests"]])
    expect(page.locator("#desk-tab-requests")).to_have_text("Join requests (2)")
    expect(page.locator("#desk-tab-requests")).to_have_attribute("aria-selected", "true")
    asked = page.locator(f'#desk-request-list li[data-id="{ids[cellist.pubkey]}"]')
    expect(asked.locator(".person")).to_have_attribute("data-pubkey", cellist.pubkey)
    expect(asked.locator(".person")).to_contain_text(short(cellist.pubkey))
    expect(asked.locator(".reason")).to_have_text("I play the cello")
    expect(asked.locator(".request-approve")).to_have_attribute(
        "aria-label", f"Approve the request of {short(cellist.pubkey)}"
    )
    expect(page.locator("#desk-request-list li")).to_have_count(2)
    v.shot("requests")

    asked.locator(".request-approve").click()
    expect_said(page, "requests", "ok", "Request approved")
    assert members(relay)[cellist.pubkey] == ("member", [])
    expect(shown_member(page, cellist.pubkey)).to_have_count(1)
    expect(page.locator("#desk-request-list li")).to_have_count(1)

    page.fill("#desk-request-reason", "not this season")
    page.locator(f'#desk-request-list li[data-id="{ids[drummer.pubkey]}"] .request-reject').click()
    expect_said(page, "requests", "ok", "Request rejected")
    assert mem.join_requests(cid) == []
    assert drummer.pubkey not in members(relay)
    expect(page.locator("#desk-request-list li")).to_have_text(["No pending requests."])
    expect(page.locator("#desk-tab-requests")).to_have_text("Join requests (0)")
    expect_tabs(page, PANELS)  # none pending: back in their place

    # A request makes no new list: the desk finds it when asked to look again.
    assert mem.request_membership(cid, late.pubkey, ids[late.pubkey]).outcome == "requested"
    page.click("#desk-request-refresh")
    expect_said(page, "requests", "ok", "1 pending request.")
    expect(page.locator(f'#desk-request-list li[data-id="{ids[late.pubkey]}"]')).to_have_count(1)
    expect(page.locator("#desk-tab-requests")).to_have_text("Join requests (1)")
    expect_tabs(page, ["requests", *[p for p in PANELS if p != "requests"]])
    expect_verified(page, 4)
    expect_clean(v)


# ------------------------------------------------------------------ profile and join policy


def test_profile_and_join_policy_change_the_page_without_a_reload(relay: Relay, visit):
    mem, cid = relay.mem, relay.community_id
    v = open_desk(visit, relay, relay.owner)
    page = v.page
    open_section(page, "profile")
    page.evaluate("window.__sameDocument = true")
    expect(page.locator("#desk-profile-name")).to_have_value(relay.host)  # no name: the host

    page.fill("#desk-profile-name", "Nightjar Birders")
    page.click("#desk-profile-name-save")
    expect_said(page, "profile", "ok", "Name saved: Nightjar Birders.")
    page.fill("#desk-profile-description", "Sightings at dusk.\nMembers only.")
    page.click("#desk-profile-description-save")
    expect_said(page, "profile", "ok", "Description saved.")
    page.fill("#desk-profile-icon", ICON_URL)
    page.click("#desk-profile-icon-save")
    # The page may load images from the icon's origin it was served with only (its CSP).
    expect_said(page, "profile", "ok", "Icon saved: it shows when the page is loaded again.")
    page.select_option("#desk-profile-policy", "request")
    page.click("#desk-profile-policy-save")
    expect_said(page, "profile", "ok", "Join policy saved: On request")
    assert mem.community_profile(cid) == (
        "Nightjar Birders",
        "Sightings at dusk.\nMembers only.",
        ICON_URL,
        "request",
    )
    expect(page.locator("#community-name")).to_have_text("Nightjar Birders")
    assert page.title() == "Nightjar Birders"
    expect(page.locator("#community-description")).to_have_text("Sightings at dusk.\nMembers only.")
    assert page.evaluate("window.__sameDocument") is True, "the page reloaded"
    v.shot("profile-saved")

    # Cleared: the page says so too; a refusal is the relay's words, and changes nothing.
    page.fill("#desk-profile-description", "")
    page.click("#desk-profile-description-save")
    expect_said(page, "profile", "ok", "Description cleared.")
    expect(page.locator("#community-description")).to_have_count(0)
    page.fill("#desk-profile-icon", "http://icons.example.org/plain.png")
    page.click("#desk-profile-icon-save")
    expect_said(page, "profile", "error", "Refused (HTTP 400): invalid params:")
    expect_said(page, "profile", "error", "https://")
    assert mem.community_profile(cid) == ("Nightjar Birders", None, ICON_URL, "request")

    # What the server draws from the database agrees, policy included.
    page.reload()
    expect(page.locator("#community-name")).to_have_text("Nightjar Birders")
    expect(page.locator("#community-description")).to_have_count(0)
    expect(page.locator("#community-icon")).to_have_attribute("src", ICON_URL)
    expect(page.locator("#community-icon")).to_have_js_property("naturalWidth", 1)
    page.click("#login")
    open_section(page, "profile")
    expect(page.locator("#desk-profile-policy")).to_have_value("request")
    # Served with the icon: another from its origin shows at once.
    other = ICON_URL.replace("community.png", "other.png")
    v.context.route(
        other, lambda route: route.fulfill(body=ONE_PIXEL_PNG, content_type="image/png")
    )
    page.fill("#desk-profile-icon", other)
    page.click("#desk-profile-icon-save")
    expect_said(page, "profile", "ok", "Icon saved.")
    expect(page.locator("#community-icon")).to_have_attribute("src", other)
    expect(page.locator("#community-icon")).to_have_js_property("naturalWidth", 1)
    expect_clean(v, "status of 400")


# ------------------------------------------------------------------ who sees the desk


def is_supportedmethods(response: Any) -> bool:
    request = response.request
    return request.method == "POST" and '"supportedmethods"' in (request.post_data or "")


def supportedmethods_answers(v: Visit) -> list[Any]:
    """What the relay answered each supportedmethods call the page made."""
    return [r.json()["result"] for r in v.responses if is_supportedmethods(r)]


def test_an_admin_sees_the_desk_a_member_and_a_visitor_do_not(relay: Relay, visit):
    admin = open_desk(visit, relay, relay.admin)
    expect_tabs(admin.page, PANELS)
    expect(admin.page.locator("#desk-invites")).to_be_visible()
    (offered,) = supportedmethods_answers(admin)
    assert {"createclaim", "allowpubkey", "createrole", "setjoinpolicy"} <= set(offered)
    admin.shot("desk-admin")

    member = visit(relay.process)
    nip07_signer(member.context, relay.member)
    page = member.open()
    expect_verified(page, 3)
    with page.expect_response(is_supportedmethods) as answered:
        page.click("#login")
    # The relay said: nothing for this person to call. So no desk.
    assert answered.value.json() == {"result": []}
    expect(page.locator("#account-name")).to_be_visible()
    expect(page.locator("#desk")).to_be_hidden()
    assert page.locator("#desk *").count() == 0
    member.shot("member-no-desk")

    visitor = visit(relay.process)
    page = visitor.open()
    expect_verified(page, 3)
    expect(page.locator("#login")).to_be_hidden()
    expect(page.locator("#desk")).to_be_hidden()
    assert supportedmethods_answers(visitor) == []
    visitor.shot("visitor-no-desk")
    expect_clean(member)
    expect_clean(visitor)


def test_a_refused_call_shows_the_relays_words(relay: Relay, visit):
    mem, cid = relay.mem, relay.community_id
    v = open_desk(visit, relay, relay.admin)
    page = v.page
    unchanged = members(relay)
    open_section(page, "members")

    # A key that is none: the relay's 400, in its words.
    page.fill("#desk-member-key", "not-a-pubkey")
    page.click("#desk-member-add")
    expect_said(
        page,
        "members",
        "error",
        "Refused (HTTP 400): invalid params: the first must be a pubkey (64 hex characters)",
    )
    # The owner's place is not the desk's to change: their dialog offers no base role,
    # removal or ban.
    manage(page, relay.owner.pubkey)
    for control in ("set-base", "remove", "ban", "reason"):
        expect(page.locator(f"#desk-manage-{control}")).to_be_hidden()
    page.click("#desk-manage-close")
    expect(page.locator("#desk-manage")).to_be_hidden()
    assert members(relay) == unchanged

    # The admin made a plain member meanwhile (an outside service, through SQL): the desk is
    # still on screen, but the relay now refuses their NIP-98 with 403.
    assert mem.update_relay_member_role(cid, relay.admin.pubkey, "member").outcome == "updated"
    newcomer = Person.new()
    page.fill("#desk-member-key", newcomer.pubkey)
    page.click("#desk-member-add")
    expect_said(
        page,
        "members",
        "error",
        "Refused (HTTP 403): restricted: only the community's owner, an admin, or a member"
        " this method was assigned to may call it",
    )
    assert newcomer.pubkey not in members(relay)
    # From a member's row too: the relay's words, in their dialog.
    manage(page, relay.member.pubkey)
    page.click("#desk-manage-remove")
    confirm(page)
    expect_said(page, "manage", "error", "Refused (HTTP 403): restricted:")
    assert relay.member.pubkey in members(relay)
    page.keyboard.press("Escape")
    expect(page.locator("#desk-manage")).to_be_hidden()
    open_section(page, "invites")
    page.click("#desk-invite-create")
    expect_said(page, "invites", "error", "Refused (HTTP 403): restricted:")
    assert invites(relay) == []
    v.shot("refused")
    expect_clean(v, "status of 400", "status of 403")


def nip86_methods(v: Visit) -> list[str]:
    """The NIP-86 method of each call the page made, in order (each one a signature)."""
    methods = []
    for response in list(v.responses):
        request = response.request
        if request.method == "POST" and request.post_data:
            methods.append(json.loads(request.post_data)["method"])
    return methods


def test_the_signer_signs_only_for_what_the_person_opens(relay: Relay, visit):
    v = open_desk(visit, relay, relay.owner)
    page = v.page
    # At start: what the desk may do, the requests (their count orders the sections), and the
    # lists of the section shown.
    expect(page.locator("#desk-invites")).to_have_attribute("data-drawn", "")
    started = ["supportedmethods", "listeventsneedingmoderation", "listclaims", "listinvites"]
    assert sorted(nip86_methods(v)) == sorted(started)
    # Opening a section reads its lists, once; going back reads nothing again.
    open_section(page, "members")
    assert sorted(nip86_methods(v)) == sorted([*started, "listbannedpubkeys"])
    open_section(page, "invites")
    open_section(page, "members")
    open_section(page, "profile")  # no list of its own
    assert len(nip86_methods(v)) == len(started) + 1
    # A member's dialog reads the defined roles, the first time only.
    with page.expect_response(lambda r: '"listroles"' in (r.request.post_data or "")):
        manage(page, relay.member.pubkey)
    page.keyboard.press("Escape")
    manage(page, relay.admin.pubkey)
    page.keyboard.press("Escape")
    expect(page.locator("#desk-manage")).to_be_hidden()
    assert nip86_methods(v).count("listroles") == 1
    expect_clean(v)


# ------------------------------------------------------------------ readable everywhere


@pytest.mark.parametrize(
    "screen",
    [
        pytest.param({"viewport": {"width": 390, "height": 844}}, id="390px"),
        pytest.param({"viewport": {"width": 360, "height": 740}}, id="360px"),
        pytest.param(
            {"viewport": {"width": 640, "height": 360}, "device_scale_factor": 2}, id="zoom-200"
        ),
    ],
)
def test_the_desk_is_readable_narrow_and_zoomed(relay: Relay, visit, screen: dict[str, Any]):
    mem, cid = relay.mem, relay.community_id
    mem.define_role(cid, "guide", "Field guide", color=20)
    mem.set_join_policy(cid, "request")
    asker = Person.new()
    mem.request_membership(cid, asker.pubkey, secrets.token_hex(32), "I keep bees")
    relay.mem.add_relay_member(cid, Person.new().pubkey, "member", relay.admin.pubkey)
    v = open_desk(visit, relay, relay.owner, count=4, **screen)
    page = v.page
    open_section(page, "invites")
    page.click("#desk-invite-create")
    expect_said(page, "invites", "ok", "Invite created")
    # Every section, each drawn with its lists, fits the screen.
    for panel in PANELS:
        open_section(page, panel)
        if panel == "tree":  # a level opened too
            page.click(f'#desk-tree-list li[data-pubkey="{relay.admin.pubkey}"] .tree-open')
        expect_fits(page, "#desk")
        v.shot(f"desk-{panel}")
    # So do the member rows with their button, a member's dialog and a confirmation.
    expect_fits(page, "#members")
    manage(page, relay.member.pubkey)
    expect_fits(page, "#desk-manage")
    page.click("#desk-manage-remove")
    expect(page.locator("#desk-confirm")).to_be_visible()
    expect_fits(page, "#desk-confirm")
    v.shot("desk-confirm-narrow")
    confirm(page, yes=False)
    # Every control has a label a screen reader says.
    unlabelled = page.evaluate(
        """() => [...document.querySelectorAll(
                '#desk input, #desk select, #desk textarea, #desk-manage input, ' +
                '#desk-manage select')]
            .filter(c => !c.labels || c.labels.length === 0).map(c => c.id)"""
    )
    assert unlabelled == []
    expect_clean(v)


# ------------------------------------------------------------------ at scale


def test_the_owners_desk_at_1000_members_holds_a_few_hundred_controls(relay: Relay, visit):
    """Before the desk had sections, the tree alone drew a button for each of the 1,000
    members; now the page holds the list's page of rows, one button each, and the sections."""
    mem, cid = relay.mem, relay.community_id
    others = [Person.new().pubkey for _ in range(997)]
    mem.add_relay_members(cid, others, "member", relay.owner.pubkey)
    assert len(members(relay)) == 1000
    v = open_desk(visit, relay, relay.owner, count=1000, viewport={"width": 390, "height": 844})
    page = v.page
    # Each row of the list's page has its one button.
    expect(page.locator("#member-list li.member .member-manage")).to_have_count(PAGE_SIZE)
    controls = page.evaluate(CONTROLS_JS)
    assert controls <= 300, f"{controls} controls at 1,000 members"
    # Every section opened: still a few hundred (the tree a page of the root's children).
    for panel in PANELS:
        open_section(page, panel)
    expect(page.locator("#desk-tree-list > li > ul > li[data-pubkey]")).to_have_count(20)
    controls = page.evaluate(CONTROLS_JS)
    assert controls <= 300, f"{controls} controls at 1,000 members, every section opened"
    expect_fits(page, "main")

    # A member on the list's second page, acted on from their row: base role, then removed.
    page.click("#members-next")
    expect(page.locator("#members-page")).to_have_text("page 2 of 10")
    target = page.locator("#member-list li.member").nth(3).get_attribute("data-pubkey")
    manage(page, target)
    expect(page.locator("#desk-manage")).to_be_visible()
    expect_fits(page, "#desk-manage")
    page.click("#desk-manage-set-base")
    expect_asks(page, f"Make {short(target)} an admin?")
    confirm(page)
    expect_said(page, "manage", "ok", f"{short(target)} is an admin now")
    assert members(relay)[target] == ("admin", [])
    page.keyboard.press("Escape")
    expect(page.locator("#desk-manage")).to_be_hidden()

    # Keyboard only: Tab to another member's Manage, Enter, Tab to Remove, Enter; the
    # confirmation has Cancel focused: Tab to its yes, Enter.
    page.click("#members-prev")
    expect(page.locator("#members-page")).to_have_text("page 1 of 10")
    gone = page.locator("#member-list li.member").nth(5).get_attribute("data-pubkey")
    page.focus("#member-search")
    for _ in range(20):
        page.keyboard.press("Tab")
        if page.evaluate(
            "(k) => document.activeElement.matches(`li.member[data-pubkey='${k}'] .member-manage`)",
            gone,
        ):
            break
    else:
        raise AssertionError("Tab never reached the member's Manage button")
    page.keyboard.press("Enter")
    expect(page.locator("#desk-manage")).to_be_visible()
    tab_to(page, "desk-manage-remove")
    page.keyboard.press("Enter")
    expect_asks(page, f"Remove {short(gone)} from the community?")
    assert page.evaluate("document.activeElement.id") == "desk-confirm-no"
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "desk-confirm-yes"
    page.keyboard.press("Enter")
    expect(page.locator("#desk-rows-status")).to_have_text(
        f"Removed {short(gone)}: not a member now."
    )
    assert page.evaluate("document.activeElement.id") == "desk-rows-status"
    assert gone not in members(relay)
    expect(shown_member(page, gone)).to_have_count(0)
    expect(page.locator("#desk-tab-members")).to_have_text("Members (999)")

    # Nothing but the page's own origin was asked for.
    hosts = {re.sub(r"^(\w+)://([^/]+).*$", r"\2", url) for url in v.requests}
    assert hosts == {v.origin.removeprefix("http://")}, hosts
    expect_clean(v)


def test_the_tree_opens_a_level_at_a_time_and_pages_its_children(relay: Relay, visit):
    mem, cid, owner, admin = relay.mem, relay.community_id, relay.owner.pubkey, relay.admin.pubkey
    # The owner brought in 45 more (47 children with the admin and the member, who hang from
    # the root); the admin 3, and the first of those one more.
    brought = [Person.new().pubkey for _ in range(45)]
    mem.add_relay_members(cid, brought, "member", owner)
    by_admin = [Person.new().pubkey for _ in range(3)]
    mem.add_relay_members(cid, by_admin, "member", admin)
    grandchild = Person.new().pubkey
    mem.add_relay_member(cid, grandchild, "member", by_admin[0])
    v = open_desk(visit, relay, relay.owner, count=52)
    page = v.page
    open_section(page, "tree")
    root = "#desk-tree-list > li"
    level = f"{root} > ul > li[data-pubkey]"
    # The root, open: the first 20 of its 47 children; none of theirs.
    expect(page.locator(root)).to_have_count(1)
    expect(page.locator(f"{root}[data-pubkey='{owner}']")).to_have_count(1)
    expect(page.locator(level)).to_have_count(20)
    expect(page.locator("#desk-tree-list li[data-pubkey]")).to_have_count(21)
    more = page.locator(f"{root} > ul > li.more .list-more")
    expect(more).to_have_text("Show 20 more they brought in (27 not shown)")
    more.click()
    expect(page.locator(level)).to_have_count(40)
    # The focus goes to the first of those just shown.
    assert page.evaluate("document.activeElement.matches('#desk-tree-list > li > ul > li')")
    expect(more).to_have_text("Show 7 more they brought in (7 not shown)")
    more.click()
    expect(page.locator(level)).to_have_count(47)
    expect(more).to_have_count(0)

    # The admin's level opens on demand, and closes.
    admin_item = page.locator(f"{level}[data-pubkey='{admin}']")
    toggle = admin_item.locator(":scope > .tree-member > .tree-open")
    expect(toggle).to_have_attribute("aria-expanded", "false")
    expect(admin_item.locator(".tree-size")).to_have_text("(4 members below)")
    toggle.click()
    expect(toggle).to_have_attribute("aria-expanded", "true")
    expect(admin_item.locator(":scope > ul > li[data-pubkey]")).to_have_count(3)
    first = admin_item.locator(f":scope > ul > li[data-pubkey='{by_admin[0]}']")
    expect(first.locator(":scope > ul")).to_have_count(0)  # one level at a time
    first.locator(":scope > .tree-member > .tree-open").click()
    expect(first.locator(f":scope > ul > li[data-pubkey='{grandchild}']")).to_have_count(1)
    v.shot("tree-opened")

    # A new list (someone joins) draws the tree again as it was opened.
    newcomer = Person.new().pubkey
    mem.add_relay_member(cid, newcomer, "member", by_admin[0])
    expect(first.locator(":scope > ul > li[data-pubkey]")).to_have_count(2)
    expect(page.locator(level)).to_have_count(47)

    # The admin's branch removed: the confirmation names them and how many go.
    admin_item.locator(":scope > .tree-member > .tree-remove").click()
    expect_asks(page, f"Remove {short(admin)} and everyone they brought in? 6 members leave")
    confirm(page)
    expect_said(page, "tree", "ok", f"Removed 6 members: {short(admin)} and everyone")
    assert {admin, *by_admin, grandchild, newcomer}.isdisjoint(members(relay))
    expect(page.locator(level)).to_have_count(46)
    expect_clean(v)


# ------------------------------------------------------------------ people, not keys


def test_the_desk_names_people_by_their_profiles(relay: Relay, visit):
    mem, cid, member = relay.mem, relay.community_id, relay.member.pubkey
    kept = signed(relay.member.secret, 0, [], json.dumps({"display_name": "Alice Nightjar"}))
    assert mem.set_member_profile(cid, json.dumps(kept)) == "stored"
    v = open_desk(visit, relay, relay.owner)
    page = v.page
    # The row's button, the member's dialog and its confirmation name her.
    manage_button = shown_member(page, member).locator(".member-manage")
    expect(manage_button).to_have_attribute("aria-label", "Manage Alice Nightjar")
    manage(page, member)
    expect(page.locator("#desk-manage-title .person-name")).to_have_text("Alice Nightjar")
    page.click("#desk-manage-remove")
    expect_asks(page, "Remove Alice Nightjar from the community?")
    confirm(page, yes=False)
    page.keyboard.press("Escape")
    # The tree draws her as every list does.
    open_section(page, "tree")
    line = page.locator(f'#desk-tree-list li[data-pubkey="{member}"] > .tree-member')
    expect(line.locator(".person-name")).to_have_text("Alice Nightjar")
    expect(line.locator(".tree-remove")).to_have_attribute("aria-label", "Remove: Alice Nightjar")
    expect_clean(v)
