"""The community's page (SPEC §8) in a real browser: Debian's Chromium, driven by Playwright.

Each test starts a real buzz-relay over its own database (``relay`` and ``start_relay`` of
relay_fixtures.py), opens the page at the relay's origin, and checks what the page shows against
the database (``Membership`` reads), which is the truth. Members are added and removed through
SQL, as any outside service does, and the page must follow without a reload.

A list that fails verification is made by rewriting the relay's 13534 frames on their way into
the page (Playwright's ``page.route_web_socket``): the relay and the database stay real, only the
event the page receives is altered (its signature, its id, or its author), or an older list the
relay sent is played to the page again after a newer one.

The browser is ``/usr/bin/chromium`` (scripts/setup installs it); Playwright never downloads one.
A person's NIP-07 signer (``window.nostr``) is injected as an extension injects it, its key kept
on the Python side (``nip07_signer``).

Screenshots of each state go to each test's temporary directory (they are not compared); with
``BUZZ_PAGE_SCREENSHOT=1`` the visitor view is also saved as docs/page.png.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
from typing import Any

import pytest
from fixtures_membership import kind0, new_host, new_pubkey
from page_browser import (
    COUNT_HISTORY_JS,
    CSP,
    DOCS_SCREENSHOT,
    ICON_URL,
    IMMUTABLE,
    PAGE_SIZE,
    SECURITY_HEADERS,
    ListFeed,
    all_pages,
    assert_shows_database,
    expect_failed,
    expect_shown,
    expect_verified,
    nip07_signer,
    no_horizontal_overflow,
    shown_pubkeys,
    tab_to,
)
from playwright.sync_api import expect
from relay_fixtures import Person, Relay

from buzz_signer.keys import RelayKey
from buzz_signer.membership import Membership
from buzz_signer.nip19 import encode_npub
from buzz_signer.nostr import verify_event

pytest_plugins = ("fixtures_membership", "relay_fixtures", "page_browser")

# ------------------------------------------------------------------ the visitor's view


@pytest.fixture
def profiled(relay: Relay) -> Relay:
    """The relay's community with a name, a description and a defined role its member holds;
    the owner and the member have named themselves (their own kind 0), the admin has not."""
    mem, cid = relay.mem, relay.community_id
    for person, fields in (
        (relay.owner, {"name": "maya"}),
        (relay.member, {"name": "sam", "display_name": "Sam Reyes"}),
    ):
        profile = kind0(RelayKey.from_secret(person.secret), json.dumps(fields))
        assert mem.set_member_profile(cid, profile) == "stored"
    mem.set_community_profile(cid, "name", "Nightjar Birders")
    mem.set_community_profile(
        cid, "description", "Sightings, recordings and the odd field trip, members only."
    )
    mem.define_role(cid, "recorder", "Sound recorder", color=200)
    mem.define_role(cid, "guide", "Field guide", color=20)
    mem.assign_role(cid, relay.member.pubkey, "recorder")
    mem.assign_role(cid, relay.member.pubkey, "guide")
    mem.assign_role(cid, relay.admin.pubkey, "guide")
    return relay


def test_the_header_names_the_relay_and_counts_in_the_readers_locale(relay: Relay, visit) -> None:
    """Under the community's name, the relay's address as clients name it, with a button that
    copies it; the count in the reader's locale (1,003 for an American, 1.003 for a German)."""
    mem, cid = relay.mem, relay.community_id
    assert mem.add_relay_members(cid, [new_pubkey() for _ in range(1000)]).outcome == 1000
    for locale, count in (("en-US", "1,003 members"), ("de-DE", "1.003 members")):
        v = visit(relay.process, locale=locale, permissions=["clipboard-read", "clipboard-write"])
        page = v.open()
        expect(page.locator("#list-status")).to_have_attribute("data-state", "verified")
        expect(page.locator("#member-count")).to_have_text(count)
        address = "ws://" + v.origin.removeprefix("http://")
        expect(page.locator("#relay-address")).to_have_text(address)
        copy = page.locator("#relay-address-copy")
        copy.click()
        expect(copy).to_have_text("Copied")
        assert page.evaluate("navigator.clipboard.readText()") == address
        assert v.csp_violations() == []
        assert v.errors == []


