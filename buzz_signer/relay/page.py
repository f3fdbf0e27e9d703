"""The community's page (SPEC section 8): the HTML the server draws, and the assets it loads.

The server draws what works without JavaScript (the community's name, icon, description and
member count, everything from the database escaped); the script, bundled from web/ into
buzz_signer/web/ with a content hash in each file name, then checks and shows the live list.
manifest.json in that directory names the bundles. Every answer here carries SPEC's headers:
a Content-Security-Policy with no inline script and no other origin (but images, for the
icon), no framing, no referrer, no sniffing, and never a cookie.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from html import escape
from pathlib import Path

from aiohttp import web

from ..membership import CommunityProfile
from .protocol import Community

log = logging.getLogger("buzz_relay")

ASSET_PREFIX = "/assets/"
# Where web/build.mjs writes the bundles: inside the package, so the wheel carries them.
ASSET_DIR = Path(__file__).resolve().parent.parent / "web"

CONTENT_SECURITY_POLICY = (
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' https:",  # the community's icon, at the https:// URL its owner set
    "connect-src 'self'",  # NIP-11 and the websocket, same origin
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
)
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


def member_count(list_text: str | None) -> int | None:
    """The number of members of a live list given as its JSON text (None: no list)."""
    return None if list_text is None else list_text.count(MEMBER_TAG)


def count_text(count: int) -> str:
    return "1 member" if count == 1 else f"{count} members"


def render(
    community: Community,
    profile: CommunityProfile | None,
    count: int | None,
    assets: Assets,
) -> str:
    """The page's HTML; every value from the database goes through html.escape."""
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
            # Filled by the script: joining (an invite link, or a request to join), the
            # person's own membership, and the owner's and admins' desk.
            '<section id="join" aria-label="Join" hidden></section>',
            '<section id="you" aria-label="Your membership" hidden></section>',
            '<section id="desk" aria-label="Manage the community" hidden></section>',
            '<section id="members" aria-labelledby="members-title">',
            '<h2 id="members-title">Members</h2>',
            f'<p id="member-count">{counted}</p>',
            (
                '<p id="list-status" role="status" data-state="loading">'
                "Checking the member list&hellip;</p>"
            ),
            '<div class="search">',
            '<label for="member-search">Search members (npub, hex key or role)</label>',
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


def page_response(html_text: str) -> web.Response:
    return web.Response(
        text=html_text,
        content_type="text/html",
        charset="utf-8",
        # The same URL answers NIP-11 and text to other Accept headers.
        headers=SECURITY_HEADERS | {"Cache-Control": PAGE_CACHE, "Vary": "Accept"},
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
