"""The community's page as buzz-relay serves it (SPEC section 8), over HTTP, without a browser:
the HTML the server draws (name, icon, description, member count, every value escaped), the
bundles it loads, the headers on both, and what must not change: NIP-11, the plain-text answer
and the websocket. What the page's script does in a browser is test_page_browser.py's.
"""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import quote

import aiohttp
import pytest
from fixtures_membership import new_host
from relay_fixtures import Person, Relay, RelayProcess

from buzz_signer.membership import CommunityProfile, Membership
from buzz_signer.relay.answers import ANSWERS
from buzz_signer.relay.page import ASSET_DIR, Assets, InviteLink, member_count, render
from buzz_signer.relay.protocol import Community

pytest_plugins = ("fixtures_membership", "relay_fixtures")

HTML = {"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
SECURITY = {
    "Content-Security-Policy": CSP,
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
}


class Page(HTMLParser):
    """The page's elements by id (tag, attributes, text), its script and stylesheet URLs."""

    VOID = frozenset({"img", "input", "link", "meta", "br"})

    def __init__(self, text: str) -> None:
        super().__init__()
        self.by_id: dict[str, dict[str, Any]] = {}
        self.scripts: list[dict[str, str | None]] = []
        self.stylesheets: list[str] = []
        self.icon: str | None = None
        self.inline_styles = 0
        self._open: list[dict[str, Any]] = []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        if "style" in attributes or tag == "style":
            self.inline_styles += 1
        if tag == "script":
            self.scripts.append(attributes)
        if tag == "link" and attributes.get("rel") == "stylesheet":
            self.stylesheets.append(attributes["href"] or "")
        if tag == "link" and attributes.get("rel") == "icon":
            self.icon = attributes["href"]
        element = {"tag": tag, "attrs": attributes, "text": ""}
        if "id" in attributes:
            self.by_id[attributes["id"] or ""] = element
        if tag not in self.VOID:
            self._open.append(element)

    def handle_endtag(self, tag: str) -> None:
        if self._open and self._open[-1]["tag"] == tag:
            self._open.pop()

    def handle_data(self, data: str) -> None:
        for element in self._open:
            element["text"] += data

    def text(self, element_id: str) -> str:
        return self.by_id[element_id]["text"].strip()


def get_page(
    process: RelayProcess, path: str = "/", headers: dict[str, str] | None = None
) -> tuple[Page, str, Any]:
    status, body, headers = process.get(path, HTML | (headers or {}))
    assert status == 200, body
    assert headers["Content-Type"] == "text/html; charset=utf-8"
    return Page(body), body, headers


def assert_secure(headers: Any) -> None:
    for name, value in SECURITY.items():
        assert headers[name] == value, name
    assert "Set-Cookie" not in headers


@pytest.fixture(scope="module", autouse=True)
def assets_built() -> None:
    assert (ASSET_DIR / "manifest.json").is_file(), (
        f"no page assets in {ASSET_DIR}: scripts/setup builds them (node web/build.mjs)"
    )


def community_of(start_relay, mem: Membership, *members: str) -> tuple[RelayProcess, Any, str]:
    owner, host = Person.new(), new_host()
    cid = mem.create_community(host, owner.pubkey).details["community_id"]
    for pubkey in members:
        mem.add_relay_member(cid, pubkey)
    return start_relay("--community", str(cid)), cid, host


# ------------------------------------------------------------------ the HTML


def test_page_names_the_host_and_counts_the_live_list(relay: Relay):
    page, _, headers = get_page(relay.process)
    assert page.text("community-name") == relay.host
    assert page.by_id["community-name"]["tag"] == "h1"
    assert page.text("member-count") == "3 members"  # owner, admin, member
    # The relay's address as clients name it, under the name (--public-url's, here).
    assert page.text("relay-address") == f"ws://127.0.0.1:{relay.process.port}"
    assert page.by_id["relay-address"]["tag"] == "code"
    assert "community-description" not in page.by_id
    assert "community-icon" not in page.by_id
    status = page.by_id["list-status"]
    assert (status["tag"], status["attrs"]["role"], status["attrs"]["data-state"]) == (
        "p",
        "status",
        "loading",
    )
    assert page.by_id["member-search"]["attrs"]["type"] == "search"
    assert "for=\"member-search\"" in relay.process.get("/", HTML)[1]
    assert page.by_id["member-list"]["tag"] == "ul"
    assert page.text("members-page") == "page 1 of 1"
    assert {"members-prev", "members-next"} <= page.by_id.keys()
    assert page.inline_styles == 0
    assert headers["Cache-Control"] == "no-cache"
    assert headers["Vary"] == "Accept"  # the same URL answers NIP-11 and plain text too
    assert_secure(headers)

    # The count follows the live list: one more member, one more counted.
    relay.mem.add_relay_member(relay.community_id, Person.new().pubkey)
    assert get_page(relay.process)[0].text("member-count") == "4 members"


def test_page_shows_the_profile_and_one_member(start_relay, mem: Membership):
    process, cid, host = community_of(start_relay, mem)
    page = get_page(process)[0]
    assert (page.text("community-name"), page.text("member-count")) == (host, "1 member")

    icon = "https://images.example.org/buzz.png?size=64&round=1"
    mem.set_community_profile(cid, "name", "Buzz Makers")
    mem.set_community_profile(cid, "description", "We build hives.\nCome & see.")
    mem.set_community_profile(cid, "icon", icon)
    page, body, headers = get_page(process)
    # Images from the page's origin and the icon's own, no other (SPEC section 8).
    assert "img-src 'self' https://images.example.org;" in headers["Content-Security-Policy"]
    assert page.text("community-name") == "Buzz Makers"
    assert page.by_id["community-description"]["tag"] == "p"
    assert page.text("community-description") == "We build hives.\nCome & see."
    assert page.by_id["community-icon"]["attrs"] == {
        "id": "community-icon",
        "alt": "",
        "src": icon,
    }
    assert "size=64&amp;round=1" in body and "Come &amp; see" in body
    assert page.text("member-count") == "1 member"

    mem.set_community_profile(cid, "icon", None)
    page, _, headers = get_page(process)
    assert "community-icon" not in page.by_id
    assert headers["Content-Security-Policy"] == CSP


def test_hostile_profile_is_text_not_markup(relay: Relay):
    name = '<script>alert("name")</script>'
    description = "</p><img src=x onerror=alert(1)><p class='x'>&amp;"
    relay.mem.set_community_profile(relay.community_id, "name", name)
    relay.mem.set_community_profile(relay.community_id, "description", description)
    page, body, _ = get_page(relay.process)
    assert page.text("community-name") == name
    assert page.text("community-description") == description
    assert "<script>alert" not in body and "<img src=x" not in body
    assert "&lt;script&gt;alert(&quot;name&quot;)&lt;/script&gt;" in body
    assert "&amp;amp;" in body
    # Only the page's own bundle is a script, and nothing was given an inline handler.
    assert [s.get("src") for s in page.scripts] == [Assets.load().urls["app.js"]]
    assert "onerror" not in json.dumps([e["attrs"] for e in page.by_id.values()])


def test_unknown_host_gets_no_page(start_relay, mem: Membership):
    process = start_relay()
    status, body, _ = process.get("/", HTML | {"Host": "nowhere.example.org"})
    assert status == 404
    assert "<h1" not in body


# ------------------------------------------------------------------ joining


FLOTILLA = "https://app.flotilla.social/join"


def test_join_section_carries_the_join_policy(relay: Relay):
    """Without an invite link #join is the script's to fill (hidden until then); the server
    tells it the join policy, so the page needs no call to learn it."""
    for policy in ("invite", "request", "open"):
        relay.mem.set_join_policy(relay.community_id, policy)
        page = get_page(relay.process)[0]
        join = page.by_id["join"]
        assert (join["tag"], join["attrs"]["data-join-policy"]) == ("section", policy)
        assert "hidden" in join["attrs"] and "data-invite" not in join["attrs"]
        assert page.text("join-title") == f"Join {relay.host}"
        assert {"join-code", "join-flotilla", "join-no-signer"}.isdisjoint(page.by_id)
    # An empty claim is no invite.
    assert "join-code" not in get_page(relay.process, "/?claim=")[0].by_id


def test_an_invite_link_draws_the_code_and_a_flotilla_link(relay: Relay, start_relay):
    """What works without a script or a signer, in the order that works on a phone:
    Flotilla's join link first (with the relay's URL as clients name it), then the relay's
    address and the code for any other client, then the extensions. The code stays out of
    the relay's log."""
    relay.mem.set_community_profile(relay.community_id, "name", "Nightjar Birders")
    code = relay.mem.create_relay_invite(relay.community_id, relay.owner.pubkey).code
    page, _, headers = get_page(relay.process, f"/?claim={code}")
    join = page.by_id["join"]
    assert "hidden" not in join["attrs"] and "data-invite" in join["attrs"]
    assert join["attrs"]["data-join-policy"] == "invite"
    assert page.text("join-title") == "Join Nightjar Birders"
    assert page.text("join-code") == code
    assert page.by_id["join-code"]["tag"] == "code"
    flotilla = page.by_id["join-flotilla"]
    assert flotilla["attrs"]["href"] == (
        f"{FLOTILLA}?r=ws%3A%2F%2F127.0.0.1%3A{relay.process.port}&c={code}"
    )
    assert flotilla["tag"] == "a" and flotilla["text"] == "Open in Flotilla"
    assert page.text("join-relay") == f"ws://127.0.0.1:{relay.process.port}"
    help_text = page.text("join-no-signer")
    assert "NIP-07" in help_text and "nos2x" in help_text and "Alby" in help_text
    order = [help_text.index(words) for words in ("Open in Flotilla", "ws://", code, "NIP-07")]
    assert order == sorted(order), help_text
    assert page.inline_styles == 0
    assert headers["Cache-Control"] == "no-cache"
    assert_secure(headers)  # no-referrer: the code is not sent on by a link followed
    proxied = {"Host": "birders.example.org", "X-Forwarded-Proto": "https"}
    # The relay runs with --public-url (relay_fixtures): the link names it, whatever the Host.
    page = get_page(relay.process, f"/?claim={code}", proxied)[0]
    assert page.by_id["join-flotilla"]["attrs"]["href"] == (
        f"{FLOTILLA}?r=ws%3A%2F%2F127.0.0.1%3A{relay.process.port}&c={code}"
    )
    # Without one, behind a TLS proxy: wss://, and the host the browser used, without a port.
    bare = start_relay("--community", str(relay.community_id), public_url=False)
    page = get_page(bare, f"/?claim={code}", proxied)[0]
    assert page.by_id["join-flotilla"]["attrs"]["href"] == (
        f"{FLOTILLA}?r=wss%3A%2F%2Fbirders.example.org&c={code}"
    )
    assert page.text("join-relay") == "wss://birders.example.org"
    assert code not in relay.process.log() + bare.log()


def test_a_hostile_claim_is_text_and_the_link_is_encoded(relay: Relay):
    code = "\"><script>alert(1)</script><a href='x'>&amp;=1"
    page, body, _ = get_page(relay.process, "/?claim=" + quote(code, safe=""))
    assert page.text("join-code") == code
    assert page.scripts == [{"type": "module", "src": Assets.load().urls["app.js"]}]
    assert "<script>alert" not in body and "<a href='x'>" not in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body
    # Encoded as the script's encodeURIComponent does it, then escaped into the attribute.
    encoded = "%22%3E%3Cscript%3Ealert(1)%3C%2Fscript%3E%3Ca%20href%3D'x'%3E%26amp%3B%3D1"
    href = page.by_id["join-flotilla"]["attrs"]["href"]
    assert href == f"{FLOTILLA}?r=ws%3A%2F%2F127.0.0.1%3A{relay.process.port}&c={encoded}"
    assert f"&amp;c={encoded.replace(chr(39), '&#x27;')}\"" in body


def test_render_draws_the_invite_without_a_database(tmp_path: Path):
    community = Community(uuid.uuid4(), "buzz.example.org")
    invite = InviteLink("Spring_2026-birders", "wss://buzz.example.org")
    page = Page(render(community, None, None, Assets.load(tmp_path), invite))
    # The database did not answer: no policy is claimed, and the invite is still offered.
    assert "data-join-policy" not in page.by_id["join"]["attrs"]
    assert page.text("join-code") == "Spring_2026-birders"
    assert page.by_id["join-flotilla"]["attrs"]["href"] == (
        f"{FLOTILLA}?r=wss%3A%2F%2Fbuzz.example.org&c=Spring_2026-birders"
    )
    profile = CommunityProfile("Birders & Co", None, None, "request")
    page = Page(render(community, profile, 1, Assets.load(tmp_path)))
    assert page.by_id["join"]["attrs"]["data-join-policy"] == "request"
    assert "relay-address" not in page.by_id  # no address given, none claimed
    assert page.text("join-title") == "Join Birders & Co"


# ------------------------------------------------------------------ the assets


def test_assets_are_hashed_immutable_and_typed(relay: Relay):
    page = get_page(relay.process)[0]
    (script,) = page.scripts
    assert script["type"] == "module"
    urls = {"app.js": script["src"], "page.css": page.stylesheets[0], "icon.svg": page.icon}
    assert len(page.stylesheets) == 1
    manifest = json.loads((ASSET_DIR / "manifest.json").read_text())
    types = {
        "app.js": "text/javascript; charset=utf-8",
        "page.css": "text/css; charset=utf-8",
        "icon.svg": "image/svg+xml",
    }
    for logical, url in urls.items():
        stem, suffix = logical.split(".")
        assert re.fullmatch(rf"/assets/{stem}\.[A-Z0-9]{{8}}\.{suffix}", url or ""), url
        assert url == "/assets/" + manifest[logical]
        status, body, headers = relay.process.get(url or "")
        assert status == 200
        assert headers["Content-Type"] == types[logical]
        assert headers["Cache-Control"] == "public, max-age=31536000, immutable"
        assert_secure(headers)
        assert body == (ASSET_DIR / manifest[logical]).read_text()
    # The bundle carries nostr-tools' verification, not a call to another origin.
    app_js = relay.process.get(urls["app.js"] or "")[1]
    assert "13534" in app_js and "application/nostr+json" in app_js
    assert "http://" not in app_js.replace("http://www.w3.org", "")


def test_the_page_bundles_the_answers_the_relay_gives():
    """The page knows the relay's answers by the table the relay answers from: every message
    of answers.json is in the built bundle (a bundle older than the table would miss one),
    and each starts with a NIP-01 prefix, the part the page and clients read first."""
    manifest = json.loads((ASSET_DIR / "manifest.json").read_text())
    bundle = (ASSET_DIR / manifest["app.js"]).read_text()
    for word, message in ANSWERS.items():
        assert message in bundle, word
        assert re.fullmatch(r"[a-z-]+: \S.*", message), word


@pytest.mark.parametrize(
    "path",
    ["/assets/app.js", "/assets/nothing.js", "/assets/manifest.json", "/assets/..%2Fpage.py"],
)
def test_unknown_assets_are_404(relay: Relay, path: str):
    status, body, headers = relay.process.get(path)
    assert status == 404
    assert_secure(headers)
    assert "import" not in body


def test_a_page_without_built_assets_still_names_the_community(tmp_path: Path):
    assets = Assets.load(tmp_path)  # no manifest.json: never built
    assert assets.urls == {} and assets.files == {}
    community = Community(uuid.uuid4(), "buzz.example.org")
    page = Page(render(community, None, 1, assets))
    assert (page.text("community-name"), page.text("member-count")) == (
        "buzz.example.org",
        "1 member",
    )
    assert page.scripts == [] and page.stylesheets == [] and page.icon is None


def test_member_count_reads_the_list_text_without_parsing_it():
    tags = [["-"]] + [["member", f"{i:064x}", "member", "mod"] for i in range(3)]
    text = json.dumps({"kind": 13534, "tags": tags, "content": ""}, separators=(",", ":"))
    assert (member_count(text), member_count(None)) == (3, None)


# ------------------------------------------------------------------ what stays as it was


def test_nip11_plain_text_and_websocket_are_unchanged(relay: Relay):
    status, body, headers = relay.process.get("/", {"Accept": "application/nostr+json"})
    assert status == 200
    assert headers["Content-Type"].startswith("application/nostr+json")
    assert headers["Access-Control-Allow-Origin"] == "*"
    assert json.loads(body)["self"] == relay.key.pubkey
    # A browser's Accept that also names NIP-11 gets NIP-11, as before.
    both = relay.process.get("/", {"Accept": "application/nostr+json, text/html"})
    assert json.loads(both[1])["self"] == relay.key.pubkey

    for accept in ({}, {"Accept": "*/*"}, {"Accept": "text/plain"}):
        status, body, headers = relay.process.get("/", accept)
        assert status == 200
        assert headers["Content-Type"].startswith("text/plain")
        assert "a Nostr relay for NIP-43 membership" in body

    async def live_list() -> dict[str, Any]:
        async with aiohttp.ClientSession() as http, http.ws_connect(relay.url) as ws:
            assert json.loads((await ws.receive(timeout=10)).data)[0] == "AUTH"
            await ws.send_str(json.dumps(["REQ", "list", {"kinds": [13534], "limit": 1}]))
            verb, _, event = json.loads((await ws.receive(timeout=10)).data)
            assert verb == "EVENT"
            assert json.loads((await ws.receive(timeout=10)).data)[0] == "EOSE"
            return event

    event = asyncio.run(live_list())
    members = [t for t in event["tags"] if t[0] == "member"]
    assert f"{len(members)} members" == get_page(relay.process)[0].text("member-count")