def test_visitor_sees_every_member_verified(profiled: Relay, visit) -> None:
    relay, mem, cid = profiled, profiled.mem, profiled.community_id
    v = visit(relay.process)
    page = v.open()
    expect(page.locator("#community-name")).to_have_text("Nightjar Birders")
    expect(page.locator("#community-description")).to_contain_text("Sightings, recordings")
    expect_verified(page, 3)
    assert_shows_database(page, mem, cid)
    # Who runs the community first: the owner, then the admin, then the member.
    assert shown_pubkeys(page) == [relay.owner.pubkey, relay.admin.pubkey, relay.member.pubkey]
    # Each by the name they gave themselves (display_name before name), else by their key alone;
    # the header says who runs the community.
    names = page.locator("#member-list li.member").evaluate_all(
        "rows => rows.map(r => r.querySelector('.person-name')?.textContent ?? null)"
    )
    assert names == ["maya", None, "Sam Reyes"]
    expect(page.locator("#community-runners")).to_have_text(
        re.compile(r"^Run by maya npub1\S+ and npub1\S+$")
    )
    # A picture for each, drawn from the key: three keys, three pictures.
    pictures = page.evaluate(
        "[...document.querySelectorAll('#member-list svg.identicon')].map(s => s.outerHTML)"
    )
    assert len(set(pictures)) == 3
    # The proof after the people, one line, its details on demand: the list's own id.
    assert page.evaluate(
        """document.getElementById('member-list').compareDocumentPosition(
               document.getElementById('list-status')) & Node.DOCUMENT_POSITION_FOLLOWING"""
    )
    page.locator("#list-proof summary").click()
    expect(page.locator("#list-proof-text")).to_contain_text(mem.member_list(cid)["id"])
    # The date and time the list was signed, in the browser's time zone (UTC here).
    signed = dt.datetime.fromtimestamp(mem.member_list(cid)["created_at"], dt.UTC)
    assert str(signed.year) in page.inner_text("#list-status")
    # Each role in its own 33534 color: two hues, two different looks.
    looks = page.evaluate(
        """() => Object.fromEntries([...document.querySelectorAll('#member-list .role')].map(
            s => { const c = getComputedStyle(s);
                   return [s.dataset.role, [c.color, c.backgroundColor, c.borderColor].join()]; }))"""
    )
    assert looks["recorder"] != looks["guide"], looks
    assert v.csp_violations() == []
    assert v.errors == []
    page.evaluate("window.__sameDocument = true")
    v.shot("visitor")
    if os.environ.get("BUZZ_PAGE_SCREENSHOT") == "1":
        page.screenshot(path=str(DOCS_SCREENSHOT), full_page=True)

    # A member added through SQL appears, without a reload; a removed one disappears.
    newcomer = new_pubkey()
    assert mem.add_relay_member(cid, newcomer).outcome == "added"
    expect(page.locator(f'#member-list li.member[data-pubkey="{newcomer}"]')).to_have_count(1)
    expect_verified(page, 4)
    assert_shows_database(page, mem, cid)
    v.shot("member-added")

    mem.remove_relay_member(cid, relay.member.pubkey)
    expect(page.locator(f'li.member[data-pubkey="{relay.member.pubkey}"]')).to_have_count(0)
    expect_verified(page, 3)
    assert_shows_database(page, mem, cid)
    v.shot("member-removed")

    # A role's new label (a new 33534) is shown without a reload too.
    mem.define_role(cid, "guide", "Trip leader", color=20)
    expect(page.locator(f'li.member[data-pubkey="{relay.admin.pubkey}"] .role')).to_have_text(
        ["Trip leader"]
    )
    assert_shows_database(page, mem, cid)
    assert page.evaluate("window.__sameDocument") is True, "the page reloaded"
    assert v.csp_violations() == []
    assert v.errors == []


