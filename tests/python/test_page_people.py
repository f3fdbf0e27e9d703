"""People, not keys (SPEC section 8), in a real browser: a member's own profile (kind 0), sent
to the relay over a websocket as a Nostr client sends it, appears as their name on another
person's page without a reload, as text; it goes with their removal, from the page and from
the database; the header says who runs the community; with --no-profiles no name is served.
The database is the truth."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

import aiohttp
from gate_fixtures import wire
from page_browser import PAGE_SIZE, expect_shown, expect_verified
from playwright.sync_api import Page, expect
from relay_client import signed
from relay_fixtures import Person, Relay

pytest_plugins = ("fixtures_membership", "relay_fixtures", "page_browser", "gate_fixtures")

MARKUP = '<b>Alice</b><img src=x onerror="window.__hacked=1">'


def publish_profile(url: str, person: Person, content: dict[str, Any]) -> list[Any]:
    """The person's kind 0, sent as a client sends it: AUTHed as its author, over a websocket
    of our own (in a thread: the browser's event loop holds this one). The relay's OK."""
    event = signed(person.secret, 0, [], json.dumps(content))
    answer: list[Any] = []

    async def send() -> None:
        async with aiohttp.ClientSession() as web, wire(web, url, person) as w:
            answer.extend(await w.ok(event))

    thread = threading.Thread(target=lambda: asyncio.run(send()))
    thread.start()
    thread.join(30)
    return answer


def row(page: Page, pubkey: str):
    return page.locator(f'#member-list li.member[data-pubkey="{pubkey}"]')


def stored_profiles(relay: Relay, pubkey: str) -> list[str]:
    return relay.mem.member_profiles(relay.community_id, [pubkey])


def test_a_members_name_appears_live_as_text_and_goes_with_them(relay: Relay, visit) -> None:
    v = visit(relay.process)
    page = v.open()
    expect_verified(page, 3)
    member = row(page, relay.member.pubkey)
    expect(member.locator(".npub")).to_be_visible()
    expect(member.locator(".person-name")).to_have_count(0)

    # The member names themselves from their own client: the visitor's page shows it, no reload.
    ok = publish_profile(relay.url, relay.member, {"name": "ignored", "display_name": MARKUP})
    assert ok[2:] == [True, ""], ok
    expect(member.locator(".person-name")).to_have_text(MARKUP)
    assert member.locator("b, img").count() == 0  # text, never markup
    assert page.evaluate("window.__hacked") is None
    expect(member.locator(".npub")).to_be_visible()  # the short npub stays beside the name
    # Search finds them by name.
    page.fill("#member-search", "alice")
    expect_shown(page, {relay.member.pubkey})
    page.fill("#member-search", "")

    # The owner's name: the header says who runs the community, before the list.
    ok = publish_profile(relay.url, relay.owner, {"name": "Olivia"})
    assert ok[2:] == [True, ""], ok
    runners = page.locator("#community-runners")
    expect(runners).to_contain_text("Run by Olivia")
    expect(row(page, relay.owner.pubkey).locator(".person-name")).to_have_text("Olivia")
    v.shot("named")

    # Removed through SQL: gone from the database in that transaction, and from the page.
    assert stored_profiles(relay, relay.member.pubkey) != []
    relay.mem.remove_relay_member(relay.community_id, relay.member.pubkey)
    assert stored_profiles(relay, relay.member.pubkey) == []
    expect_shown(page, {relay.owner.pubkey, relay.admin.pubkey})
    expect(page.get_by_text(MARKUP)).to_have_count(0)
    assert v.csp_violations() == [] and v.errors == []


def test_with_no_profiles_the_page_shows_keys_only(start_relay, relay: Relay, visit) -> None:
    private = start_relay("--community", str(relay.community_id), "--no-profiles")
    kept = signed(relay.member.secret, 0, [], json.dumps({"name": "Alice"}))
    assert relay.mem.set_member_profile(relay.community_id, json.dumps(kept)) == "stored"
    ok = publish_profile(private.url, relay.owner, {"name": "Olivia"})
    assert ok[2] is False and ok[3].startswith("blocked:"), ok
    assert stored_profiles(relay, relay.owner.pubkey) == []

    # Two pages of members: the second page's people are drawn after the relay said no.
    assert relay.mem.add_relay_members(
        relay.community_id, [Person.new().pubkey for _ in range(PAGE_SIZE)]
    ).outcome == PAGE_SIZE
    v = visit(private)
    asks: list[str] = []
    v.page.on(
        "websocket",
        lambda ws: ws.on(
            "framesent", lambda frame: asks.append(frame) if '"kinds":[0]' in frame else None
        ),
    )
    page = v.open()
    expect_verified(page, PAGE_SIZE + 3)
    expect(row(page, relay.owner.pubkey).locator(".npub")).to_be_visible()
    page.wait_for_timeout(500)  # what a subscription would have brought by now
    expect(page.locator(".person-name")).to_have_count(0)
    # Refused once (CLOSED unsupported:), the page asks no more for the next page's people.
    assert len(asks) == 2, asks  # the live subscription and the first page's people
    page.click("#members-next")
    expect(page.locator("#members-page")).to_have_text("page 2 of 2")
    page.wait_for_timeout(300)
    assert len(asks) == 2, asks
    # The same database through a relay that serves profiles: the name is there.
    named = visit(relay.process).open()
    named.fill("#member-search", relay.member.pubkey)
    expect(row(named, relay.member.pubkey).locator(".person-name")).to_have_text("Alice")
