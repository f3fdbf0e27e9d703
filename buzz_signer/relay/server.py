"""The aiohttp server around the protocol: one port for the websocket, NIP-11, the
community's page (page.py), /metrics and /healthz. It picks the connection's community,
turns away the addresses the community blocked (moderation.py), bounds connections per
address, and moves text between the websocket and a RelaySession; everything else is the
protocol's.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import signal
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web
from prometheus_client import CollectorRegistry, generate_latest, multiprocess, values
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from ..errors import BuzzError
from ..keys import RelayKey
from ..membership import CommunityProfile
from ..signer import Signer
from .backend import DatabaseBackend
from .connection import Connection
from .gate import Gate
from .hub import Hub
from .identity import RelayIdentity
from .limits import DEFAULT_LIMITS, Limits
from .management import CONTENT_TYPE as MANAGEMENT_CONTENT_TYPE
from .management import Management
from .metrics import CONTENT_TYPE_LATEST, RelayMetrics
from .moderation import IPAddress, IPNetwork, Moderation, client_address
from .outage import unreachable
from .page import (
    ASSET_PREFIX,
    ASSETS,
    Assets,
    InviteLink,
    asset,
    member_count,
    page_response,
    relay_address,
    render,
)
from .protocol import Community, RelaySession
from .urls import RelayNames, RelayUrl

log = logging.getLogger("buzz_relay")
access = logging.getLogger("buzz_relay.http")

try:
    VERSION = version("buzz-membership")
except PackageNotFoundError:  # run from a checkout that was never installed
    VERSION = "unknown"

# Frames up to this size are read and answered (NOTICE when over --max-message-bytes); a
# larger one ends the connection (websocket close 1009), so no client can make us buffer more.
HARD_FRAME_LIMIT = 16 * 1024 * 1024
# How long a Host -> community look-up is trusted (communities are rarely created or moved).
HOST_CACHE_SECONDS = 10.0
SUPPORTED_NIPS = [1, 11, 42, 43, 70, 86]
# A restart (SIGTERM): the messages being handled get this long to answer; every connection
# is closed within DRAIN_SECONDS, the handlers still running are cancelled HANDLERS_SECONDS
# later, and the process exits within SHUTDOWN_SECONDS (docs/relay.md, "Several processes").
WRITES_SECONDS = 10.0
DRAIN_SECONDS = 12.0
HANDLERS_SECONDS = 2.0
SHUTDOWN_SECONDS = 15
# What a 503 asks a client to wait (Retry-After) before trying again.
RETRY_AFTER_SECONDS = 5
# A request waits at most this long for a connection of the pool, then is answered 503 (and
# the database is probed: outage.py); a new connection gives up after CONNECT_SECONDS.
POOL_WAIT_SECONDS = 5.0
CONNECT_SECONDS = 3
# Set on a request once its websocket is open: a failure after that is no longer a 503.
UPGRADED = web.RequestKey("buzz_relay_upgraded", bool)
# With --workers, each worker sets the gauges the others' /metrics read this often.
SHARED_GAUGE_SECONDS = 1.0
WORKER_HEADER = "Buzz-Relay-Worker"
CORS_HEADERS = {
    "Access-Control-Allow-Origin": "*",
    "Access-Control-Allow-Headers": "Accept, Authorization, Content-Type",
    "Access-Control-Allow-Methods": "GET, POST, OPTIONS",
}


@dataclass(frozen=True)
class RelayConfig:
    database_url: str
    key: RelayKey
    # --key-file: read again on SIGHUP (identity.py); None when the key came from the
    # environment.
    key_file: Path | None = None
    # --community ID|HOST: serve this one community whatever the Host header says.
    community: str | None = None
    # --public-url: the URLs clients use; AUTH and NIP-98 must name one (urls.py).
    public_urls: tuple[RelayUrl, ...] = ()
    limits: Limits = DEFAULT_LIMITS
    pool_size: int = 10
    # The NIP-11 name behind the gate when the upstream's document has none.
    name: str = "buzz membership relay"
    # --contact: NIP-11's contact (a human's address), omitted when None.
    contact: str | None = None
    # NIP-86 createclaim's defaults (--claim-max-uses, --claim-ttl).
    claim_max_uses: int = 100
    claim_ttl_seconds: int = 30 * 24 * 3600
    # --upstream URL: the members-only gate in front of that relay (gate.py); --read anyone.
    upstream: str | None = None
    read_anyone: bool = False
    # --trusted-proxy: the proxies whose X-Forwarded-For names the client (moderation.py).
    trusted_proxies: tuple[IPNetwork, ...] = ()
    # Members' own profiles (kind 0) kept and served; --no-profiles turns it off (SPEC §8).
    profiles: bool = True


@dataclass
class _State:
    config: RelayConfig
    backend: DatabaseBackend
    hub: Hub
    metrics: RelayMetrics
    signer: Signer
    management: Management
    moderation: Moderation
    per_ip: Counter[str] = field(default_factory=Counter)
    hosts: dict[str, tuple[float, Community | None]] = field(default_factory=dict)
    connections: set[Connection] = field(default_factory=set)
    draining: bool = False  # from SIGTERM on: no new connection, no new message
    # --workers: this worker's number (1..N) and metrics shared through PROMETHEUS_MULTIPROC_DIR.
    worker: int | None = None
    # Each open websocket's community and client address: a block closes them (_close_blocked).
    clients: dict[web.WebSocketResponse, tuple[uuid.UUID, IPAddress | None]] = field(
        default_factory=dict
    )
    tasks: list[asyncio.Task[Any]] = field(default_factory=list)
    http: aiohttp.ClientSession | None = None  # to the upstream relay, with --upstream
    upstream_document: dict[str, Any] | None = None  # its NIP-11 document, once read


STATE = web.AppKey("buzz_relay_state", _State)


def _new_pool(config: RelayConfig) -> AsyncConnectionPool:
    return AsyncConnectionPool(
        config.database_url,
        min_size=1,
        max_size=config.pool_size,
        kwargs={
            "autocommit": True,
            "application_name": "buzz-relay",
            "connect_timeout": CONNECT_SECONDS,
        },
        timeout=POOL_WAIT_SECONDS,
        open=False,
    )


def create_app(config: RelayConfig, *, worker: int | None = None) -> web.Application:
    app = web.Application(
        client_max_size=1024 * 1024, middlewares=[_log_request, _while_the_database_is_down]
    )
    identity = RelayIdentity(config.key, config.key_file)
    backend = DatabaseBackend(
        _new_pool(config), config.key, identity=identity, new_pool=lambda: _new_pool(config)
    )
    moderation = Moderation(backend)
    # The gauge reads the hub when scraped; the hub reports to the counters.
    metrics = RelayMetrics(lambda: sum(s.subscription_count for s in hub.sessions()))
    hub = Hub(
        config.database_url,
        backend,
        on_pushed=metrics.events_pushed.inc,
        on_reconnect=metrics.listener_reconnects.inc,
        on_moderation=moderation.changed,
        on_listening=lambda: _listening(moderation, backend),
        on_key_rotated=backend.recheck_key,
        profiles=config.profiles,
    )
    metrics.listener_connected.set_function(lambda: float(hub.connected.is_set()))
    metrics.joins_waiting.set_function(backend.joins_waiting)
    metrics.database_down.set_function(lambda: float(backend.outage.down))
    metrics.key_retired.set_function(lambda: float(backend.identity.retired))
    backend.on_database_error = metrics.database_error
    app[STATE] = _State(
        config=config,
        backend=backend,
        hub=hub,
        metrics=metrics,
        signer=identity.signer,
        management=Management(
            backend,
            config.key,
            claim_max_uses=config.claim_max_uses,
            claim_ttl_seconds=config.claim_ttl_seconds,
        ),
        moderation=moderation,
    )
    moderation.on_reload = lambda: _close_blocked(app[STATE])
    app[STATE].worker = worker
    if worker is not None:
        app.on_response_prepare.append(_name_worker)
    app[ASSETS] = Assets.load()
    app.router.add_get("/", root)
    app.router.add_get(ASSET_PREFIX + "{name}", asset)
    app.router.add_post("/", manage)
    app.router.add_route("OPTIONS", "/", preflight)
    app.router.add_get("/metrics", metrics_page)
    app.router.add_get("/healthz", healthz)
    app.on_startup.append(_start)
    app.on_shutdown.append(_drain)
    app.on_cleanup.append(_stop)
    return app


@web.middleware
async def _log_request(request: web.Request, handler: Any) -> web.StreamResponse:
    """A line of the log per HTTP request (a websocket has its own: `websocket`)."""
    started = time.perf_counter()
    status = 500
    try:
        response = await handler(request)
        status = response.status
        return response
    except web.HTTPException as exc:
        status = exc.status
        raise
    finally:
        if not request.get(UPGRADED):
            access.info(
                "%s %s %d", request.method, request.path, status,
                extra={"address": _address(request), "host": request.host,
                       "ms": round((time.perf_counter() - started) * 1000, 1)},
            )  # fmt: skip


def _address(request: web.Request, client: IPAddress | None = None) -> str:
    """The client's address as the log and the bound per address name it: `client` when
    already read, else read (moderation.client_address)."""
    client = client if client is not None else _client(request)
    return str(client) if client is not None else request.remote or "?"


@web.middleware
async def _while_the_database_is_down(request: web.Request, handler: Any) -> web.StreamResponse:
    """503 with Retry-After at once while the database is known to be down (outage.py), and
    for a request that finds it unreachable: never a hang, never a traceback per request."""
    backend = request.app[STATE].backend
    if backend.outage.down and request.path not in ("/metrics", "/healthz"):
        return _unavailable()
    try:
        return await handler(request)
    except BuzzError as exc:
        if request.get(UPGRADED) or not unreachable(exc):
            raise
        return _unavailable()


def _unavailable() -> web.Response:
    return web.Response(
        status=503,
        text="the database does not answer; try again shortly\n",
        headers=CORS_HEADERS | {"Retry-After": str(RETRY_AFTER_SECONDS)},
    )


async def _start(app: web.Application) -> None:
    state = app[STATE]
    try:
        await state.backend.pool.open(wait=True, timeout=30)
    except PoolTimeout:
        raise SystemExit(
            "buzz-relay: the database did not answer within 30 s; check DATABASE_URL"
        ) from None
    # Is our key the database's? Said in the log now, and on /healthz (identity.py).
    await state.backend.check_key()
    with contextlib.suppress(NotImplementedError, RuntimeError):
        asyncio.get_running_loop().add_signal_handler(signal.SIGHUP, _reload_key, state)
    # Every community's moderation before the first request; the hub reloads it from then on.
    await state.moderation.load_all()
    state.tasks.append(asyncio.create_task(state.hub.run(), name="buzz-relay listen"))
    if state.worker is not None:
        state.tasks.append(asyncio.create_task(_share_gauges(state), name="buzz-relay gauges"))
    if state.config.upstream is not None:
        # One upstream websocket per client connection, each held open: no bound on them
        # (aiohttp's default of 100 would stall every client past the hundredth).
        state.http = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0))
        await _upstream_document(state)
    if state.config.community is not None:
        community = await state.backend.community(state.config.community)
        if community is None:
            raise SystemExit(f"buzz-relay: no community {state.config.community!r}")
        log.info("serving community %s (%s) whatever the Host", community.host, community.id)


def _listening(moderation: Moderation, backend: DatabaseBackend) -> None:
    """The LISTEN connection is (back) up: what was announced while it was down, read."""
    moderation.reconnected()
    backend.recheck_key()


def _reload_key(state: _State) -> None:
    """SIGHUP: the key file again; the new key signs from the next write on, in every
    connection (none is dropped)."""
    identity = state.backend.identity
    if identity.reload():
        state.management.key = identity.key
        state.backend.recheck_key()


def _close_blocked(state: _State) -> None:
    """Close the websockets whose address their community blocks now (rules just reloaded)."""
    for ws, (community, address) in list(state.clients.items()):
        if state.moderation.rules(community).blocks(address):
            del state.clients[ws]
            asyncio.ensure_future(_close_as_blocked(ws))


async def _close_as_blocked(ws: web.WebSocketResponse) -> None:
    with contextlib.suppress(ConnectionError, RuntimeError):
        await ws.send_str(json.dumps(["NOTICE", "blocked: your address may not use this relay"]))
        await ws.close(code=1008, message=b"blocked")


async def _name_worker(request: web.Request, response: web.StreamResponse) -> None:
    response.headers[WORKER_HEADER] = str(request.app[STATE].worker)


async def _share_gauges(state: _State) -> None:
    """With --workers: the gauges that read this process's state when scraped (set_function)
    are not seen by another worker's /metrics, which reads the shared files; so each worker
    writes them there every second."""
    metrics = state.metrics
    while True:
        metrics.subscriptions.set(sum(s.subscription_count for s in state.hub.sessions()))
        metrics.listener_connected.set(float(state.hub.connected.is_set()))
        metrics.joins_waiting.set(state.backend.joins_waiting())
        metrics.database_down.set(float(state.backend.outage.down))
        metrics.key_retired.set(float(state.backend.identity.retired))
        await asyncio.sleep(SHARED_GAUGE_SECONDS)


async def _drain(app: web.Application) -> None:
    """A restart (SIGTERM or SIGINT): aiohttp has stopped accepting connections; each open
    one answers what it is handling and is closed cleanly (connection.py), all at once."""
    state = app[STATE]
    state.draining = True
    loop = asyncio.get_running_loop()
    # A second signal (systemd's to every process of the unit, and the parent's) must not cut
    # the drain short: aiohttp's handlers would raise in the middle of it.
    for signum in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(signum, log.info, "restarting already; signal ignored")
    connections = list(state.connections)
    started = loop.time()
    log.info("restarting: closing %d connections", len(connections))
    if connections:
        deadline = started + WRITES_SECONDS
        tasks = [asyncio.create_task(c.drain(deadline, _upstream_ok(c))) for c in connections]
        _, late = await asyncio.wait(tasks, timeout=DRAIN_SECONDS)
        for task in late:
            task.cancel()
    log.info("restarting: %d connections closed in %.1f s", len(connections), loop.time() - started)


def _upstream_ok(connection: Connection):
    """Behind the gate, what waits for the OKs of the EVENTs forwarded upstream."""
    return connection.handler.upstream_answered if isinstance(connection.handler, Gate) else None


async def _stop(app: web.Application) -> None:
    state = app[STATE]
    for task in state.tasks:
        task.cancel()
    for task in state.tasks:
        with contextlib.suppress(asyncio.CancelledError):
            await task
    await state.moderation.close()
    await state.backend.close()
    if state.http is not None:
        await state.http.close()


async def _upstream_document(state: _State) -> dict[str, Any] | None:
    """The upstream relay's NIP-11 document, read once it answers (None until then)."""
    if state.upstream_document is None and state.http is not None and state.config.upstream:
        url = "http" + state.config.upstream.removeprefix("ws")  # ws: -> http:, wss: -> https:
        try:
            async with state.http.get(
                url,
                headers={"Accept": "application/nostr+json"},
                timeout=aiohttp.ClientTimeout(total=5),
            ) as resp:
                document = await resp.json(content_type=None)
            if isinstance(document, dict):
                state.upstream_document = document
        except (TimeoutError, aiohttp.ClientError, OSError, ValueError) as exc:
            log.warning("upstream relay: no NIP-11 document yet (%s)", type(exc).__name__)
    return state.upstream_document


