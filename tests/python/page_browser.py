"""The community's page in a real browser: Debian's Chromium driven by Playwright, and what
every browser test of the page shares (the ``browser`` and ``visit`` fixtures, a person's
NIP-07 signer, what the page shows, a websocket feed to tamper with).

The browser is ``/usr/bin/chromium`` (scripts/setup installs it); Playwright never downloads one.
A person's NIP-07 signer (``window.nostr``) is injected as an extension injects it, its key kept
on the Python side (``nip07_signer``). Screenshots go to each test's temporary directory (they
are not compared).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fixtures_membership import new_pubkey
from playwright.sync_api import (
    Browser,
    BrowserContext,
    Page,
    WebSocketRoute,
    expect,
    sync_playwright,
)
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from relay_fixtures import Person, Relay, RelayProcess

from buzz_signer.keys import RelayKey
from buzz_signer.membership import Membership
from buzz_signer.nip19 import encode_npub
from buzz_signer.nostr import KIND_MEMBERSHIP_LIST, compute_id, verify_event
from buzz_signer.relay.page import ASSET_DIR

CHROMIUM = Path("/usr/bin/chromium")
REPO = Path(__file__).resolve().parents[2]
DOCS_SCREENSHOT = REPO / "docs" / "page.png"

# SPEC §8: every page and asset response carries these.
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "referrer-policy": "no-referrer",
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
}
IMMUTABLE = "public, max-age=31536000, immutable"
PAGE_SIZE = 100
ICON_URL = "https://icons.example.org/community.png"
# A 1x1 PNG, served for ICON_URL by the test (no request leaves the machine).
ONE_PIXEL_PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360f8cff01f0005000201a5f6a4a90000000049454e44ae426082"
)

# Waits in the page are for something shown, never a duration; this only bounds them.
expect.set_options(timeout=20_000)

# Everything the page shows of its members, one dict per <li class="member">.
SHOWN_MEMBERS_JS = """() => [...document.querySelectorAll('#member-list li.member')].map(li => ({
    pubkey: li.dataset.pubkey,
    npub: (li.querySelector('code.npub') || {dataset: {}}).dataset.npub,
    shortNpub: (li.querySelector('code.npub') || {}).textContent,
    identicon: !!li.querySelector('svg.identicon rect'),
    base: (li.querySelector('.base-role') || {}).textContent,
    roles: [...li.querySelectorAll('.role')].map(s => [s.dataset.role, s.textContent.trim()]),
}))"""

# Installed before the page's own scripts: what the Content-Security-Policy refused, if anything.
CSP_WATCH_JS = """
window.__cspViolations = [];
document.addEventListener('securitypolicyviolation', (e) => {
    window.__cspViolations.push(e.violatedDirective + ' ' + e.blockedURI);
});
"""


# Installed before the page's own scripts: each member count the page shows, in order.
COUNT_HISTORY_JS = """
window.__countHistory = [];
new MutationObserver(() => {
    const count = document.getElementById('member-count');
    const text = count && count.textContent.trim();
    const seen = window.__countHistory;
    if (text && seen[seen.length - 1] !== text) seen.push(text);
}).observe(document, {subtree: true, childList: true, characterData: true});
"""


# ------------------------------------------------------------------ the browser


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not CHROMIUM.exists():
        pytest.fail(
            f"{CHROMIUM} is missing: the page's tests need Debian's chromium package "
            "(scripts/setup installs it; or apt-get install chromium)"
        )
    if not (ASSET_DIR / "manifest.json").exists():
        pytest.fail(f"the page's script is not built in {ASSET_DIR}: scripts/setup builds it")
    with sync_playwright() as playwright:
        # As root Playwright passes --no-sandbox itself.
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM))
        try:
            yield chromium
        finally:
            chromium.close()


class Visit:
    """One browser context on the page: everything it requested, and what went wrong in it."""

    def __init__(self, context: BrowserContext, page: Page, origin: str, shots: Path) -> None:
        self.context = context
        self.page = page
        self.origin = origin
        self.shots = shots
        self.requests: list[str] = []
        self.responses: list[Any] = []
        self.errors: list[str] = []
        context.on("request", lambda r: self.requests.append(r.url))
        context.on("response", lambda r: self.responses.append(r))
        page.on("websocket", lambda ws: self.requests.append(ws.url))
        page.on("pageerror", lambda exc: self.errors.append(f"page error: {exc}"))
        page.on(
            "console",
            lambda m: (
                self.errors.append(f"console {m.type}: {m.text}") if m.type == "error" else None
            ),
        )

    def open(self) -> Page:
        self.page.goto(self.origin + "/")
        return self.page

    def shot(self, name: str, full_page: bool = True) -> Path:
        path = self.shots / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=full_page)
        return path

    def csp_violations(self) -> list[str]:
        return self.page.evaluate("window.__cspViolations || []")


@pytest.fixture
def visit(browser: Browser, tmp_path: Path) -> Iterator[Callable[..., Visit]]:
    """visit(relay process, **context options) -> a Visit of its page (not yet opened)."""
    contexts: list[BrowserContext] = []
    shots = tmp_path / "screenshots"
    shots.mkdir()

    def open_visit(relay: RelayProcess, **options: Any) -> Visit:
        options = {"timezone_id": "UTC", "locale": "en-US"} | options
        context = browser.new_context(**options)
        contexts.append(context)
        if options.get("java_script_enabled", True):
            context.add_init_script(CSP_WATCH_JS)
        # The icon's origin answers from here: the page may load it, nothing leaves the machine.
        context.route(
            ICON_URL, lambda route: route.fulfill(body=ONE_PIXEL_PNG, content_type="image/png")
        )
        return Visit(context, context.new_page(), relay.http, shots)

    yield open_visit
    for context in contexts:
        context.close()


def nip07_signer(context: BrowserContext, person: Person) -> None:
    """window.nostr in every page of `context`, as a NIP-07 extension provides it: getPublicKey
    and signEvent, signing on this side with the person's key (never in the page, argv or a
    log)."""
    key = RelayKey.from_secret(person.secret)

    def sign_event(template: dict[str, Any]) -> dict[str, Any]:
        event = {
            "pubkey": key.pubkey,
            "created_at": int(template["created_at"]),
            "kind": int(template["kind"]),
            "tags": template.get("tags", []),
            "content": template.get("content", ""),
        }
        event["id"] = compute_id(event)
        event["sig"] = key.sign(event["id"])
        return event

    context.expose_function("__buzzTestSignEvent", sign_event)
    context.add_init_script(
        "window.nostr = {"
        f" getPublicKey: async () => {json.dumps(key.pubkey)},"
        " signEvent: async (event) => window.__buzzTestSignEvent(event),"
        " };"
    )


# ------------------------------------------------------------------ what the page shows


def shown_members(page: Page) -> list[dict[str, Any]]:
    return page.evaluate(SHOWN_MEMBERS_JS)


def shown_pubkeys(page: Page) -> list[str]:
    return [m["pubkey"] for m in shown_members(page)]


def expect_shown(page: Page, pubkeys: set[str]) -> None:
    """Wait until the page shows exactly these members."""
    try:
        page.wait_for_function(
            """(want) => JSON.stringify([...document.querySelectorAll('#member-list li.member')]
                .map(li => li.dataset.pubkey).sort()) === JSON.stringify(want)""",
            arg=sorted(pubkeys),
            timeout=20_000,
        )
    except PlaywrightTimeout:
        raise AssertionError(
            f"shown {sorted(shown_pubkeys(page))}, not {sorted(pubkeys)}"
        ) from None


def count_text(n: int) -> str:
    """#member-count's text in an en-US browser: the count in its locale."""
    return "1 member" if n == 1 else f"{n:,} members"


