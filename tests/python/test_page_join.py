"""Joining from the community's page (SPEC sections 7 and 8), in a real browser: an invite
link's one-click join, each refusal in words, the page without a signer, a request to join
under each join policy, and the person's own view with leaving.

Each person has their own browser context and NIP-07 signer (``nip07_signer``, their key on
this side); the relay and the database are real, and the database is the truth: who is a
member, what an invite counted, which requests are pending. Screenshots of each state go to
the test's temporary directory (``Visit.shot``).
"""

from __future__ import annotations

import datetime as dt
from typing import Any
from urllib.parse import quote

import pytest
from page_browser import (
    Visit,
    expect_shown,
    expect_verified,
    nip07_signer,
    no_horizontal_overflow,
    tab_to,
)
from playwright.sync_api import Page, expect
from relay_fixtures import Person, Relay

from buzz_signer.nip19 import encode_npub

pytest_plugins = ("fixtures_membership", "relay_fixtures", "page_browser")

NAME = "Nightjar Birders"
JOINED = f"You joined {NAME}. Welcome!"


@pytest.fixture
def birders(relay: Relay) -> Relay:
    """The relay's community, named (the page's sentences name it)."""
    relay.mem.set_community_profile(relay.community_id, "name", NAME)
    return relay


def members(relay: Relay) -> dict[str, str]:
    """The database's members: base role by pubkey."""
    return {m.pubkey: m.role for m in relay.mem.relay_members(relay.community_id)}


def invite(relay: Relay, **options: Any) -> str:
    """A fresh invite code, made by the owner (so the owner is who brings its taker in)."""
    return relay.mem.create_relay_invite(relay.community_id, relay.owner.pubkey, **options).code


def use_count(relay: Relay) -> list[int]:
    return [i.use_count for i in relay.mem.relay_invites(relay.community_id)]


def open_page(visit, relay: Relay, person: Person | None, path: str = "/", **options) -> Visit:
    """A browser context of its own, with `person`'s signer (None: no signer), on `path`."""
    v = visit(relay.process, **options)
    if person is not None:
        nip07_signer(v.context, person)
    v.page.goto(v.origin + path)
    return v


def expect_answer(page: Page, status_id: str, outcome: str, sentence: str) -> None:
    status = page.locator(f"#{status_id}")
    expect(status).to_have_attribute("data-outcome", outcome)
    expect(status).to_have_text(sentence)
    # The focus follows the answer, so a keyboard user reads on from there.
    assert page.evaluate("document.activeElement.id") == status_id


def expect_clean(v: Visit) -> None:
    assert v.csp_violations() == []
    assert v.errors == []


def flotilla_link(v: Visit, code: str) -> str:
    relay_url = "ws://" + v.origin.removeprefix("http://")
    return f"https://app.flotilla.social/join?r={quote(relay_url, safe='')}&c={quote(code)}"


# ------------------------------------------------------------------ an invite link


def test_invite_link_joins_and_everyone_sees_the_new_member(birders: Relay, visit) -> None:
    relay = birders
    code = invite(relay, max_uses=5)
    newcomer = Person.new()
    # Someone else's page, already open: the newcomer must appear there without a reload.
    watcher = open_page(visit, relay, relay.owner)
    expect_verified(watcher.page, 3)

    v = open_page(visit, relay, newcomer, f"/?claim={code}")
    page = v.page
    expect_verified(page, 3)
    button = page.locator("#join-button")
    expect(button).to_have_text(f"Join {NAME}")
    expect(page.locator("#join-no-signer")).to_be_hidden()
    expect(page.locator("#you")).to_be_hidden()  # nobody logged in yet
    v.shot("invite-link")

    button.click()  # logs in, AUTHs, signs and sends the 28934: one click
    expect_answer(page, "join-status", "joined", JOINED)
    (taken,) = [
        m for m in relay.mem.relay_members(relay.community_id) if m.pubkey == newcomer.pubkey
    ]
    assert taken.role == "member"
    assert taken.added_by == relay.owner.pubkey  # the invite's maker brought them in
    assert use_count(relay) == [1]

    everyone = set(members(relay))
    expect_shown(page, everyone)
    expect_shown(watcher.page, everyone)
    expect(page.locator("#account-name")).to_have_text(
        f"Logged in as {encode_npub(newcomer.pubkey)}"
    )
    you = page.locator("#you-role")
    expect(you).to_have_attribute("data-state", "member")
    expect(you).to_have_text(f"You are a member of {NAME}.")
    expect(button).to_be_hidden()
    # The code is out of the address bar once it has done its work.
    assert page.url == v.origin + "/"
    assert code not in relay.process.log()
    v.shot("invite-joined")
    watcher.shot("invite-joined-seen-by-owner")
    expect_clean(v)
    expect_clean(watcher)


