"""One Python call per SQL write path, each a whole transaction that ends with its signed list.

    membership = Membership.connect(database_url, RelayKey.from_env())
    write = membership.add_relay_member(community_id, pubkey)
    write.outcome    # 'added' / 'already_member'
    write.snapshot   # the signed kind 13534 list now live, or None when nothing changed

Several writes share one transaction, and one list per community:

    with membership.transaction() as tx:
        tx.add_relay_member(community_id, alice)
        tx.remove_relay_member(community_id, bob)
    tx.lists[community_id]   # the one list written for both

The same calls exist for asyncio: `await AsyncMembership.connect(url, key)`, then
`await membership.add_relay_member(...)` and `async with membership.transaction() as tx:`
(`await tx.add_relay_member(...)`). Both share every SQL text, the signer and the error map:
each write path and each read is written once, as the statement it runs (`_Writes`,
`_Reads`), and each class's methods are tables of them, bound to that class's executor, so
that every method's type says what it returns: a value, or an awaitable of it.

Every write runs: the SQL write, then prepare (the database takes the community's list lock
and returns the unsigned events), the signer's checks and signatures, insert of the
signatures, COMMIT. Anything failing on the way rolls the whole transaction back. A call of
its own is two round trips (psycopg's pipeline mode): BEGIN, the write and prepare, then the
signatures with COMMIT. Business rules live in the database; this layer binds parameters and
signs.
"""
from .aio import AsyncMembership, AsyncMembershipTransaction
from .results import (
    Ban,
    Community,
    CommunityProfile,
    CommunityRow,
    Drift,
    Invite,
    InviteRecord,
    JoinRequest,
    Member,
    MembershipWrite,
    Published,
)
from .sync import Membership, MembershipTransaction

__all__ = [
    "AsyncMembership",
    "AsyncMembershipTransaction",
    "Ban",
    "Community",
    "CommunityProfile",
    "CommunityRow",
    "Drift",
    "Invite",
    "InviteRecord",
    "JoinRequest",
    "Member",
    "Membership",
    "MembershipTransaction",
    "MembershipWrite",
    "Published",
]