def test_markup_in_a_name_or_label_is_shown_as_text(relay: Relay, visit) -> None:
    mem, cid = relay.mem, relay.community_id
    name = "<script>document.title='owned'</script>"
    label = "<img src=/x onerror=alert(1)>"
    mem.set_community_profile(cid, "name", name)
    mem.set_community_profile(cid, "description", "<b>bold</b> & <i>plain</i>")
    mem.define_role(cid, "odd", label)
    mem.assign_role(cid, relay.member.pubkey, "odd")
    for javascript in (False, True):
        v = visit(relay.process, java_script_enabled=javascript)
        page = v.open()
        expect(page.locator("#community-name")).to_have_text(name)
        expect(page.locator("#community-description")).to_have_text("<b>bold</b> & <i>plain</i>")
        assert page.locator("main script, main img:not(#community-icon), main b").count() == 0
    expect_verified(page, 3)
    expect(page.locator(".role[data-role=odd]")).to_have_text(label)
    assert page.locator("#member-list img").count() == 0
    assert page.title() != "owned"
    assert v.errors == []


@pytest.mark.parametrize(
    ("how", "reason"),
    [
        ("signature", "bad signature"),
        ("id", "bad id"),
        ("author", "not signed by this relay's key"),
    ],
)
def test_a_list_that_fails_verification_shows_no_member(
    relay: Relay, visit, how: str, reason: str
) -> None:
    v = visit(relay.process)
    ListFeed(v.page).how = how
    page = v.open()
    expect_failed(page, reason)
    v.shot(f"failed-{how}")


def test_a_bad_list_after_a_good_one_empties_the_list(relay: Relay, visit) -> None:
    mem, cid = relay.mem, relay.community_id
    v = visit(relay.process)
    feed = ListFeed(v.page)
    page = v.open()
    expect_verified(page, 3)
    feed.how = "signature"
    mem.add_relay_member(cid, new_pubkey())
    expect_failed(page, "bad signature")
    v.shot("failed-after-verified")
    # The next list that verifies is shown again, as the database has it.
    feed.how = None
    mem.add_relay_member(cid, new_pubkey())
    expect_verified(page, 5)
    assert_shows_database(page, mem, cid)
    assert v.errors == []


def test_an_older_list_never_replaces_a_newer_one(relay: Relay, visit) -> None:
    """A valid list replayed after a newer one (as a relay in the middle could) is ignored."""
    mem, cid = relay.mem, relay.community_id
    v = visit(relay.process)
    v.context.add_init_script(COUNT_HISTORY_JS)
    feed = ListFeed(v.page)
    page = v.open()
    expect_verified(page, 3)
    oldest = feed.lists[0]
    mem.add_relay_member(cid, new_pubkey())
    expect_verified(page, 4)
    feed.send(oldest)
    # Sent after the replay, so the page reads the replay first.
    mem.add_relay_member(cid, new_pubkey())
    expect_verified(page, 5)
    assert_shows_database(page, mem, cid)
    shown = page.evaluate("window.__countHistory")
    assert shown[shown.index("4 members") :] == ["4 members", "5 members"], shown
    assert v.errors == []


def test_the_signer_is_there_for_the_page(relay: Relay, visit) -> None:
    """The NIP-07 signer the join tests use: present in the page, signing as the person."""
    v = visit(relay.process)
    nip07_signer(v.context, relay.member)
    page = v.open()
    expect_verified(page, 3)
    assert page.evaluate("window.nostr.getPublicKey()") == relay.member.pubkey
    event = page.evaluate(
        "window.nostr.signEvent({kind: 1, created_at: 1700000000, tags: [], content: 'hi'})"
    )
    assert event["pubkey"] == relay.member.pubkey
    assert verify_event(event)
    assert v.csp_violations() == []


# ------------------------------------------------------------------ a few hundred members


@pytest.fixture
def crowded(relay: Relay) -> Relay:
    """The relay's community grown to 253 members (3 pages), three of them moderators."""
    mem, cid = relay.mem, relay.community_id
    assert mem.add_relay_members(cid, [new_pubkey() for _ in range(250)]).outcome == 250
    mem.define_role(cid, "moderator", "Moderators", color=300)
    for pubkey in sorted(m.pubkey for m in mem.relay_members(cid))[:3]:
        mem.assign_role(cid, pubkey, "moderator")
    return relay