@pytest.mark.parametrize(
    ("case", "sentence"),
    [
        ("expired", "That invite link has expired; ask for a new one."),
        ("invalid", "That invite link is not valid; check it, or ask for a new one."),
        ("used_up", "That invite link has been used up; ask for a new one."),
        ("banned", "You are banned from this community."),
        ("already_member", f"You are already a member of {NAME}."),
    ],
)
def test_each_refusal_is_said_in_words(birders: Relay, visit, su, case: str, sentence: str) -> None:
    relay = birders
    person = relay.member if case == "already_member" else Person.new()
    code = invite(relay)
    if case == "expired":
        su.execute(
            "UPDATE buzz_private.relay_invites SET expires_at = now() - interval '1 second'"
            " WHERE community_id = %s",
            (relay.community_id,),
        )
    elif case == "invalid":
        code = "no-such-invite-code"
    elif case == "used_up":
        used = relay.mem.claim_relay_invite(relay.community_id, code, Person.new().pubkey)
        assert used.outcome == "joined"
    elif case == "banned":
        assert relay.mem.ban_pubkey(relay.community_id, person.pubkey).outcome == "banned"
    before, counted = members(relay), use_count(relay)

    v = open_page(visit, relay, person, f"/?claim={code}")
    page = v.page
    expect_verified(page, len(before))
    page.click("#join-button")
    expect_answer(page, "join-status", case, sentence)
    assert members(relay) == before
    assert use_count(relay) == counted
    if case == "already_member":
        # The link is of no more use: the button goes, and the code leaves the address bar.
        expect(page.locator("#join-button")).to_be_hidden()
        assert page.url == v.origin + "/"
        expect(page.locator("#you-role")).to_have_attribute("data-state", "member")
    else:
        # The person may try again (another link, later): the button stays, as does the URL.
        expect(page.locator("#join-button")).to_be_enabled()
        assert "claim=" in page.url
    v.shot(f"invite-{case}")
    expect_clean(v)


def test_too_many_failed_claims_are_said_in_words(birders: Relay, start_relay, visit) -> None:
    relay = birders
    process = start_relay("--community", str(relay.community_id), "--max-failed-claims", "1")
    v = visit(process)
    nip07_signer(v.context, Person.new())
    page = v.page
    page.goto(f"{v.origin}/?claim=no-such-invite-code")
    expect_verified(page, 3)
    page.click("#join-button")
    expect_answer(
        page,
        "join-status",
        "invalid",
        "That invite link is not valid; check it, or ask for a new one.",
    )
    page.click("#join-button")
    expect_answer(
        page,
        "join-status",
        "rate_limited",
        "Too many tries for now; wait a few minutes, then try again.",
    )
    v.shot("invite-rate-limited")
    expect_clean(v)


def test_markup_in_a_claim_is_text(birders: Relay, visit) -> None:
    relay = birders
    code = "<img src=/x onerror=alert(1)><script>document.title='owned'</script>"
    v = open_page(visit, relay, Person.new(), "/?claim=" + quote(code, safe=""))
    page = v.page
    expect_verified(page, 3)
    expect(page.locator("#join-code")).to_have_text(code)  # drawn, then hidden: a signer is here
    page.click("#join-button")
    expect_answer(
        page,
        "join-status",
        "invalid",
        "That invite link is not valid; check it, or ask for a new one.",
    )
    assert page.locator("#join img, #join script").count() == 0
    assert page.title() != "owned"
    expect_clean(v)


