"""AsyncMembership where it differs from a single blocking caller: many tasks on a pool of
AsyncConnections at once, errors through the same map, and a failed block rolling back.
(Every write path's outcomes run on both APIs in test_membership_writes.py.)"""

from __future__ import annotations

import asyncio

import pytest
from fixtures_membership import Community, assert_live_list, members_of, new_pubkey, state
from psycopg_pool import AsyncConnectionPool

from buzz_signer.errors import CommunityNotFound, InvalidPubkey
from buzz_signer.keys import RelayKey
from buzz_signer.membership import AsyncMembership, Membership

pytest_plugins = ("fixtures_membership",)


def test_concurrent_joins_on_a_pool_all_land_in_one_list(
    db_url: str, key: RelayKey, community: Community, reader: Membership
) -> None:
    joiners = [new_pubkey() for _ in range(8)]

    async def run() -> list:
        async with AsyncConnectionPool(
            db_url, min_size=4, max_size=4, kwargs={"autocommit": True}, open=False
        ) as pool:

            async def join(pubkey: str):
                async with pool.connection() as conn:
                    return await AsyncMembership(conn, key).add_relay_member(community.cid, pubkey)

            return await asyncio.gather(*(join(pk) for pk in joiners))

    writes = asyncio.run(run())
    assert [w.outcome for w in writes] == ["added"] * 8
    # Each write published its own list; they never share a created_at.
    assert len({w.snapshot["created_at"] for w in writes}) == 8
    last = max(writes, key=lambda w: w.snapshot["created_at"]).snapshot
    expected = {community.owner: "owner"} | {pk: "member" for pk in joiners}
    assert_live_list(reader, community.cid, last, key.pubkey, expected)


def test_errors_are_the_same_classes_and_change_nothing(
    db_url: str, key: RelayKey, community: Community, reader: Membership
) -> None:
    before = state(reader, community.cid)

    async def run() -> None:
        async with await AsyncMembership.connect(db_url, key) as m:
            with pytest.raises(InvalidPubkey) as bad:
                await m.add_relay_member(community.cid, "not a pubkey")
            assert bad.value.sqlstate == "BZIPK"
            with pytest.raises(CommunityNotFound):
                await m.add_relay_member("00000000-0000-0000-0000-000000000000", new_pubkey())

    asyncio.run(run())
    assert state(reader, community.cid) == before


def test_a_failing_block_rolls_back_its_writes(
    db_url: str, key: RelayKey, community: Community, reader: Membership
) -> None:
    before = members_of(reader, community.cid)

    async def run() -> None:
        async with await AsyncMembership.connect(db_url, key) as m:
            with pytest.raises(RuntimeError, match="changed my mind"):
                async with m.transaction() as tx:
                    assert await tx.add_relay_member(community.cid, new_pubkey()) == "added"
                    raise RuntimeError("changed my mind")

    asyncio.run(run())
    assert members_of(reader, community.cid) == before