def expect_verified(page: Page, count: int) -> None:
    """The page verified the live list and shows `count` members in all (all pages)."""
    status = page.locator("#list-status")
    expect(status).to_have_attribute("data-state", "verified")
    expect(status).to_have_text(re.compile(r"^\s*Verified list signed \S"))
    expect(page.locator("#member-count")).to_have_text(count_text(count))
    expect(page.locator("#member-list li.member")).to_have_count(min(count, PAGE_SIZE))


def expect_failed(page: Page, reason: str) -> None:
    status = page.locator("#list-status")
    expect(status).to_have_attribute("data-state", "failed")
    expect(status).to_have_text(re.compile(r"^\s*This member list failed verification:"))
    text = status.inner_text().replace("\u2019", "'").lower()
    assert reason in text, f"{reason!r} not named in the status: {text!r}"
    assert shown_members(page) == []
    # The count drawn by the server came from the same relay: no more trusted than the list.
    expect(page.locator("#member-count")).to_have_text("Member count unknown")
    expect(page.locator("#list-proof")).to_be_hidden()  # no proof offered for what failed


def role_labels(mem: Membership, cid: Any) -> dict[str, str]:
    """Each defined role's 33534 label, by role id (the database's live definitions)."""
    labels = {}
    for event in mem.role_definitions(cid):
        tags = {t[0]: t[1] for t in event["tags"] if len(t) > 1}
        labels[tags["d"]] = tags.get("label", tags["d"])
    return labels


