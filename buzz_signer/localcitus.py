"""A throwaway Citus cluster of the project's: a coordinator and two workers on loopback ports.

Each node is a LocalCluster (buzz_signer.localdb) under ``.buzz/citus/<node>`` (or
``$BUZZ_LOCAL_CITUS``), listening on 127.0.0.1 as well as its socket, since the nodes reach
each other over TCP. Ports: the coordinator's is ``$BUZZ_CITUS_PORT`` (default 55101), the
workers' the next ones. Local connections are trusted, as in localdb: a development cluster.

A database here is created on every node, with the citus extension, and the coordinator then
knows its workers; `buzz-admin migrate` on the coordinator's URL builds and distributes the
schema (buzz_signer.migrate, db/citus/).

Command line::

    python -m buzz_signer.localcitus start|stop|status|destroy
    python -m buzz_signer.localcitus url [DBNAME] [--node worker1]
    python -m buzz_signer.localcitus create NAME [--recreate]
    python -m buzz_signer.localcitus drop NAME
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from buzz_signer.localdb import LocalCluster, LocalClusterError, find_bindir

__all__ = ["DEFAULT_PORT", "LocalCitus", "citus_installed"]

DEFAULT_PORT = 55101
WORKERS = 2
HOST = "127.0.0.1"
# Shards of each distributed table (citus.shard_count): BUZZ_CITUS_SHARD_COUNT, else 8. The
# test suites' cluster takes 2, one per worker (Makefile): a query over every community reads
# each shard, and a test database copies each, so fewer make every test cheaper, while
# co-location, routing and a shard's move are the same with 2 as with 8.
SHARD_COUNT = 8


def citus_installed() -> bool:
    """Whether this machine's PostgreSQL has Citus (`make citus` builds it from CITUS_SRC)."""
    return (find_bindir().parent / "lib" / "citus.so").is_file()


def _node_settings(port: int, shard_count: int) -> dict[str, str]:
    return {
        "listen_addresses": HOST,
        "shared_preload_libraries": "citus",
        # Our member and role tables have triggers (the list's bookkeeping, the commit guard);
        # they fire on the shards, where every write of a community runs (docs/scale-out.md).
        "citus.enable_unsafe_triggers": "on",
        # Each session of the coordinator may hold a connection to each worker, and a worker's
        # delegated calls open their own: room for the test suites' sessions.
        "max_connections": "300",
        "max_prepared_transactions": "300",
        # citus_move_shard_placement copies a shard by logical replication.
        "wal_level": "logical",
        "max_replication_slots": "20",
        "max_wal_senders": "20",
        "citus.shard_count": str(shard_count),
        # Citus runs a maintenance worker per database: room for the tests' databases.
        "max_worker_processes": "64",
    }


class LocalCitus:
    """The coordinator and the workers, each a LocalCluster."""

    def __init__(
        self,
        root: str | os.PathLike[str] | None = None,
        port: int | None = None,
        workers: int = WORKERS,
        shard_count: int | None = None,
    ):
        shard_count = int(
            shard_count or os.environ.get("BUZZ_CITUS_SHARD_COUNT") or SHARD_COUNT
        )
        self.root = Path(
            root or os.environ.get("BUZZ_LOCAL_CITUS") or Path.cwd() / ".buzz" / "citus"
        ).absolute()
        self.port = int(port or os.environ.get("BUZZ_CITUS_PORT") or DEFAULT_PORT)
        names = ["coordinator"] + [f"worker{i}" for i in range(1, workers + 1)]
        self.nodes = {
            name: LocalCluster(
                self.root / name, self.port + i, _node_settings(self.port + i, shard_count)
            )
            for i, name in enumerate(names)
        }

    @property
    def coordinator(self) -> LocalCluster:
        return self.nodes["coordinator"]

    @property
    def workers(self) -> list[LocalCluster]:
        return [n for name, n in self.nodes.items() if name != "coordinator"]

    def url(self, dbname: str = "postgres", node: str = "coordinator") -> str:
        return self.nodes[node].url(dbname)

    def start(self) -> LocalCitus:
        if not citus_installed():
            raise LocalClusterError(
                "the citus extension is not installed: `make citus` builds it from CITUS_SRC"
            )
        for n in self.nodes.values():
            n.start()
        return self

    def stop(self) -> LocalCitus:
        for n in self.nodes.values():
            n.stop()
        return self

    def destroy(self) -> None:
        for n in self.nodes.values():
            n.destroy()
        import shutil

        shutil.rmtree(self.root, ignore_errors=True)

    def status(self) -> str:
        return "\n".join(f"{name}: {n.status()}" for name, n in self.nodes.items())

    def create_database(self, name: str, drop_existing: bool = False) -> str:
        """Create ``name`` on every node with citus, join the workers; the coordinator's URL.

        PostgreSQL's CREATE DATABASE is not propagated by Citus 13, so each node gets its own,
        and the coordinator's metadata then names the workers (an existing database is kept
        unless ``drop_existing``).
        """
        import psycopg

        if drop_existing:
            self.drop_database(name)
        fresh = not self.coordinator.database_exists(name)
        for n in self.nodes.values():
            n.create_database(name)
            with psycopg.connect(n.url(name), autocommit=True) as c:
                c.execute("CREATE EXTENSION IF NOT EXISTS citus")
        if fresh:
            with psycopg.connect(self.coordinator.url(name), autocommit=True) as c:
                c.execute("SELECT citus_set_coordinator_host(%s, %s)", (HOST, self.port))
                for w in self.workers:
                    c.execute("SELECT citus_add_node(%s, %s)", (HOST, w.port))
        return self.coordinator.url(name)

    def drop_database(self, name: str) -> None:
        for n in self.nodes.values():
            n.drop_database(name)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m buzz_signer.localcitus",
        description="The project's local Citus cluster (under $BUZZ_LOCAL_CITUS or .buzz/citus).",
    )
    sub = p.add_subparsers(dest="cmd", required=True, metavar="COMMAND")
    for cmd in ("start", "stop", "status", "destroy"):
        sub.add_parser(cmd)
    u = sub.add_parser("url", help="the libpq URL of a database on a node")
    u.add_argument("dbname", nargs="?", default="postgres")
    u.add_argument("--node", default="coordinator")
    c = sub.add_parser("create", help="create a database on every node, print its URL")
    c.add_argument("name")
    c.add_argument("--recreate", action="store_true")
    d = sub.add_parser("drop")
    d.add_argument("name")
    args = p.parse_args(argv)
    cluster = LocalCitus()
    try:
        if args.cmd == "start":
            cluster.start()
        elif args.cmd == "stop":
            cluster.stop()
        elif args.cmd == "status":
            print(cluster.status())
        elif args.cmd == "destroy":
            cluster.destroy()
        elif args.cmd == "url":
            print(cluster.url(args.dbname, args.node))
        elif args.cmd == "create":
            cluster.start()
            print(cluster.create_database(args.name, drop_existing=args.recreate))
        elif args.cmd == "drop":
            cluster.drop_database(args.name)
    except (LocalClusterError, KeyError) as e:
        print(f"localcitus: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