def test_keyboard_only_join(birders: Relay, visit) -> None:
    relay = birders
    code = invite(relay)
    newcomer = Person.new()
    v = open_page(visit, relay, newcomer, f"/?claim={code}")
    page = v.page
    expect_verified(page, 3)
    expect(page.locator("#join-button")).to_be_visible()
    tab_to(page, "join-button")
    page.keyboard.press("Enter")
    expect_answer(page, "join-status", "joined", JOINED)
    assert newcomer.pubkey in members(relay)
    expect(page.locator("#you-role")).to_have_attribute("data-state", "member")
    v.shot("invite-keyboard")
    expect_clean(v)


def test_without_a_signer_the_code_and_a_flotilla_link(birders: Relay, visit) -> None:
    """On a phone without a signer: "Open in Flotilla" first, as the main action within the
    first screen, then the relay's address to copy and the code, then the extensions."""
    relay = birders
    code = invite(relay)
    phone = {"width": 390, "height": 844}
    for javascript in (True, False):
        v = open_page(
            visit,
            relay,
            None,
            f"/?claim={code}",
            java_script_enabled=javascript,
            viewport=phone,
            permissions=["clipboard-read", "clipboard-write"] if javascript else [],
        )
        page = v.page
        if javascript:
            expect(page.locator("#join")).to_have_attribute("data-signer", "none")
            expect_verified(page, 3)
        help_text = page.locator("#join-no-signer")
        expect(help_text).to_be_visible()
        expect(help_text).to_contain_text("NIP-07")
        expect(help_text).to_contain_text("nos2x")
        expect(help_text).to_contain_text("Alby")
        expect(page.locator("#join-code")).to_have_text(code)
        # The code is one selection: a click or a double click takes it whole.
        assert page.eval_on_selector("#join-code", "e => getComputedStyle(e).userSelect") == "all"
        flotilla = page.locator("#join-flotilla")
        expect(flotilla).to_have_attribute("href", flotilla_link(v, code))
        expect(flotilla).to_have_text("Open in Flotilla")
        # The main action: the first link of the help, on the first screen of a phone.
        assert help_text.locator("a").first.get_attribute("id") == "join-flotilla"
        box = flotilla.bounding_box()
        assert box is not None and box["y"] + box["height"] <= phone["height"], box
        relay_url = "ws://" + v.origin.removeprefix("http://")
        expect(page.locator("#join-relay")).to_have_text(relay_url)
        text = help_text.inner_text()
        order = [text.index(words) for words in ("Open in Flotilla", relay_url, code, "NIP-07")]
        assert order == sorted(order), text
        expect(page.locator("#join-button")).to_have_count(0)
        expect(page.locator("#login")).to_be_hidden()
        if javascript:
            copy = page.locator("#join-relay-copy")
            copy.click()
            expect(copy).to_have_text("Copied")
            assert page.evaluate("navigator.clipboard.readText()") == relay_url
        else:
            expect(page.locator("#join-relay-copy")).to_have_count(0)
        assert page.evaluate("document.documentElement.scrollWidth") <= phone["width"]
        v.shot("invite-no-signer" + ("" if javascript else "-no-javascript"))
        # Nothing was asked of another origin: the code stayed on this one.
        same_origin = (v.origin + "/", "ws" + v.origin.removeprefix("http") + "/")
        elsewhere = [url for url in v.requests if not url.startswith(same_origin)]
        assert elsewhere == []
        if javascript:
            expect_clean(v)
    assert members(relay).keys() == {relay.owner.pubkey, relay.admin.pubkey, relay.member.pubkey}
    assert use_count(relay) == [0]


# ------------------------------------------------------------------ the join policy


