"""buzz-relay as several processes (`--workers N`), and what every process checks at start.

The parent forks N workers before it opens any database connection or event loop; each worker
binds the same HOST:PORT with SO_REUSEPORT (the kernel spreads new connections among them)
and builds its own app: its own pool, its own LISTEN connection. The parent only supervises:

- a worker that exits when not asked to (a crash, kill -9) is logged with its number, pid and
  exit status or signal, and started again after a back-off (0.5 s, doubling while it keeps
  dying within 10 s of its start, at most 30 s), so one that fails at start does not spin;
- SIGTERM or SIGINT to the parent goes to every worker as SIGTERM (each drains its
  connections, server.py); the parent waits for them at most STOP_SECONDS (then SIGKILL) and
  exits 0 when they all exited 0; SIGHUP goes to every worker as it is (each reads its key
  file again, identity.py);
- the workers' metrics meet in a directory of the parent's (PROMETHEUS_MULTIPROC_DIR); a dead
  worker's live gauges are removed from it, and the directory at exit.

Workers run in their own process group (a terminal's Ctrl-C reaches the parent alone, which
passes it on once) and get SIGTERM if the parent dies.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import logging
import os
import resource
import shutil
import signal
import socket
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass

from .logs import name_worker

__all__ = ["address_in_use", "raise_open_files", "supervise"]

log = logging.getLogger("buzz_relay")

RESTART_FIRST, RESTART_MAX = 0.5, 30.0
STABLE_SECONDS = 10.0  # a worker that lived this long starts again after RESTART_FIRST
STOP_SECONDS = 20.0  # a worker drains in at most 15 s (server.SHUTDOWN_SECONDS)
# File descriptors that are not client connections: the pool, LISTEN, logs, the listening
# socket, the upstream of each gated connection aside (those count as connections).
RESERVED_FILES = 64
TARGET_CONNECTIONS = 10_000
_SIGNALS = {signal.SIGCHLD, signal.SIGTERM, signal.SIGINT, signal.SIGHUP}


# ------------------------------------------------------------------ open files


def raise_open_files(pool_size: int, max_connections_per_ip: int) -> None:
    """Raise the soft RLIMIT_NOFILE to the hard one; say how many connections that allows, and
    what is missing when it is fewer than TARGET_CONNECTIONS (or one address's bound)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard > soft:
        wanted = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 20)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
            soft = wanted
        except (ValueError, OSError):
            pass
    reserved = pool_size + RESERVED_FILES
    allowed = max(0, soft - reserved)
    log.info("open files: %d allowed, about %d connections per process", soft, allowed)
    needed = max(TARGET_CONNECTIONS, max_connections_per_ip) + reserved
    if soft < needed:
        log.warning(
            "open files: the limit is %d (hard limit %s), so about %d connections per process;"
            " %d connections need %d: raise the hard limit (ulimit -n %d, or LimitNOFILE=%d in"
            " the systemd unit)",
            soft,
            "unlimited" if hard == resource.RLIM_INFINITY else hard,
            allowed,
            needed - reserved,
            needed,
            needed,
            needed,
        )


# ------------------------------------------------------------------ the port