# ------------------------------------------------------------------ the community


async def _community(request: web.Request) -> Community | None:
    state = request.app[STATE]
    selector = state.config.community
    key = selector if selector is not None else (request.host or "").lower()
    cached = state.hosts.get(key)
    now = time.monotonic()
    if cached is not None and now - cached[0] < HOST_CACHE_SECONDS:
        return cached[1]
    if selector is not None:
        community = await state.backend.community(selector)
    else:
        community = await state.backend.community_by_host(key) if key else None
    if len(state.hosts) > 10_000:
        state.hosts.clear()
    state.hosts[key] = (now, community)
    return community


def _relay_names(request: web.Request, community: Community) -> RelayNames:
    """What an AUTH or a NIP-98 event on this request may name as this relay (urls.py)."""
    config = request.app[STATE].config
    return RelayNames.of(
        config.public_urls,
        community.host,
        request.host,
        one_community=config.community is not None,
    )


# ------------------------------------------------------------------ HTTP


def _client(request: web.Request):
    """The client's address (moderation.client_address), or None when it has none."""
    return client_address(
        request.remote,
        request.headers.getall("X-Forwarded-For", []),
        request.app[STATE].config.trusted_proxies,
    )


async def root(request: web.Request) -> web.StreamResponse:
    community = await _community(request)
    if community is None:
        raise web.HTTPNotFound(
            text=f"no community is served at host {request.host!r}\n", headers=CORS_HEADERS
        )
    # An address the community blocked gets no websocket, no NIP-11 and no page. (NIP-86 stays
    # open to it: its calls prove who signs them, and so an admin who blocked their own
    # network can still lift the block.)
    if request.app[STATE].moderation.rules(community.id).blocks(_client(request)):
        request.app[STATE].metrics.request("connection", "blocked")
        raise web.HTTPForbidden(
            text="blocked: your address may not use this relay\n", headers=CORS_HEADERS
        )
    if request.headers.get("Upgrade", "").lower() == "websocket":
        return await websocket(request, community)
    if "application/nostr+json" in request.headers.get("Accept", ""):
        state = request.app[STATE]
        upstream = await _upstream_document(state) if state.config.upstream else None
        profile = await _profile(state, community)
        document = information_document(state, community, upstream, profile=profile)
        return web.json_response(
            document,
            content_type="application/nostr+json",
            headers=CORS_HEADERS,
        )
    if "text/html" in request.headers.get("Accept", ""):
        return await community_page(request, community)
    return web.Response(
        text=f"{community.host}: a Nostr relay for NIP-43 membership. "
        "Connect with a websocket; NIP-11 with Accept: application/nostr+json.\n",
        headers=CORS_HEADERS,
    )