def test_request_policy_keeps_a_pending_request_with_its_note(birders: Relay, visit) -> None:
    relay = birders
    assert relay.mem.set_join_policy(relay.community_id, "request") == "updated"
    visitor = Person.new()
    note = "I record nightjars on the heath <b>every June</b>."
    v = open_page(visit, relay, visitor)
    page = v.page
    expect_verified(page, 3)
    button = page.locator("#request-button")
    expect(button).to_have_text("Ask to join")
    expect(page.locator("#join-policy")).to_have_text(
        f"Anyone may ask to join {NAME}; its owner or an admin approves each request."
    )
    page.get_by_label("A note for the moderators (optional)").fill(note)
    v.shot("request-form")
    button.click()
    expect_answer(
        page,
        "join-status",
        "pending",
        f"Your request to join {NAME} is waiting for its owner or an admin to approve it.",
    )
    (request,) = relay.mem.join_requests(relay.community_id)
    assert (request.pubkey, request.note) == (visitor.pubkey, note)
    assert visitor.pubkey not in members(relay)
    expect(page.locator("#you-role")).to_have_attribute("data-state", "not_member")
    expect(page.locator("#you-role")).to_have_text(f"You are not a member of {NAME}.")
    v.shot("request-pending")

    # Approved by an admin elsewhere: the page follows the live list.
    approved = relay.mem.approve_join_request(
        relay.community_id, request.request_id, relay.admin.pubkey
    )
    assert approved.outcome == "joined"
    expect(page.locator("#you-role")).to_have_attribute("data-state", "member")
    expect(page.locator("#join-visitor")).to_be_hidden()
    expect_clean(v)


def test_open_policy_joins_at_once(birders: Relay, visit) -> None:
    relay = birders
    assert relay.mem.set_join_policy(relay.community_id, "open") == "updated"
    visitor = Person.new()
    v = open_page(visit, relay, visitor)
    page = v.page
    expect_verified(page, 3)
    expect(page.locator("#join-policy")).to_have_text(f"Anyone may join {NAME}.")
    expect(page.locator("#request-note")).to_have_count(0)
    page.locator("#request-button").filter(has_text="Join").click()
    expect_answer(page, "join-status", "joined", JOINED)
    assert members(relay)[visitor.pubkey] == "member"
    expect_shown(page, set(members(relay)))
    expect(page.locator("#join-visitor")).to_be_hidden()
    expect(page.locator("#join-status")).to_be_visible()  # the answer stays
    expect(page.locator("#you-role")).to_have_attribute("data-state", "member")
    v.shot("open-joined")
    expect_clean(v)


def test_invite_policy_offers_no_button(birders: Relay, visit) -> None:
    relay = birders
    v = open_page(visit, relay, Person.new())
    page = v.page
    expect_verified(page, 3)
    expect(page.locator("#join-policy")).to_have_text(
        f"Members join {NAME} by invitation: ask a member for an invite link."
    )
    expect(page.locator("#join button")).to_have_count(0)
    v.shot("invite-policy")
    expect_clean(v)


# ------------------------------------------------------------------ the person's own view


def log_in(page: Page, person: Person) -> None:
    page.click("#login")
    expect(page.locator("#account-name")).to_have_text(f"Logged in as {encode_npub(person.pubkey)}")


def test_leave_asks_first_and_cancel_keeps_the_member(birders: Relay, visit) -> None:
    relay, cid = birders, birders.community_id
    relay.mem.define_role(cid, "recorder", "Sound recorder", color=200)
    relay.mem.assign_role(cid, relay.member.pubkey, "recorder")
    v = open_page(visit, relay, relay.member)
    page = v.page
    expect_verified(page, 3)
    log_in(page, relay.member)
    you = page.locator("#you-role")
    expect(you).to_have_attribute("data-state", "member")
    expect(you).to_have_attribute("data-base-role", "member")
    expect(you).to_contain_text(f"You are a member of {NAME}.")
    expect(you.locator(".role[data-role=recorder]")).to_have_text("Sound recorder")
    # Nobody who is a member is asked to join.
    expect(page.locator("#join")).to_be_hidden()
    v.shot("you-member")

    leave = page.locator("#leave-button")
    expect(leave).to_have_text("Leave this community")
    leave.click()
    expect(page.locator("#leave-question")).to_contain_text(f"Leave {NAME}?")
    expect(page.locator("#leave-confirm")).to_have_text("Yes, leave")
    assert page.evaluate("document.activeElement.id") == "leave-cancel"
    v.shot("you-leave-asked")
    page.keyboard.press("Enter")  # Cancel, from the keyboard
    expect(page.locator("#leave-ask")).to_be_hidden()
    assert page.evaluate("document.activeElement.id") == "leave-button"
    assert relay.member.pubkey in members(relay)

    leave.click()
    page.click("#leave-confirm")
    expect_answer(page, "you-status", "left", f"You left {NAME}.")
    assert relay.member.pubkey not in members(relay)
    expect(you).to_have_attribute("data-state", "not_member")
    expect(leave).to_be_hidden()
    expect_shown(page, set(members(relay)))
    # A former member, as any visitor: the invite-only sentence is back.
    expect(page.locator("#join-policy")).to_be_visible()
    v.shot("you-left")
    expect_clean(v)


