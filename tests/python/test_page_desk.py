"""The owner's and admins' desk on the community's page (SPEC section 8), in a real browser:
invites with their link and QR code, members, roles, join requests, the profile and the join
policy, each action one NIP-86 call signed by the person's NIP-07 signer.

Each person has their own browser context and signer (``nip07_signer``, their key on this
side); the relay and the database are real, and the database is the truth. The QR code is
read back by a decoder we did not write: zbar's ``zbarimg`` (Debian's zbar-tools, which
scripts/setup installs), on a screenshot of the element. Screenshots of each state go to the
test's temporary directory (``Visit.shot``); with ``BUZZ_PAGE_SCREENSHOT=1`` the desk is also
saved as docs/page-desk.png.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import secrets
import shutil
import subprocess
from typing import Any

import pytest
from page_browser import (
    ICON_URL,
    REPO,
    Visit,
    confirm,
    expect_said,
    expect_verified,
    nip07_signer,
    no_horizontal_overflow,
    open_desk,
    tab_to,
)
from playwright.sync_api import Page, expect
from relay_fixtures import Person, Relay

from buzz_signer.nip19 import encode_npub

pytest_plugins = ("fixtures_membership", "relay_fixtures", "page_browser")

DOCS_SCREENSHOT = REPO / "docs" / "page-desk.png"
ZBARIMG = shutil.which("zbarimg")
PANELS = ["invites", "members", "requests", "roles", "profile"]


# ------------------------------------------------------------------ helpers








def members(relay: Relay) -> dict[str, tuple[str, list[str]]]:
    """The database's members: (base role, defined roles held) by pubkey."""
    return {m.pubkey: (m.role, m.roles) for m in relay.mem.relay_members(relay.community_id)}


def shown_member(page: Page, pubkey: str):
    return page.locator(f'#member-list li.member[data-pubkey="{pubkey}"]')


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
    for panel in PANELS:
        expect(page.locator(f"#desk-{panel}")).to_be_visible()
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
    expect(page.locator(f'#desk-claim-list li[data-code="{code}"]')).to_have_count(1)
    listed = page.locator(f'#desk-invite-list li[data-id="{made.invite_id}"]')
    expect(listed).to_contain_text("used 0 of 3")
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
    expect(page.locator("#desk-claim-list li")).to_have_count(2)
    assert len(invites(relay)) == 2

    # Revoke asks first; cancelled, nothing is sent.
    page.click(f'#desk-claim-list li[data-code="{code}"] .claim-revoke')
    v.shot("revoke-confirmation")
    confirm(page, yes=False)
    expect_said(page, "invites", "cancelled", "nothing was sent")
    assert len(invites(relay)) == 2
    page.click(f'#desk-claim-list li[data-code="{code}"] .claim-revoke')
    confirm(page)
    expect_said(page, "invites", "ok", "Invite revoked")
    assert [i.invite_id for i in invites(relay)] != [made.invite_id]
    assert made.invite_id not in [i.invite_id for i in invites(relay)]
    assert claims(relay, code) == "invalid"
    expect(page.locator(f'#desk-claim-list li[data-code="{code}"]')).to_have_count(0)
    expect(listed).to_have_count(0)

    # An invite no claim names (a one-use invite, as 28935 mints them): revoked by its id.
    minted = relay.mem.create_relay_invite(relay.community_id, relay.owner.pubkey)
    # Any action asks for the lists again; this one makes another invite too.
    page.click("#desk-invite-create")
    expect_said(page, "invites", "ok", "Invite created")
    row = page.locator(f'#desk-invite-list li[data-id="{minted.invite_id}"]')
    expect(row).to_contain_text("used 0 of 1")
    expect(row).to_contain_text(encode_npub(relay.owner.pubkey))
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
    expect(page.locator("#desk-claim-list li")).to_have_count(1)  # "No live invite codes."
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