def assert_shows_database(page: Page, mem: Membership, cid: Any, timeout: float = 10) -> None:
    """Every member the page shows is the database's, with its npub, base role and roles.

    The role definitions (33534) may reach the page after the list it has verified, and a
    role is drawn by its id until its label is in: the check is repeated, until `timeout`,
    while the page may still be drawing them."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            _shows_database(page, mem, cid)
            return
        except AssertionError:
            if time.monotonic() > deadline:
                raise
            page.wait_for_timeout(50)


def _shows_database(page: Page, mem: Membership, cid: Any) -> None:
    members = {m.pubkey: m for m in mem.relay_members(cid)}
    labels = role_labels(mem, cid)
    shown = shown_members(page)
    assert len(shown) == min(len(members), PAGE_SIZE)
    assert len({m["pubkey"] for m in shown}) == len(shown), "a member is shown twice"
    for item in shown:
        member = members.get(item["pubkey"])
        assert member is not None, f"{item['pubkey']} is shown but is not a member"
        npub = encode_npub(member.pubkey)
        assert item["npub"] == npub
        assert item["shortNpub"] == f"{npub[:14]}…{npub[-6:]}"
        assert item["identicon"], "no picture drawn"
        assert (item["base"] or "").strip().lower() == member.role
        assert item["roles"] == [[r, labels[r]] for r in member.roles]


def all_pages(page: Page) -> list[list[str]]:
    """The pubkeys of each page of the list, from page 1 on (clicking next)."""
    pages = []
    while True:
        pages.append(shown_pubkeys(page))
        total = int(re.search(r"of (\d+)", page.inner_text("#members-page")).group(1))
        if len(pages) == total:
            return pages
        shown = page.inner_text("#members-page")
        page.click("#members-next")
        expect(page.locator("#members-page")).not_to_have_text(shown)


def tab_to(page: Page, element_id: str, limit: int = 200) -> None:
    """Press Tab until the element has the focus (fails if it never gets it)."""
    seen = []
    for _ in range(limit):
        page.keyboard.press("Tab")
        focused = page.evaluate("document.activeElement && document.activeElement.id")
        if focused == element_id:
            return
        seen.append(focused)
    raise AssertionError(f"Tab never reached #{element_id}; it reached {seen[:40]}")


def no_horizontal_overflow(page: Page) -> dict[str, int]:
    return page.evaluate(
        """() => {
            const doc = document.documentElement, list = document.getElementById('member-list');
            return {doc_scroll: doc.scrollWidth, doc_client: doc.clientWidth,
                    list_scroll: list.scrollWidth, list_client: list.clientWidth};
        }"""
    )


# ------------------------------------------------------------------ a list made bad on its way


def is_list_event(frame: str) -> bool:
    message = json.loads(frame)
    return message[0] == "EVENT" and message[2].get("kind") == KIND_MEMBERSHIP_LIST


def tampered(frame: str, how: str, impostor: RelayKey) -> str:
    """The relay's frame, its 13534 event made to fail one check of the page: `signature`
    (one bit of the sig changed), `id` (a member tag added, the id left as it was) or `author`
    (re-signed, validly, by a key that is not the relay's)."""
    message = json.loads(frame)
    event = dict(message[2])
    if how == "signature":
        last = int(event["sig"][-1], 16) ^ 1
        event["sig"] = event["sig"][:-1] + f"{last:x}"
    elif how == "id":
        event["tags"] = [*event["tags"], ["member", new_pubkey(), "member"]]
    elif how == "author":
        event["pubkey"] = impostor.pubkey
        event["id"] = compute_id(event)
        event["sig"] = impostor.sign(event["id"])
        assert verify_event(event)
    else:
        raise ValueError(how)
    return json.dumps([message[0], message[1], event])


class ListFeed:
    """The page's websocket to the relay, passed through this side: every 13534 the relay
    sends is kept as it came (`lists`) and rewritten while `how` names a way to (tampered);
    `send` puts a frame of ours into the page, after those already on their way."""

    def __init__(self, page: Page) -> None:
        self.how: str | None = None
        self.lists: list[str] = []
        self._impostor = RelayKey.generate()
        self._sockets: list[WebSocketRoute] = []
        page.route_web_socket(re.compile(r"^ws://127\.0\.0\.1:\d+"), self._route)

    def _route(self, ws: WebSocketRoute) -> None:
        self._sockets.append(ws)
        server = ws.connect_to_server()

        def to_page(frame: str | bytes) -> None:
            if isinstance(frame, str) and is_list_event(frame):
                self.lists.append(frame)
                if self.how is not None:
                    frame = tampered(frame, self.how, self._impostor)
            ws.send(frame)

        server.on_message(to_page)

    def send(self, frame: str) -> None:
        assert len(self._sockets) == 1, "the page opened more than one websocket"
        self._sockets[0].send(frame)


def open_desk(visit, relay: Relay, person: Person, count: int = 3, **options: Any) -> Visit:
    """`person`'s page, logged in with their signer, the desk shown and its first section
    drawn (its lists asked for and drawn: the others are asked for when opened)."""
    v = visit(relay.process, **options)
    nip07_signer(v.context, person)
    page = v.open()
    expect_verified(page, count)
    page.click("#login")
    expect(page.locator("#desk")).to_be_visible()
    expect(page.locator("#desk [role=tabpanel]:not([hidden])")).to_have_attribute("data-drawn", "")
    return v


def open_section(page: Page, name: str) -> None:
    """Opens the desk's section `name` (its tab) and waits until its lists are drawn."""
    page.click(f"#desk-tab-{name}")
    expect(page.locator(f"#desk-tab-{name}")).to_have_attribute("aria-selected", "true")
    expect(page.locator(f"#desk-{name}")).to_be_visible()
    expect(page.locator(f"#desk-{name}")).to_have_attribute("data-drawn", "")


def manage(page: Page, pubkey: str) -> None:
    """Opens the member's own dialog from their row of the member list."""
    page.click(f'#member-list li.member[data-pubkey="{pubkey}"] .member-manage')
    expect(page.locator("#desk-manage")).to_be_visible()


def expect_said(page: Page, panel: str, outcome: str, words: str | re.Pattern[str]) -> None:
    """The panel's status says `words` (a substring, or a pattern) with that outcome."""
    status = page.locator(f"#desk-{panel}-status")
    expect(status).to_have_attribute("role", "status")
    expect(status).to_have_attribute("data-outcome", outcome)
    expect(status).to_contain_text(words)


def confirm(page: Page, yes: bool = True) -> None:
    """Answers the page's own confirmation (a <dialog>, not window.confirm)."""
    dialog = page.locator("#desk-confirm")
    expect(dialog).to_be_visible()
    page.click("#desk-confirm-yes" if yes else "#desk-confirm-no")
    expect(dialog).to_be_hidden()
