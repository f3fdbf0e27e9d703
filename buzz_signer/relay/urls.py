"""Which URLs name this relay: what an AUTH's `relay` tag (NIP-42) and a NIP-98 `u` may say.

A signed AUTH or NIP-98 event is a person's word that they talk to one relay; accepting one
that names another relay lets that relay borrow the person's authority here (it forwards our
challenge, the person's client signs it). So (SPEC section 10, docs/relay.md, "Which URL AUTH
may name"):

- with `--public-url`, a URL is this relay's when it is one of those: host and port exact (a
  scheme's default port filled in), a scheme of the same security (`wss`/`https` for TLS,
  `ws`/`http` for plain), at most a trailing `/`;
- without it, the request's Host names the relay (and the community's own host), except with
  `--community`: then only the community's own host, never a Host the client chose.

No HTTP server and no database here.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import SplitResult, urlsplit

__all__ = ["RelayNames", "RelayUrl", "normalize_host"]

# Each scheme a relay's URL may have: whether it is TLS, and its default port.
_SCHEMES = {"ws": (False, 80), "http": (False, 80), "wss": (True, 443), "https": (True, 443)}


def _host_and_port(parts: SplitResult) -> tuple[str, int | None] | None:
    """The lower-case host and the port of a split URL; None without a host or a valid port."""
    try:
        host, port = parts.hostname, parts.port
    except ValueError:
        return None
    return (host.lower(), port) if host else None


def normalize_host(url_or_host: str) -> str | None:
    """`wss://Relay.Example.org:443/x` -> `relay.example.org`: lower-case, the port kept unless
    it is its scheme's default. None when there is no host."""
    text = url_or_host.strip()
    parts = urlsplit(text if "://" in text else "//" + text)
    found = _host_and_port(parts)
    if found is None:
        return None
    host, port = found
    default = _SCHEMES.get(parts.scheme.lower(), (None, None))[1]
    return host if port is None or port == default else f"{host}:{port}"


@dataclass(frozen=True)
class RelayUrl:
    """A relay's URL reduced to what identifies it: TLS or not, the host, the port."""

    secure: bool
    host: str  # lower-case
    port: int

    @classmethod
    def parse(cls, text: str) -> RelayUrl | None:
        """`wss://Relay.example.org/` -> RelayUrl(True, 'relay.example.org', 443); None unless
        `text` is an http(s) or ws(s) URL of a host, with no user, no path but `/`, no query
        and no fragment."""
        if not isinstance(text, str) or text.endswith(("?", "#")):
            return None
        parts = urlsplit(text.strip())
        scheme = _SCHEMES.get(parts.scheme.lower())
        if scheme is None or "@" in parts.netloc or parts.path not in ("", "/"):
            return None
        found = _host_and_port(parts)
        if found is None or parts.query or parts.fragment:
            return None
        secure, default = scheme
        host, port = found
        return cls(secure, host, default if port is None else port)

    @property
    def host_and_port(self) -> str:
        """`relay.example.org`, or `relay.example.org:7447` for a port not the default."""
        default = 443 if self.secure else 80
        return self.host if self.port == default else f"{self.host}:{self.port}"

    def __str__(self) -> str:
        """The URL a websocket client uses: `wss://relay.example.org`."""
        return f"{'wss' if self.secure else 'ws'}://{self.host_and_port}"


def public_urls(texts: Iterable[str]) -> tuple[RelayUrl, ...]:
    """--public-url's values; ValueError naming the first that is not a relay's URL."""
    urls = []
    for text in texts:
        url = RelayUrl.parse(text)
        if url is None:
            raise ValueError(
                f"{text!r} is not a relay's URL (wss://host or ws://host:port, no path)"
            )
        urls.append(url)
    return tuple(urls)


@dataclass(frozen=True)
class RelayNames:
    """The URLs a client may name as this relay on one request or connection."""

    urls: frozenset[RelayUrl] = frozenset()  # with --public-url: these, exactly
    hosts: frozenset[str] = frozenset()  # without: these hosts (normalize_host's form)

    @classmethod
    def of(
        cls,
        public: tuple[RelayUrl, ...],
        community_host: str,
        request_host: str | None,
        *,
        one_community: bool,
    ) -> RelayNames:
        """The names for a request with Host `request_host` to `community_host`'s community;
        `one_community`: the relay serves one community whatever the Host (--community)."""
        if public:
            return cls(urls=frozenset(public))
        hosts = {community_host}
        if not one_community and request_host:
            hosts.add(normalize_host(request_host) or community_host)
        return cls(hosts=frozenset(hosts))

    def name_this_relay(self, text: object) -> bool:
        """Does `text` (a relay tag's or a `u` tag's value) name this relay?"""
        url = RelayUrl.parse(text) if isinstance(text, str) else None
        if url is None:
            return False
        if self.urls:
            return url in self.urls
        return url.host_and_port in self.hosts