async def community_page(request: web.Request, community: Community) -> web.Response:
    """The page a browser gets (page.py): drawn with the profile and the live list's count."""
    state = request.app[STATE]
    profile = await _profile(state, community)
    try:
        live = await state.backend.live_list(community.id)
        count = member_count(live.text if live is not None else None)
    except BuzzError as exc:
        if unreachable(exc):
            raise  # 503 (_while_the_database_is_down)
        log.warning("the page without its member count (%s)", type(exc).__name__)
        count = None
    state.metrics.request("page", "ok")
    public = state.config.public_urls
    relay_url = relay_address(request, public[0] if public else None)
    invite = InviteLink.of(request, relay_url)  # /?claim=<code>
    return page_response(
        render(community, profile, count, request.app[ASSETS], invite, relay_url),
        icon=profile.icon if profile else None,
    )


async def _profile(state: _State, community: Community) -> CommunityProfile | None:
    """The community's profile; None when the database does not answer (the document is
    served without it rather than not at all)."""
    try:
        return await state.backend.community_profile(community.id)
    except BuzzError as exc:
        if unreachable(exc):
            raise  # 503 (_while_the_database_is_down)
        log.warning("served without the community's profile (%s)", type(exc).__name__)
        return None


def information_document(
    state: _State,
    community: Community,
    upstream: dict[str, Any] | None = None,
    *,
    profile: CommunityProfile | None = None,
) -> dict[str, Any]:
    """Ours, named and described by the community's profile; behind the gate, the upstream's
    with our key, our NIPs and our limits added, and the profile's fields where it has them."""
    limits = state.config.limits
    ours = {
        "name": profile and profile.name,
        "description": profile and profile.description,
        "icon": profile and profile.icon,
        # Clients of the Jumble family read the relay key from pubkey, NIP-43 from self: the
        # membership events they ask for are signed by this key, gate or not.
        "pubkey": state.signer.pubkey,
        "self": state.signer.pubkey,
        "contact": state.config.contact,
    }
    if state.config.upstream is not None:
        document = dict(upstream or {})
        nips = document.get("supported_nips")
        theirs = {n for n in nips if type(n) is int} if isinstance(nips, list) else set()
        limitation = document.get("limitation")
        document |= {name: value for name, value in ours.items() if value is not None} | {
            "supported_nips": sorted(theirs | set(SUPPORTED_NIPS)),
            "limitation": (limitation if isinstance(limitation, dict) else {})
            | {"auth_required": not state.config.read_anyone, "restricted_writes": True},
        }
        document.setdefault("name", state.config.name)
        return document
    document = ours | {
        "name": ours["name"] or community.host,
        "supported_nips": SUPPORTED_NIPS,
        "software": "buzz-membership",
        "version": VERSION,
        "limitation": {
            "max_message_length": limits.max_message_bytes,
            "max_subscriptions": limits.max_subscriptions,
            "max_filters": limits.max_filters,
            "max_limit": limits.max_limit,
            "auth_required": False,
            "restricted_writes": True,
        },
    }
    return {name: value for name, value in document.items() if value is not None}