def test_owner_adds_changes_and_removes_a_member_bans_and_unbans(relay: Relay, visit):
    mem, cid = relay.mem, relay.community_id
    mem.define_role(cid, "guide", "Field guide", color=20)
    v = open_desk(visit, relay, relay.owner)
    page = v.page
    newcomer = Person.new()

    # Added by npub.
    page.fill("#desk-member-key", encode_npub(newcomer.pubkey))
    expect(page.locator("#desk-member-state")).to_contain_text("is not a member")
    page.click("#desk-member-add")
    expect_said(page, "members", "ok", "a member now")
    assert members(relay)[newcomer.pubkey] == ("member", [])
    expect(shown_member(page, newcomer.pubkey).locator(".base-role")).to_have_text("member")
    expect(page.locator("#desk-member-state")).to_contain_text("is a member, base role member")

    # The base role, to admin and back.
    page.select_option("#desk-member-base-role", "admin")
    page.click("#desk-member-set-base")
    expect_said(page, "members", "ok", "is an admin now")
    assert members(relay)[newcomer.pubkey] == ("admin", [])
    expect(shown_member(page, newcomer.pubkey).locator(".base-role")).to_have_text("admin")
    v.shot("member-admin")
    page.select_option("#desk-member-base-role", "member")
    page.click("#desk-member-set-base")
    expect_said(page, "members", "ok", "is a plain member now")
    assert members(relay)[newcomer.pubkey] == ("member", [])
    expect(shown_member(page, newcomer.pubkey).locator(".base-role")).to_have_text("member")

    # A defined role, assigned and unassigned.
    page.select_option("#desk-member-role", "guide")
    page.click("#desk-member-assign")
    expect_said(page, "members", "ok", "holds Field guide now")
    assert members(relay)[newcomer.pubkey] == ("member", ["guide"])
    expect(shown_member(page, newcomer.pubkey).locator(".role")).to_have_text(["Field guide"])
    page.click("#desk-member-unassign")
    expect_said(page, "members", "ok", "does not hold Field guide now")
    assert members(relay)[newcomer.pubkey] == ("member", [])
    expect(shown_member(page, newcomer.pubkey).locator(".role")).to_have_count(0)

    # Removed, after a confirmation.
    page.click("#desk-member-remove")
    confirm(page)
    expect_said(page, "members", "ok", "not a member now")
    assert newcomer.pubkey not in members(relay)
    expect(shown_member(page, newcomer.pubkey)).to_have_count(0)

    # Banned with a reason (a member, by hex key): removed and listed; then unbanned.
    banned = relay.member.pubkey
    page.fill("#desk-member-key", banned)
    page.fill("#desk-member-reason", "spam")
    page.click("#desk-member-ban")
    confirm(page)
    expect_said(page, "members", "ok", "Banned")
    assert [(b.pubkey, b.reason) for b in mem.banned_pubkeys(cid)] == [(banned, "spam")]
    assert banned not in members(relay)
    expect(shown_member(page, banned)).to_have_count(0)
    ban_row = page.locator(f'#desk-banned-list li[data-pubkey="{banned}"]')
    expect(ban_row).to_contain_text("spam")
    expect(page.locator("#desk-member-state")).to_contain_text("is banned: spam")
    v.shot("member-banned")
    ban_row.locator(".banned-unban").click()
    expect_said(page, "members", "ok", "Unbanned")
    assert mem.banned_pubkeys(cid) == []
    expect(ban_row).to_have_count(0)
    expect(page.locator("#desk-banned-list li")).to_have_text(["No one is banned."])
    assert banned not in members(relay)  # an unban lets them back, it does not add them

    # A stranger banned and unbanned from the form.
    stranger = Person.new().pubkey
    page.fill("#desk-member-key", encode_npub(stranger))
    page.click("#desk-member-ban")
    confirm(page)
    expect_said(page, "members", "ok", "Banned")
    assert [b.pubkey for b in mem.banned_pubkeys(cid)] == [stranger]
    page.click("#desk-member-unban")
    expect_said(page, "members", "ok", "Unbanned")
    assert mem.banned_pubkeys(cid) == []
    expect_verified(page, 2)
    expect_clean(v)


# ------------------------------------------------------------------ roles


