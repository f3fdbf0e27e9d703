"""The statements of statements.py as methods of each class: the same statement runs in
MembershipTransaction, AsyncMembershipTransaction, Membership and AsyncMembership, and each
method's type says what that class answers (a value, or an awaitable of it)."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

from .results import MembershipWrite
from .statements import Call, Query

if TYPE_CHECKING:
    from .aio import AsyncMembership, AsyncMembershipTransaction
    from .sync import Membership, MembershipTransaction

T = TypeVar("T")
P = ParamSpec("P")


def _method(executor: str, statement: Callable[..., Any], answer: str) -> Any:
    """`statement` as a method: self.<executor>(statement(*args, **kwargs)). Its name, doc
    and signature are the statement's, with self first and `answer` the type it returns, as
    help() and inspect show them."""

    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        return getattr(self, executor)(statement(*args, **kwargs))

    functools.update_wrapper(method, statement)
    signature = inspect.signature(statement)
    this = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)
    parameters = [this, *signature.parameters.values()]
    method.__dict__["__signature__"] = signature.replace(
        parameters=parameters, return_annotation=answer
    )
    return method


def _answer(statement: Callable[..., Any]) -> str:
    """What a statement's call answers: T of its `Call[T]` or `Query[T]`."""
    annotation = str(statement.__annotations__["return"])
    return annotation[annotation.index("[") + 1 : -1]


# A statement bound to each class: the value itself in the sync classes, an awaitable of it
# in the async ones (each class's `_run`, `_write`, `_alone` or `_read` runs it).


def in_transaction(
    statement: Callable[P, Call[T]],
) -> Callable[Concatenate[MembershipTransaction, P], T]:
    return _method("_run", statement, _answer(statement))


def in_async_transaction(
    statement: Callable[P, Call[T]],
) -> Callable[Concatenate[AsyncMembershipTransaction, P], Awaitable[T]]:
    return _method("_run", statement, f"Awaitable[{_answer(statement)}]")


def whole_transaction(
    statement: Callable[P, Call[Any]],
) -> Callable[Concatenate[Membership, P], MembershipWrite]:
    """A write path as a call of its own: one transaction with its list."""
    return _method("_write", statement, "MembershipWrite")


def async_whole_transaction(
    statement: Callable[P, Call[Any]],
) -> Callable[Concatenate[AsyncMembership, P], Awaitable[MembershipWrite]]:
    return _method("_write", statement, "Awaitable[MembershipWrite]")


def own_transaction(
    statement: Callable[P, Call[T]],
) -> Callable[Concatenate[Membership, P], T]:
    """A write that changes no member, in a transaction of its own; returns its answer.

    Nothing to publish, so no prepare: it works whichever key this Membership holds."""
    return _method("_alone", statement, _answer(statement))


def async_own_transaction(
    statement: Callable[P, Call[T]],
) -> Callable[Concatenate[AsyncMembership, P], Awaitable[T]]:
    return _method("_alone", statement, f"Awaitable[{_answer(statement)}]")


def reading(query: Callable[P, Query[T]]) -> Callable[Concatenate[Membership, P], T]:
    return _method("_read", query, _answer(query))


def async_reading(
    query: Callable[P, Query[T]],
) -> Callable[Concatenate[AsyncMembership, P], Awaitable[T]]:
    return _method("_read", query, f"Awaitable[{_answer(query)}]")