async def manage(request: web.Request) -> web.Response:
    """NIP-86: one JSON-RPC request, authorized by NIP-98 (management.py)."""
    state = request.app[STATE]
    community = await _community(request)
    if community is None:
        raise web.HTTPNotFound(
            text=f"no community is served at host {request.host!r}\n", headers=CORS_HEADERS
        )
    if request.content_type != MANAGEMENT_CONTENT_TYPE:
        status, answer = 415, {"error": f"invalid: Content-Type must be {MANAGEMENT_CONTENT_TYPE}"}
    else:
        status, answer = await state.management.handle(
            community,
            request.headers.get("Authorization"),
            await request.read(),
            _relay_names(request, community),
        )
    state.metrics.request("manage", str(status))
    # A refusal a retry may cure (SPEC section 10): when to try again.
    retry = {"Retry-After": str(RETRY_AFTER_SECONDS)} if status == 503 else {}
    headers = CORS_HEADERS | retry
    return web.json_response(answer, status=status, headers=headers)


async def preflight(request: web.Request) -> web.Response:
    return web.Response(status=204, headers=CORS_HEADERS)


async def metrics_page(request: web.Request) -> web.Response:
    if request.app[STATE].worker is None:
        body = request.app[STATE].metrics.exposition()
    else:  # every worker's, summed (the files under PROMETHEUS_MULTIPROC_DIR)
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        body = generate_latest(registry)
    return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})


