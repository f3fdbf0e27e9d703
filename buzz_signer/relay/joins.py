"""Joins written in groups (SPEC section 10, "Joins cannot starve a community").

Every join writes the community's list, and a list takes the community's list lock: joins
that arrive one after the other each wait for the one before, and a flood of them writes a
list for each, each one second past the last, until the community reaches the lead bound
(BZLAG) and nobody, not even its owner, can change it. So joins to one community that
arrive while a group of them is being written wait, and go into the next group together: one
transaction, each join under a savepoint of its own (a refused one spoils no other), one list
and one 8000 for each new member, then COMMIT; each joiner is answered after that commit. A
list is dated a second past the one before it when the clock has not moved on, so a group
whose list would be dated ahead of the clock waits for the clock first (a second at most): a
flood of joins writes about one list a second and adds nothing to the lead, while a join
after a quiet moment, or one that writes no list (a refused claim), waits for nothing.
`JoinGroups.write` is what a join awaits; the database side is `write_group`.

No database driver here: `write_group` is given, a coroutine that writes one group.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

__all__ = ["Join", "JoinGroups"]


@dataclass(frozen=True)
class Join:
    """One join: with a claim (claim_relay_invite), or without one (request_membership)."""

    pubkey: str
    code: str | None = None  # the claim
    request_id: str | None = None  # the 28934's id, for a join without a claim
    note: str | None = None


# Writes one group of joins to one community in one transaction: for each join its outcome,
# or the exception that refused it alone, and the created_at of the list it wrote (None: it
# wrote none); raises what refused the whole group (its list).
GroupWriter = Callable[
    [uuid.UUID, Sequence[Join]], Awaitable[tuple[list[str | BaseException], int | None]]
]


class JoinGroups:
    """The joins of one relay process, grouped per community while a group is written."""

    def __init__(
        self, write_group: GroupWriter, clock: Callable[[], float] = time.time
    ) -> None:
        self._write_group = write_group
        self._clock = clock
        self._waiting: dict[uuid.UUID, list[tuple[Join, asyncio.Future[str]]]] = {}
        self._writers: dict[uuid.UUID, asyncio.Task[None]] = {}
        # The created_at of the list each community's last group wrote, while it matters.
        self._dated: dict[uuid.UUID, int] = {}

    def waiting(self) -> int:
        """Joins waiting for the group before theirs to commit, over every community."""
        return sum(len(group) for group in self._waiting.values())

    async def write(self, community: uuid.UUID, join: Join) -> str:
        """The join's outcome, once the group it went into has committed."""
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        # Its refusal is read here, or nowhere if the joiner went away: never reported as an
        # exception nobody retrieved.
        future.add_done_callback(lambda f: f.cancelled() or f.exception())
        self._waiting.setdefault(community, []).append((join, future))
        if community not in self._writers:
            self._writers[community] = asyncio.create_task(self._write_groups(community))
        # Shielded: a joiner that goes away leaves its join in the group (the others wait for
        # that group's commit, not for this joiner).
        return await asyncio.shield(future)

    async def _write_groups(self, community: uuid.UUID) -> None:
        try:
            while True:
                # The next list would be dated past the last: wait until the clock gets there,
                # a second at most (other writes, an owner's say, may have dated lists further
                # ahead: joins then go on at one list a second, adding nothing to the lead).
                ahead = self._dated.get(community, 0) - self._clock()
                if ahead > 0:
                    await asyncio.sleep(min(ahead, 1.0))
                group = self._waiting.pop(community, None)
                if group is None:
                    break
                try:
                    outcomes, dated = await self._write_group(
                        community, [join for join, _ in group]
                    )
                    if dated is not None:
                        self._dated[community] = dated
                except BaseException as exc:  # the group's list: every join of it refused
                    for _, future in group:
                        if not future.done():
                            future.set_exception(exc)
                    if isinstance(exc, asyncio.CancelledError):
                        raise
                    continue
                for (_, future), outcome in zip(group, outcomes, strict=True):
                    if future.done():
                        continue
                    if isinstance(outcome, BaseException):
                        future.set_exception(outcome)
                    else:
                        future.set_result(outcome)
        finally:
            del self._writers[community]
            if self._dated.get(community, 0) < self._clock():
                self._dated.pop(community, None)  # held only while ahead of the clock
            # Joins that came while this task was ending (cancelled): nobody will write them.
            for _, future in self._waiting.pop(community, []):
                if not future.done():
                    future.cancel()