def test_owner_defines_edits_and_deletes_a_role(relay: Relay, visit):
    mem, cid = relay.mem, relay.community_id
    v = open_desk(visit, relay, relay.owner)
    page = v.page
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
    asked = page.locator(f'#desk-request-list li[data-id="{ids[cellist.pubkey]}"]')
    expect(asked).to_contain_text(f"{encode_npub(cellist.pubkey)}: I play the cello")
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

    # A request makes no new list: the desk finds it when asked to look again.
    assert mem.request_membership(cid, late.pubkey, ids[late.pubkey]).outcome == "requested"
    page.click("#desk-request-refresh")
    expect_said(page, "requests", "ok", "1 pending request.")
    expect(page.locator(f'#desk-request-list li[data-id="{ids[late.pubkey]}"]')).to_have_count(1)
    expect_verified(page, 4)
    expect_clean(v)


# ------------------------------------------------------------------ profile and join policy


def test_profile_and_join_policy_change_the_page_without_a_reload(relay: Relay, visit):
    mem, cid = relay.mem, relay.community_id
    v = open_desk(visit, relay, relay.owner)
    page = v.page
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
    expect_said(page, "profile", "ok", "Icon saved.")
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
    expect(page.locator("#community-icon")).to_have_attribute("src", ICON_URL)
    expect(page.locator("#community-icon")).to_have_js_property("naturalWidth", 1)
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
    expect(page.locator("#community-icon")).to_have_attribute("src", ICON_URL)

    # What the server draws from the database agrees, policy included.
    page.reload()
    expect(page.locator("#community-name")).to_have_text("Nightjar Birders")
    expect(page.locator("#community-description")).to_have_count(0)
    page.click("#login")
    expect(page.locator("#desk-profile-policy")).to_have_value("request")
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
    for panel in PANELS:
        expect(admin.page.locator(f"#desk-{panel}")).to_be_visible()
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

    # A key that is none: the relay's 400, in its words.
    page.fill("#desk-member-key", "not-a-pubkey")
    page.click("#desk-member-add")
    expect_said(
        page,
        "members",
        "error",
        "Refused (HTTP 400): invalid params: the first must be a pubkey (64 hex characters)",
    )
    # The owner's base role is not the desk's to change.
    page.fill("#desk-member-key", encode_npub(relay.owner.pubkey))
    page.select_option("#desk-member-base-role", "member")
    page.click("#desk-member-set-base")
    expect_said(page, "members", "error", "Refused (HTTP 400): restricted: the owner's role")
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
    page.click("#desk-invite-create")
    expect_said(page, "invites", "error", "Refused (HTTP 403): restricted:")
    assert invites(relay) == []
    v.shot("refused")
    expect_clean(v, "status of 400", "status of 403")


# ------------------------------------------------------------------ readable everywhere


@pytest.mark.parametrize(
    "screen",
    [
        pytest.param({"viewport": {"width": 360, "height": 740}}, id="360px"),
        pytest.param(
            {"viewport": {"width": 640, "height": 360}, "device_scale_factor": 2}, id="zoom-200"
        ),
    ],
)
def test_the_desk_is_readable_narrow_and_zoomed(relay: Relay, visit, screen: dict[str, Any]):
    v = open_desk(visit, relay, relay.owner, **screen)
    page = v.page
    page.click("#desk-invite-create")
    expect_said(page, "invites", "ok", "Invite created")
    widths = no_horizontal_overflow(page)
    assert widths["doc_scroll"] <= widths["doc_client"], widths
    too_wide = page.evaluate(
        """() => [...document.querySelectorAll('#desk *')]
            .filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
            .map(e => e.id || e.className || e.tagName)"""
    )
    assert too_wide == []
    # Every control has a label a screen reader says.
    unlabelled = page.evaluate(
        """() => [...document.querySelectorAll('#desk input, #desk select, #desk textarea')]
            .filter(c => !c.labels || c.labels.length === 0).map(c => c.id)"""
    )
    assert unlabelled == []
    v.shot(f"desk-{widths['doc_client']}px")
    expect_clean(v)