async def healthz(request: web.Request) -> web.Response:
    backend = request.app[STATE].backend
    if backend.identity.retired:
        return web.Response(status=503, text=backend.identity.describe() + "\n")
    if not backend.outage.down and await backend.healthy():
        return web.Response(text="ok\n")
    return web.Response(status=503, text="the database does not answer\n")


# ------------------------------------------------------------------ the websocket


async def websocket(request: web.Request, community: Community) -> web.WebSocketResponse:
    state = request.app[STATE]
    limits = state.config.limits
    if state.draining:  # asked for as the restart began
        raise web.HTTPServiceUnavailable(text="restarting: reconnect\n", headers=CORS_HEADERS)
    ws = web.WebSocketResponse(max_msg_size=HARD_FRAME_LIMIT, heartbeat=60, autoping=True)
    await ws.prepare(request)
    request[UPGRADED] = True
    # Behind a trusted proxy, the client's own address: for the bound per address and the
    # failed claims, as for blocks.
    client = _client(request)
    address = _address(request, client)
    if state.per_ip[address] >= limits.max_connections_per_ip:
        state.metrics.request("connection", "too_many")
        await ws.send_str(
            json.dumps(["NOTICE", "rate-limited: too many connections from your address"])
        )
        await ws.close(code=1008, message=b"too many connections")
        return ws
    state.per_ip[address] += 1
    connection = Connection(
        ws,
        max_queued=limits.max_queued_messages,
        max_queued_bytes=limits.max_queued_bytes,
        transport=request.transport,
        on_too_slow=lambda: state.metrics.request("connection", "too_slow"),
    )
    send = connection.send
    state.connections.add(connection)
    state.clients[ws] = (community.id, client)
    if state.moderation.rules(community.id).blocks(client):  # blocked while it opened
        _close_blocked(state)
    state.metrics.connections.inc()
    session = RelaySession(
        community,
        state.backend,
        state.signer,
        limits=limits,
        names=_relay_names(request, community),
        address=address,
        observer=state.metrics,
        profiles=state.config.profiles,
    )
    # Behind the gate, the gate answers (and forwards) and takes the live events.
    handler: RelaySession | Gate = session
    if state.http is not None and state.config.upstream is not None:
        handler = Gate(
            session,
            state.http,
            state.config.upstream,
            send,
            read_anyone=state.config.read_anyone,
            rules=lambda: state.moderation.rules(community.id),
        )
    state.hub.register(handler, connection.outbox)
    opened = time.monotonic()
    log.info("websocket opened", extra={"address": address, "host": community.host})
    try:
        await connection.serve(handler, session.greeting())
    finally:
        log.info(
            "websocket closed",
            extra={"address": address, "host": community.host,
                   "seconds": round(time.monotonic() - opened, 1),
                   "received": connection.received, "sent": connection.outbox.sent},
        )  # fmt: skip
        state.hub.unregister(handler)
        if isinstance(handler, Gate):
            await handler.close()
        state.connections.discard(connection)
        state.clients.pop(ws, None)
        state.metrics.connections.dec()
        state.per_ip[address] -= 1
        if state.per_ip[address] <= 0:
            del state.per_ip[address]
    return ws


def run(
    config: RelayConfig,
    host: str,
    port: int,
    *,
    reuse_port: bool = False,
    worker: int | None = None,
) -> None:
    """Serve until SIGTERM or SIGINT, then close every connection cleanly (`_drain`), stop
    the listening and the pool, and return.

    `reuse_port`: bind with SO_REUSEPORT, sharing the port with other processes that do.
    `worker`: this process is worker number `worker` of `buzz-relay --workers` (workers.py),
    whose metrics are shared through PROMETHEUS_MULTIPROC_DIR.
    """
    if worker is not None:
        # Chosen before the first metric is made: prometheus_client reads the variable once,
        # at import, and the parent imported it before the directory existed.
        values.ValueClass = values.get_value_class()
    web.run_app(
        create_app(config, worker=worker),
        host=host,
        port=port,
        reuse_port=reuse_port or None,
        shutdown_timeout=HANDLERS_SECONDS,
        print=None,
        access_log=None,
    )