def test_the_owner_cannot_leave(birders: Relay, visit) -> None:
    relay = birders
    v = open_page(visit, relay, relay.owner)
    page = v.page
    expect_verified(page, 3)
    log_in(page, relay.owner)
    expect(page.locator("#you-role")).to_contain_text(f"You are the owner of {NAME}.")
    page.click("#leave-button")
    page.click("#leave-confirm")
    expect_answer(
        page, "you-status", "is_owner", "The owner cannot leave; transfer ownership first."
    )
    assert members(relay)[relay.owner.pubkey] == "owner"
    expect(page.locator("#you-role")).to_have_attribute("data-state", "member")
    v.shot("you-owner-refused")
    expect_clean(v)


def test_the_own_view_follows_the_live_list(birders: Relay, visit) -> None:
    relay, cid = birders, birders.community_id
    v = open_page(visit, relay, relay.member)
    page = v.page
    expect_verified(page, 3)
    # Logging in asks supportedmethods (desk.js): answered before the promotion below, as a
    # member's (no desk). Asked after it, it would open an admin's desk, whose reads the ban
    # then refuses (403s the browser logs).
    with page.expect_response(lambda r: r.request.method == "POST"):
        log_in(page, relay.member)
    you = page.locator("#you-role")
    expect(you).to_have_text(f"You are a member of {NAME}.")
    relay.mem.update_relay_member_role(cid, relay.member.pubkey, "admin")
    expect(you).to_have_text(f"You are an admin of {NAME}.")
    relay.mem.ban_pubkey(cid, relay.member.pubkey, "spam", relay.owner.pubkey)
    expect(you).to_have_attribute("data-state", "not_member")
    expect(you).to_have_text(f"You are not a member of {NAME}.")
    expect(page.locator("#leave-button")).to_be_hidden()
    v.shot("you-banned-elsewhere")
    expect_clean(v)


@pytest.mark.parametrize(
    "screen",
    [
        pytest.param({"viewport": {"width": 360, "height": 740}}, id="360px"),
        pytest.param(
            {"viewport": {"width": 640, "height": 360}, "device_scale_factor": 2}, id="zoom-200"
        ),
    ],
)
def test_readable_narrow_and_zoomed(birders: Relay, visit, screen: dict[str, Any]) -> None:
    relay = birders
    code = invite(relay, ttl=dt.timedelta(hours=1))
    for person in (Person.new(), None):
        v = open_page(visit, relay, person, f"/?claim={code}", **screen)
        page = v.page
        expect_verified(page, 3)
        expect(page.locator("#join-button" if person else "#join-code")).to_be_visible()
        widths = no_horizontal_overflow(page)
        assert widths["doc_scroll"] <= widths["doc_client"], widths
        v.shot(f"invite-{'signer' if person else 'no-signer'}-{widths['doc_client']}px")
    # The own view, with the leave question open, as narrow.
    v = open_page(visit, relay, relay.member, **screen)
    expect_verified(v.page, 3)
    log_in(v.page, relay.member)
    v.page.click("#leave-button")
    expect(v.page.locator("#leave-confirm")).to_be_visible()
    widths = no_horizontal_overflow(v.page)
    assert widths["doc_scroll"] <= widths["doc_client"], widths
    v.shot(f"you-leave-asked-{widths['doc_client']}px")
