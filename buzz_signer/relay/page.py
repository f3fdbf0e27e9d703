"""The community's page (SPEC section 8): the HTML the server draws, and the assets it loads.

The server draws what works without JavaScript (the community's name, icon, description and
member count, everything from the database escaped); the script, bundled from web/ into
buzz_signer/web/ with a content hash in each file name, then checks and shows the live list.
manifest.json in that directory names the bundles. Every answer here carries SPEC's headers:
a Content-Security-Policy with no inline script and no other origin (but the icon's own, for
the icon), no framing, no referrer, no sniffing, and never a cookie.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from urllib.parse import quote, urlsplit

from aiohttp import web

from ..membership import CommunityProfile
from .protocol import Community
from .urls import RelayUrl

log = logging.getLogger("buzz_relay")

ASSET_PREFIX = "/assets/"
# Where web/build.mjs writes the bundles: inside the package, so the wheel carries them.
ASSET_DIR = Path(__file__).resolve().parent.parent / "web"

CONTENT_SECURITY_POLICY = (
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self'",  # and the community's icon's own origin (content_security_policy)
    "connect-src 'self'",  # NIP-11 and the websocket, same origin
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
)
# An origin as a CSP source may write it: scheme, host (a name or an IPv6 literal), port.
_CSP_ORIGIN = re.compile(r"https://(?:[a-z0-9.-]+|\[[0-9a-f:.]+\])(?::[0-9]{1,5})?")
SECURITY_HEADERS = {
    "Content-Security-Policy": "; ".join(CONTENT_SECURITY_POLICY),
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
}
# The page is drawn from the live list: a browser asks again each time. The assets' names
# change with their content, so a browser keeps each one for good and never asks twice.
PAGE_CACHE = "no-cache"
ASSET_CACHE = "public, max-age=31536000, immutable"
CONTENT_TYPES = {
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
}
# A member's tag in a list's compact JSON text (SPEC section 2): counted, never parsed.
MEMBER_TAG = '["member",'
# Where a person without a NIP-07 signer can take an invite instead (SPEC section 8).
FLOTILLA_JOIN = "https://app.flotilla.social/join"
# What encodeURIComponent leaves as it is, so that the server's link and the script's agree.
URI_COMPONENT_SAFE = "!*'()"


@dataclass(frozen=True)
class Assets:
    """The bundles of one build, read once: their URLs by logical name, bodies by file name."""

    urls: dict[str, str] = field(default_factory=dict)
    files: dict[str, tuple[bytes, str]] = field(default_factory=dict)

    @classmethod
    def load(cls, directory: Path = ASSET_DIR) -> Assets:
        """The assets named by directory/manifest.json; none (a page without script or
        style, which still names the community) when the bundles were never built."""
        try:
            manifest = json.loads((directory / "manifest.json").read_text())
            files = {
                name: ((directory / name).read_bytes(), CONTENT_TYPES[Path(name).suffix])
                for name in manifest.values()
            }
        except (OSError, ValueError, KeyError, AttributeError) as exc:
            log.warning(
                "the page's assets are missing from %s (%s): run scripts/setup to build them",
                directory,
                type(exc).__name__,
            )
            return cls()
        return cls({logical: ASSET_PREFIX + name for logical, name in manifest.items()}, files)


ASSETS = web.AppKey("buzz_relay_page_assets", Assets)


@dataclass(frozen=True)
class InviteLink:
    """The invite code of a page opened at /?claim=<code>, and the relay's URL as clients
    name it (wss://host behind https, ws://host:port over plain http)."""

    code: str
    relay_url: str

    @classmethod
    def of(cls, request: web.Request, relay_url: str) -> InviteLink | None:
        """The link of a request for /?claim=<code> (None without a code)."""
        code = request.query.get("claim", "")
        return cls(code, relay_url) if code else None

    @property
    def flotilla(self) -> str:
        """Flotilla's join link for this code, as the script builds it too."""
        r = quote(self.relay_url, safe=URI_COMPONENT_SAFE)
        return f"{FLOTILLA_JOIN}?r={r}&c={quote(self.code, safe=URI_COMPONENT_SAFE)}"


def relay_address(request: web.Request, public_url: RelayUrl | None = None) -> str:
    """The relay's URL as clients name it, for the page that `request` asks for:
    `public_url` (--public-url's first) when given, else wss://host behind https and
    ws://host:port over http. Behind a TLS proxy the relay sees plain http; the proxy's word
    is trusted only for this address, shown to the person who asked (and redrawn by the
    script from the address the browser really used)."""
    if public_url is not None:
        return str(public_url)
    forwarded = request.headers.get("X-Forwarded-Proto", "").split(",")[0].strip().lower()
    secure = request.secure or forwarded == "https"
    return f"{'wss' if secure else 'ws'}://{request.host}"


def member_count(list_text: str | None) -> int | None:
    """The number of members of a live list given as its JSON text (None: no list)."""
    return None if list_text is None else list_text.count(MEMBER_TAG)


def count_text(count: int) -> str:
    return "1 member" if count == 1 else f"{count} members"


def join_section(name: str, policy: str | None, invite: InviteLink | None) -> list[str]:
    """#join: its heading and the join policy for the script (which draws the buttons), and
    for an invite link what works without a script or a signer: the code and a Flotilla
    link. `name` is escaped already; the code and the URLs are escaped here."""
    policy_attr = f' data-join-policy="{escape(policy)}"' if policy else ""
    if invite is None:
        return [
            f'<section id="join" aria-labelledby="join-title"{policy_attr} hidden>',
            f'<h2 id="join-title">Join {name}</h2>',
            "</section>",
        ]
    # Without a signer, in the order that works on a phone: Flotilla (an app, the one way
    # there), the relay's address and the code for any other client, then the extensions.
    return [
        f'<section id="join" aria-labelledby="join-title"{policy_attr} data-invite>',
        f'<h2 id="join-title">Join {name}</h2>',
        f'<p id="join-invited">You are invited to join {name}.</p>',
        '<div id="join-no-signer">',
        (
            f'<p><a id="join-flotilla" class="main-action" href="{escape(invite.flotilla)}"'
            ' rel="noopener noreferrer">Open in Flotilla</a></p>'
        ),
        (
            '<p id="join-relay-line">Or add this relay to your Nostr app:'
            f' <code id="join-relay">{escape(invite.relay_url)}</code></p>'
        ),
        f'<p>Your invite code: <code id="join-code">{escape(invite.code)}</code></p>',
        (
            "<p>To join from this page you need a Nostr signer: a browser extension (NIP-07)"
            ' such as <a href="https://github.com/fiatjaf/nos2x">nos2x</a> or'
            ' <a href="https://getalby.com/">Alby</a>.</p>'
        ),
        "</div>",
        "</section>",
    ]


def render(
    community: Community,
    profile: CommunityProfile | None,
    count: int | None,
    assets: Assets,
    invite: InviteLink | None = None,
    relay_url: str | None = None,
) -> str:
    """The page's HTML; every value from the database, and the invite code of the URL, goes
    through html.escape. `relay_url`: the relay's address, shown in the header."""
    name = escape((profile and profile.name) or community.host)
    head = [f"<title>{name}</title>"]
    if "icon.svg" in assets.urls:  # ours, so that a browser never asks for /favicon.ico
        head.append(f'<link rel="icon" href="{escape(assets.urls["icon.svg"])}">')
    if "page.css" in assets.urls:
        head.append(f'<link rel="stylesheet" href="{escape(assets.urls["page.css"])}">')
    if "app.js" in assets.urls:
        head.append(f'<script type="module" src="{escape(assets.urls["app.js"])}"></script>')
    header = [f'<h1 id="community-name">{name}</h1>']
    if profile and profile.icon:
        header.insert(0, f'<img id="community-icon" alt="" src="{escape(profile.icon)}">')
    # Who runs the community (the owner and the admins, named), drawn from the verified list.
    header.append('<p id="community-runners" hidden></p>')
    if relay_url is not None:
        header.append(
            f'<p id="community-relay">Relay: <code id="relay-address">{escape(relay_url)}</code>'
            "</p>"
        )
    about = []
    if profile and profile.description:
        about.append(f'<p id="community-description">{escape(profile.description)}</p>')
    counted = "" if count is None else count_text(count)
    return "\n".join(
        [
            "<!doctype html>",
            '<html lang="en">',
            "<head>",
            '<meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            '<meta name="referrer" content="no-referrer">',
            *head,
            "</head>",
            "<body>",
            "<main>",
            '<header class="community">',
            *header,
            "</header>",
            *about,
            # Filled by the script: logging in with the person's NIP-07 signer.
            '<div id="account">',
            '<button id="login" type="button" hidden>Log in with your Nostr signer</button>',
            '<p id="account-name" hidden></p>',
            '<p id="account-status" role="status"></p>',
            "</div>",
            # Joining (an invite link, or a request to join) and the person's own membership,
            # filled by the script; then the owner's and admins' desk, the same.
            *join_section(name, profile and profile.join_policy, invite),
            '<section id="you" aria-label="Your membership" hidden></section>',
            '<section id="desk" aria-label="Manage the community" hidden></section>',
            '<section id="members" aria-labelledby="members-title">',
            '<h2 id="members-title">Members</h2>',
            f'<p id="member-count">{counted}</p>',
            '<div class="search">',
            '<label for="member-search">Search members (name, npub, hex key or role)</label>',
            (
                '<input id="member-search" type="search" autocomplete="off" spellcheck="false"'
                " disabled>"
            ),
            "</div>",
            '<ul id="member-list"></ul>',
            '<nav class="paging" aria-label="Member pages">',
            '<button id="members-prev" type="button" disabled>Previous</button>',
            '<span id="members-page">page 1 of 1</span>',
            '<button id="members-next" type="button" disabled>Next</button>',
            "</nav>",
            # The proof after the people: one line, its details on demand (the script).
            (
                '<p id="list-status" role="status" data-state="loading">'
                "Checking the member list&hellip;</p>"
            ),
            (
                '<details id="list-proof" hidden><summary>How the list is checked</summary>'
                '<p id="list-proof-text"></p></details>'
            ),
            "</section>",
            (
                "<noscript><p>The member list is checked and shown by JavaScript in your"
                " browser.</p></noscript>"
            ),
            "</main>",
            "</body>",
            "</html>",
            "",
        ]
    )


def content_security_policy(icon: str | None) -> str:
    """The page's policy: images from this origin, and from the community's icon's own origin
    when it has one (SPEC section 8: no other origin is contacted, for a picture or anything)."""
    origin = None
    if icon:
        parts = urlsplit(icon)
        origin = f"{parts.scheme}://{parts.netloc.rpartition('@')[2].lower()}"
    if origin is None or not _CSP_ORIGIN.fullmatch(origin):
        return SECURITY_HEADERS["Content-Security-Policy"]
    return "; ".join(
        f"{d} {origin}" if d.startswith("img-src ") else d for d in CONTENT_SECURITY_POLICY
    )


def page_response(html_text: str, icon: str | None = None) -> web.Response:
    return web.Response(
        text=html_text,
        content_type="text/html",
        charset="utf-8",
        # The same URL answers NIP-11 and text to other Accept headers.
        headers=SECURITY_HEADERS
        | {
            "Content-Security-Policy": content_security_policy(icon),
            "Cache-Control": PAGE_CACHE,
            "Vary": "Accept",
        },
    )


async def asset(request: web.Request) -> web.Response:
    """GET /assets/<name>: a bundle of this build, or 404."""
    found = request.app[ASSETS].files.get(request.match_info["name"])
    if found is None:
        return web.Response(
            status=404,
            text="no such asset\n",
            headers=SECURITY_HEADERS | {"Cache-Control": PAGE_CACHE},
        )
    body, content_type = found
    return web.Response(
        body=body,
        headers=SECURITY_HEADERS | {"Content-Type": content_type, "Cache-Control": ASSET_CACHE},
    )