def address_in_use(host: str, port: int) -> bool:
    """Whether HOST:PORT is already bound by a socket that does not share it: bound as a
    single process would bind it (SO_REUSEADDR, no SO_REUSEPORT), then let go."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror:
        return False  # the workers will say it
    for family, kind, proto, _, address in infos:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(address)
            except OSError as exc:
                if exc.errno == errno.EADDRINUSE:
                    return True
    return False


# ------------------------------------------------------------------ the supervisor


@dataclass
class _Worker:
    number: int
    pid: int
    started: float


def supervise(count: int, serve: Callable[[int], None]) -> int:
    """Run `serve(number)` in `count` worker processes, keep them running, and stop them on
    SIGTERM/SIGINT; the exit status for the parent (0: every worker stopped cleanly)."""
    metrics_dir = tempfile.mkdtemp(prefix="buzz-relay-metrics-")
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = metrics_dir
    signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)
    try:
        return _Supervisor(count, serve, metrics_dir).run()
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _SIGNALS)
        shutil.rmtree(metrics_dir, ignore_errors=True)


class _Supervisor:
    def __init__(self, count: int, serve: Callable[[int], None], metrics_dir: str) -> None:
        self._serve = serve
        self._metrics_dir = metrics_dir
        self._workers: dict[int, _Worker] = {}  # by pid
        now = time.monotonic()
        self._due = {number: now for number in range(1, count + 1)}  # to start, and when
        self._delay = dict.fromkeys(self._due, RESTART_FIRST)
        self._stop_by: float | None = None  # set once asked to stop
        self._clean = True

    def run(self) -> int:
        log.info("supervising %d workers (pid %d)", len(self._due), os.getpid())
        while True:
            self._reap()
            now = time.monotonic()
            if self._stop_by is not None:
                if not self._workers:
                    break
                if now >= self._stop_by:
                    self._kill_all()
                    continue
            for number, when in sorted(self._due.items()):
                if when <= now:
                    del self._due[number]
                    self._start(number)
            wake = [self._stop_by] if self._stop_by is not None else list(self._due.values())
            timeout = max(0.0, min(wake, default=now + 60) - time.monotonic())
            got = signal.sigtimedwait(_SIGNALS, min(timeout, 60.0))
            if got is not None and got.si_signo == signal.SIGHUP:
                self._forward(signal.SIGHUP)  # each worker reads its key file again
            elif got is not None and got.si_signo != signal.SIGCHLD:
                self._stop(signal.Signals(got.si_signo).name)
        log.info("every worker stopped%s", "" if self._clean else ", not all cleanly")
        return 0 if self._clean else 1

    def _forward(self, signum: signal.Signals) -> None:
        for pid in self._workers:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signum)

    def _start(self, number: int) -> None:
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:  # the worker
            os._exit(_worker(number, parent, self._serve))
        self._workers[pid] = _Worker(number, pid, time.monotonic())
        log.info("worker %d started (pid %d)", number, pid)

    def _reap(self) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            worker = self._workers.pop(pid, None)
            if worker is None:
                continue
            with contextlib.suppress(OSError):
                _mark_dead(pid, self._metrics_dir)
            code = os.waitstatus_to_exitcode(status)
            how = (
                f"was killed by signal {signal.Signals(-code).name}"
                if code < 0
                else f"exited with status {code}"
            )
            if self._stop_by is not None:
                if code != 0:
                    self._clean = False
                    log.warning("worker %d (pid %d) %s while stopping", worker.number, pid, how)
                else:
                    log.info("worker %d (pid %d) stopped", worker.number, pid)
                continue
            lived = time.monotonic() - worker.started
            delay = self._delay[worker.number]
            if lived >= STABLE_SECONDS:
                delay = RESTART_FIRST
            self._delay[worker.number] = min(delay * 2, RESTART_MAX)
            self._due[worker.number] = time.monotonic() + delay
            log.warning(
                "worker %d (pid %d) %s after %.1f s; starting it again in %.1f s",
                worker.number,
                pid,
                how,
                lived,
                delay,
            )

    def _stop(self, signame: str) -> None:
        if self._stop_by is not None:
            log.info("%s: stopping already", signame)
            return
        log.info("%s: stopping %d workers", signame, len(self._workers))
        self._stop_by = time.monotonic() + STOP_SECONDS
        self._due.clear()
        for pid in self._workers:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)

    def _kill_all(self) -> None:
        self._clean = False
        for pid, worker in list(self._workers.items()):
            log.warning(
                "worker %d (pid %d) did not stop within %.0f s: killed",
                worker.number,
                pid,
                STOP_SECONDS,
            )
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        for pid in list(self._workers):
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
            _mark_dead(pid, self._metrics_dir)
            del self._workers[pid]


def _mark_dead(pid: int, metrics_dir: str) -> None:
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(pid, metrics_dir)


def _worker(number: int, parent: int, serve: Callable[[int], None]) -> int:
    """The body of a forked worker; its exit status."""
    code = 1
    try:
        signal.pthread_sigmask(signal.SIG_SETMASK, set())
        os.setpgid(0, 0)
        _die_with(parent)
        name_worker(number)
        serve(number)
        code = 0
    except SystemExit as exc:  # e.g. the database did not answer at start
        if isinstance(exc.code, str):
            print(exc.code, file=sys.stderr)
            code = 1
        else:
            code = exc.code or 0
    except BaseException:
        log.exception("worker %d failed", number)
    finally:
        logging.shutdown()
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
    return code


def _die_with(parent: int) -> None:
    """SIGTERM to this worker when the parent dies (Linux's PR_SET_PDEATHSIG)."""
    pr_set_pdeathsig = 1
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, int(signal.SIGTERM))
    if os.getppid() != parent:  # it died before that took effect
        raise SystemExit(0)