def test_paging_shows_every_member_once(crowded: Relay, visit) -> None:
    mem, cid = crowded.mem, crowded.community_id
    v = visit(crowded.process)
    page = v.open()
    expect_verified(page, 253)
    expect(page.locator("#members-page")).to_have_text("page 1 of 3")
    assert_shows_database(page, mem, cid)
    v.shot("page-1")
    pages = all_pages(page)
    assert [len(p) for p in pages] == [100, 100, 53]
    everyone = [pk for p in pages for pk in p]
    assert sorted(everyone) == sorted(m.pubkey for m in mem.relay_members(cid))
    expect(page.locator("#members-page")).to_have_text("page 3 of 3")
    v.shot("page-3")
    page.click("#members-prev")
    expect(page.locator("#members-page")).to_have_text("page 2 of 3")
    assert shown_pubkeys(page) == pages[1]
    assert v.errors == []


def test_search_by_npub_hex_prefix_or_role_label(crowded: Relay, visit) -> None:
    mem, cid = crowded.mem, crowded.community_id
    members = mem.relay_members(cid)
    someone, another = members[len(members) // 2].pubkey, members[len(members) // 3].pubkey
    v = visit(crowded.process)
    page = v.open()
    expect_verified(page, 253)
    search = page.locator("#member-search")
    expect(page.locator('label[for="member-search"]')).to_have_count(1)

    def search_for(text: str, expected: set[str]) -> None:
        # From the whole list each time, so that no search passes on the previous one's result.
        search.fill("")
        expect(page.locator("#member-list li.member")).to_have_count(PAGE_SIZE)
        search.fill(text)
        expect_shown(page, expected)

    hex_prefix = someone[:6]
    search_for(hex_prefix, {m.pubkey for m in members if m.pubkey.startswith(hex_prefix)})
    v.shot("search-hex")
    npub_prefix = encode_npub(another)[:12]
    search_for(
        npub_prefix, {m.pubkey for m in members if encode_npub(m.pubkey).startswith(npub_prefix)}
    )
    search_for("Moderators", {m.pubkey for m in members if "moderator" in m.roles})
    v.shot("search-role")
    search_for("npub1zzzzzzzzzzzzzzzzzz", set())
    search.fill("")
    expect(page.locator("#member-list li.member")).to_have_count(PAGE_SIZE)
    expect(page.locator("#members-page")).to_have_text("page 1 of 3")
    assert v.errors == []


def test_keyboard_reaches_search_and_paging(crowded: Relay, visit) -> None:
    v = visit(crowded.process)
    page = v.open()
    expect_verified(page, 253)
    tab_to(page, "member-search")
    prefix = crowded.member.pubkey[:8]
    page.keyboard.type(prefix)
    expect(page.locator("#member-list li.member")).to_have_count(
        sum(m.pubkey.startswith(prefix) for m in crowded.mem.relay_members(crowded.community_id))
    )
    page.keyboard.press("Control+A")
    page.keyboard.press("Backspace")
    expect(page.locator("#members-page")).to_have_text("page 1 of 3")

    tab_to(page, "members-next")
    page.keyboard.press("Enter")
    expect(page.locator("#members-page")).to_have_text("page 2 of 3")
    page.keyboard.press("Space")  # still on "next"
    expect(page.locator("#members-page")).to_have_text("page 3 of 3")
    tab_to(page, "members-prev")
    page.keyboard.press("Space")
    expect(page.locator("#members-page")).to_have_text("page 2 of 3")
    page.keyboard.press("Enter")
    expect(page.locator("#members-page")).to_have_text("page 1 of 3")
    v.shot("keyboard")


@pytest.mark.parametrize(
    "screen",
    [
        # A phone held upright.
        pytest.param(
            {
                "viewport": {"width": 390, "height": 844},
                "device_scale_factor": 3,
                "is_mobile": True,
                "has_touch": True,
            },
            id="phone-390px",
        ),
        # A 1280 x 720 window zoomed to 200%: the page is laid out in 640 x 360 CSS pixels,
        # drawn at two device pixels each, which is what the browser's zoom does.
        pytest.param(
            {"viewport": {"width": 640, "height": 360}, "device_scale_factor": 2}, id="zoom-200"
        ),
    ],
)
def test_readable_narrow_and_zoomed(crowded: Relay, visit, screen: dict[str, Any]) -> None:
    v = visit(crowded.process, **screen)
    page = v.open()
    expect_verified(page, 253)
    widths = no_horizontal_overflow(page)
    assert widths["doc_scroll"] <= widths["doc_client"], widths
    assert widths["list_scroll"] <= widths["list_client"], widths
    v.shot(f"narrow-{widths['doc_client']}px", full_page=False)


# ------------------------------------------------------------------ without JavaScript


def test_without_javascript_names_the_community_and_its_count(
    start_relay, mem: Membership, visit
) -> None:
    owner = Person.new()
    host = new_host()
    cid = mem.create_community(host, owner.pubkey).details["community_id"]
    v = visit(start_relay("--community", str(cid)), java_script_enabled=False)
    page = v.open()
    # No profile name: the page is named by the community's host; one member, the owner.
    expect(page.locator("#community-name")).to_have_text(host)
    expect(page.locator("#member-count")).to_have_text("1 member")
    expect(page.locator("#community-description")).to_have_count(0)
    expect(page.locator("#community-icon")).to_have_count(0)
    v.shot("no-javascript-one-member")

    mem.set_community_profile(cid, "name", "Quiet Corner")
    for _ in range(4):
        mem.add_relay_member(cid, new_pubkey())
    page.reload()
    expect(page.locator("#community-name")).to_have_text("Quiet Corner")
    expect(page.locator("#member-count")).to_have_text("5 members")
    v.shot("no-javascript")


# ------------------------------------------------------------------ what leaves, what is sent


def test_nothing_leaves_for_another_origin_and_headers_hold(relay: Relay, visit) -> None:
    mem, cid = relay.mem, relay.community_id
    mem.set_community_profile(cid, "icon", ICON_URL)
    v = visit(relay.process)
    page = v.open()
    expect_verified(page, 3)
    icon = page.locator("#community-icon")
    expect(icon).to_have_attribute("src", ICON_URL)
    expect(icon).to_have_attribute("alt", "")
    expect(icon).to_have_js_property("naturalWidth", 1)  # loaded: the CSP lets its origin in
    v.shot("with-icon")

    origins = {v.origin, "ws" + v.origin.removeprefix("http")}
    elsewhere = [
        url
        for url in v.requests
        if url != ICON_URL and not any(url == o or url.startswith(o + "/") for o in origins)
    ]
    assert elsewhere == []
    assert ICON_URL in v.requests
    # The list came over the same-origin websocket, which connect-src 'self' lets through.
    assert any(url.startswith("ws://") for url in v.requests), v.requests

    # The page and each of its assets (not the NIP-11 document, which clients fetch too).
    checked = []
    for response in v.responses:
        request = response.request
        if not response.url.startswith(v.origin + "/") or request.resource_type not in (
            "document",
            "script",
            "stylesheet",
            "image",
            "font",
            "manifest",
        ):
            continue
        headers = response.all_headers()
        where = f"{request.resource_type} {response.url}"
        assert response.status == 200, where
        directives = [d.strip() for d in headers.get("content-security-policy", "").split(";")]
        # The icon's own origin for the page's images, and no other.
        policy = CSP
        if request.resource_type == "document":
            policy = CSP.replace("img-src 'self'", "img-src 'self' https://icons.example.org")
        assert directives == [d.strip() for d in policy.split(";")], where
        for name, value in SECURITY_HEADERS.items():
            assert headers.get(name) == value, f"{where}: {name}"
        assert "set-cookie" not in headers, where
        cache = headers.get("cache-control")
        if request.resource_type == "document":
            assert cache == "no-cache", where
        else:
            assert cache == IMMUTABLE or (cache == "no-cache" and headers.get("etag")), where
        checked.append(request.resource_type)
    assert "document" in checked and "script" in checked, checked
    assert v.context.cookies() == []
    assert v.csp_violations() == []
    assert v.errors == []
