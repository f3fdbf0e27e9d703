"""Which URLs name this relay (relay/urls.py): what an AUTH's relay tag and a NIP-98 `u` may
say, with and without --public-url, with and without --community (SPEC section 10). No
database: the same rules over the wire are in test_relay_wire.py."""

from __future__ import annotations

import pytest

from buzz_signer.relay.urls import RelayNames, RelayUrl, public_urls

PUBLIC = public_urls(["wss://relay.example.org"])


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("wss://relay.example.org", RelayUrl(True, "relay.example.org", 443)),
        ("wss://Relay.Example.ORG/", RelayUrl(True, "relay.example.org", 443)),
        ("https://relay.example.org:443", RelayUrl(True, "relay.example.org", 443)),
        ("ws://127.0.0.1:7447", RelayUrl(False, "127.0.0.1", 7447)),
        ("http://relay.example.org", RelayUrl(False, "relay.example.org", 80)),
        ("ws://[::1]:7447/", RelayUrl(False, "::1", 7447)),
    ],
)
def test_a_relay_url_is_its_security_host_and_port(text: str, parsed: RelayUrl) -> None:
    assert RelayUrl.parse(text) == parsed


@pytest.mark.parametrize(
    "text",
    [
        "relay.example.org",  # no scheme: which security is meant?
        "ftp://relay.example.org",
        "wss://relay.example.org/admin",
        "wss://relay.example.org/?x=1",
        "wss://relay.example.org/#top",
        "wss://relay.example.org?",
        "wss://user@relay.example.org",
        "wss://relay.example.org:99999",
        "wss://relay.example.org:x",
        "wss://",
        "",
    ],
)
def test_what_is_not_a_relay_url(text: str) -> None:
    assert RelayUrl.parse(text) is None
    with pytest.raises(ValueError, match="is not a relay's URL"):
        public_urls([text])


def test_a_url_prints_as_a_client_would_use_it() -> None:
    assert [str(u) for u in public_urls(["https://A.example:443/", "ws://b.example:7447"])] == [
        "wss://a.example",
        "ws://b.example:7447",
    ]


@pytest.mark.parametrize(
    ("named", "accepted"),
    [
        ("wss://relay.example.org", True),
        ("wss://relay.example.org/", True),
        ("wss://RELAY.example.org:443", True),
        ("https://relay.example.org", True),  # NIP-98's u names the same relay over https
        ("ws://relay.example.org", False),  # not of the same security
        ("http://relay.example.org:443", False),
        ("wss://relay.example.org:8443", False),
        ("wss://relay.example.org/x", False),
        ("wss://c1.example.org", False),  # the community's host, which no listed URL names
        ("ws://127.0.0.1:7447", False),  # the Host the client sent
        (None, False),
        (["wss://relay.example.org"], False),
    ],
)
def test_with_public_urls_only_those_name_the_relay(named: object, accepted: bool) -> None:
    for one_community in (True, False):
        names = RelayNames.of(PUBLIC, "c1.example.org", "127.0.0.1:7447", one_community=one_community)
        assert names.name_this_relay(named) is accepted


def test_a_listed_url_may_name_the_communitys_own_host() -> None:
    names = RelayNames.of(
        public_urls(["wss://c1.example.org"]), "c1.example.org", "evil.example", one_community=True
    )
    assert names.name_this_relay("wss://c1.example.org/")
    assert not names.name_this_relay("ws://c1.example.org")
    assert not names.name_this_relay("wss://evil.example")


def test_with_one_community_the_host_a_client_sends_is_not_the_relay() -> None:
    names = RelayNames.of((), "c1.example.org", "evil.example", one_community=True)
    assert not names.name_this_relay("wss://evil.example")
    assert not names.name_this_relay("https://evil.example/")
    assert names.name_this_relay("wss://c1.example.org")
    assert names.name_this_relay("ws://c1.example.org/")


def test_by_host_the_host_the_client_used_names_the_relay() -> None:
    names = RelayNames.of((), "c1.example.org", "127.0.0.1:7447", one_community=False)
    assert names.name_this_relay("ws://127.0.0.1:7447")
    assert names.name_this_relay("wss://c1.example.org")
    assert not names.name_this_relay("ws://127.0.0.1:7448")
    assert not names.name_this_relay("wss://other.example")
