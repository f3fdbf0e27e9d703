"""Who may call which NIP-86 method of a community (SPEC section 7, docs/relay.md "NIP-86
management"): the owner and admins every method, a member the methods assigned to them,
anyone `supportedmethods`."""

from __future__ import annotations

from typing import NamedTuple

MANAGERS = frozenset(("owner", "admin"))
# A member is assigned methods by their request names; disallowpubkey is unallowpubkey, whose
# old name it is. Which methods may be assigned is the database's rule alone
# (buzz_private.delegable_method, through buzz.assign_method): it holds no other.
ALIASES = {"disallowpubkey": "unallowpubkey"}


class Caller(NamedTuple):
    """Who sent the request: the NIP-98 event's author, and their base role (None: not a
    member)."""

    pubkey: str
    role: str | None
    # The methods assigned to them (assignmethod), read for members only.
    assigned: frozenset[str] = frozenset()

    @property
    def delegate(self) -> bool:
        """Calling by assignment: a removal or ban of theirs spares the owner and admins,
        which the database decides as it writes (p_spare_admins)."""
        return self.role not in MANAGERS


def may_call(role: str | None, method: str, assigned: frozenset[str] = frozenset()) -> bool:
    """Who may call what, in one place: anyone with a valid NIP-98 event `supportedmethods`
    (it answers what else they may call), the owner and admins every method, a member the
    methods assigned to them (an alias by its name's assignment; the database assigns no
    method a delegate could hand out more with), a non-member nothing else whatever was
    assigned to them."""
    if method == "supportedmethods" or role in MANAGERS:
        return True
    return role is not None and ALIASES.get(method, method) in assigned


def reads_only(method: str) -> bool:
    """The read methods (SPEC §7), which accept one NIP-98 event more than once."""
    return method == "supportedmethods" or method.startswith("list")


