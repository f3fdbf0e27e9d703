"""The project's own local PostgreSQL cluster, for development, tests, the demo and benchmarks.

The cluster lives under ``.buzz/pg`` (or ``$BUZZ_LOCAL_DB``), listens on a unix socket only
(``listen_addresses=''``), and trusts local connections as the superuser ``postgres``.
Nothing here needs a system service: ``start()`` runs initdb the first time and ``pg_ctl``
every time. As root (CI, containers) initdb and pg_ctl refuse to run, so they are run as the
``postgres`` user through ``runuser``, and the cluster's directory belongs to ``postgres``.

Command line::

    python -m buzz_signer.localdb start|stop|status|destroy
    python -m buzz_signer.localdb url [DBNAME]           # libpq URL, for psql and psycopg
    python -m buzz_signer.localdb env [DBNAME]           # export PGHOST=... lines, for eval
    python -m buzz_signer.localdb create NAME [--template T] [--recreate]
    python -m buzz_signer.localdb drop NAME

This module uses only the standard library, except the database helpers (create/drop), which
import psycopg when called.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import hashlib
import os
import pwd
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from urllib.parse import parse_qsl, quote, urlencode, urlsplit

__all__ = ["DEFAULT_PORT", "LocalCluster", "LocalClusterError", "find_bindir", "url_with_dbname"]

DEFAULT_PORT = 54329
PG_MAJOR = "15"
SUPERUSER = "postgres"
# Unix socket paths are limited to 107 bytes (sun_path); keep a margin.
_SOCKET_PATH_MAX = 100
_SERVICE_USER = "postgres"  # the OS user that owns the cluster when we run as root
_START_TIMEOUT_S = 60
_LOG_ROTATE_BYTES = 256 * 1024 * 1024  # the server log kept before a start rotates it


class LocalClusterError(RuntimeError):
    """The local cluster could not be set up, started or stopped."""


def _has_server_binaries(d: Path) -> bool:
    return all((d / b).is_file() for b in ("initdb", "pg_ctl", "postgres"))


def find_bindir() -> Path:
    """The directory of initdb, pg_ctl and postgres.

    Order: ``$BUZZ_PG_BINDIR``; ``/usr/lib/postgresql/15/bin`` (the version whose pgTAP and
    plpgsql_check packages scripts/setup installs); ``pg_config --bindir``; ``initdb`` on PATH.
    """
    candidates: list[Path] = []
    env = os.environ.get("BUZZ_PG_BINDIR")
    if env:
        candidates.append(Path(env))
    candidates.append(Path(f"/usr/lib/postgresql/{PG_MAJOR}/bin"))
    pg_config = shutil.which("pg_config")
    if pg_config:
        try:
            out = subprocess.run(
                [pg_config, "--bindir"], capture_output=True, text=True, check=True, timeout=10
            ).stdout.strip()
            if out:
                candidates.append(Path(out))
        except (OSError, subprocess.SubprocessError):
            pass
    initdb = shutil.which("initdb")
    if initdb:
        candidates.append(Path(initdb).parent)
    for d in candidates:
        if _has_server_binaries(d):
            return d
    raise LocalClusterError(
        "PostgreSQL server binaries (initdb, pg_ctl, postgres) not found in "
        + ", ".join(str(c) for c in candidates)
        + f". Install postgresql-{PG_MAJOR} (run `make setup`), or set BUZZ_PG_BINDIR."
    )


def url_with_dbname(url: str, dbname: str) -> str:
    """The same connection as ``url`` (a libpq URL or key=value string), to database ``dbname``.

    Returns a ``postgresql://`` URL in both cases.
    """
    if url.startswith(("postgresql://", "postgres://")):
        parts = urlsplit(url)
        query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "dbname"]
        # Not urlunsplit: it would turn 'postgresql:///db' (no host) into 'postgresql:/db'.
        qs = urlencode(query, quote_via=quote, safe="/")
        base = f"{parts.scheme}://{parts.netloc}/{quote(dbname, safe='')}"
        return base + (f"?{qs}" if qs else "")
    # key=value form: let psycopg parse it, then put every parameter into the query string.
    from psycopg.conninfo import conninfo_to_dict

    params = {k: str(v) for k, v in conninfo_to_dict(url).items() if k != "dbname"}
    query = urlencode(sorted(params.items()), quote_via=quote, safe="/")
    return f"postgresql:///{quote(dbname, safe='')}" + (f"?{query}" if query else "")


class LocalCluster:
    """A PostgreSQL cluster in a directory of the project's, reached by a unix socket.

    ``root``: default ``$BUZZ_LOCAL_DB``, else ``./.buzz/pg`` (from the current directory).
    ``port``: default ``$BUZZ_LOCAL_PORT``, else 54329. With ``listen_addresses=''`` the port
    only names the socket file (``.s.PGSQL.<port>``), so clusters in different directories
    never collide, whatever their ports. ``settings``: server settings added to (or replacing)
    the defaults, such as those of a Citus node (buzz_signer.localcitus).

    Files: ``<root>/data`` (PGDATA), ``<root>/log/postgresql.log``, ``<root>/run`` (socket;
    a short directory under /tmp instead when that path would be too long for a socket).
    As root, when the ``postgres`` user cannot reach ``<root>`` (say a clone under /root,
    which is mode 700), the cluster's files go to ``/var/tmp/buzz-pg-<hash of root>``
    instead and ``<root>/LOCATION`` names that directory; ``destroy()`` removes both.
    """

    def __init__(
        self,
        root: str | os.PathLike[str] | None = None,
        port: int | str | None = None,
        settings: dict[str, str] | None = None,
    ) -> None:
        self.extra_settings = dict(settings or {})
        self.root = Path(
            root or os.environ.get("BUZZ_LOCAL_DB") or Path.cwd() / ".buzz" / "pg"
        ).absolute()
        self.port = int(port or os.environ.get("BUZZ_LOCAL_PORT") or DEFAULT_PORT)
        self.as_root = os.geteuid() == 0
        self._bindir: Path | None = None
        self._base: Path | None = None

    # ----------------------------------------------------------------- paths

    def _hash(self, p: Path) -> str:
        return hashlib.sha256(str(p).encode()).hexdigest()[:12]

    @property
    def base(self) -> Path:
        """Where the cluster's files live: ``root``, except in the relocated case above."""
        if self._base is None:
            base = self.root
            if self.as_root and not self._service_user_can_reach(self.root.parent):
                base = Path("/var/tmp") / f"buzz-pg-{self._hash(self.root)}"
            self._base = base
        return self._base

    @property
    def data_dir(self) -> Path:
        return self.base / "data"

    @property
    def log_dir(self) -> Path:
        return self.base / "log"

    @property
    def logfile(self) -> Path:
        return self.log_dir / "postgresql.log"

    @property
    def socket_dir(self) -> Path:
        d = self.base / "run"
        if len(str(d / f".s.PGSQL.{self.port}").encode()) > _SOCKET_PATH_MAX:
            d = Path("/tmp") / f"buzz-pg-{self._hash(self.base)}"
        return d

    @property
    def bindir(self) -> Path:
        if self._bindir is None:
            self._bindir = find_bindir()
        return self._bindir

    def url(self, dbname: str = "postgres") -> str:
        """``postgresql://postgres@/DBNAME?host=SOCKETDIR&port=PORT``: for psql, psycopg, libpq."""
        return (
            f"postgresql://{SUPERUSER}@/{quote(dbname, safe='')}"
            f"?host={quote(str(self.socket_dir), safe='/')}&port={self.port}"
        )

    def env(self, dbname: str | None = None) -> dict[str, str]:
        """libpq environment variables (PGHOST, PGPORT, PGUSER[, PGDATABASE]) for this cluster."""
        env = {"PGHOST": str(self.socket_dir), "PGPORT": str(self.port), "PGUSER": SUPERUSER}
        if dbname:
            env["PGDATABASE"] = dbname
        return env

    # ----------------------------------------------------------- processes

    def _service_user_can_reach(self, path: Path) -> bool:
        """Whether the postgres user may traverse to ``path`` (its nearest existing ancestor)."""
        p = path
        while not p.exists() and p != p.parent:
            p = p.parent
        r = subprocess.run(
            ["runuser", "-u", _SERVICE_USER, "--", "test", "-x", str(p)],
            check=False,
            capture_output=True,
            cwd="/",
        )
        return r.returncode == 0

    def _cmd(self, args: Sequence[str]) -> list[str]:
        if self.as_root:
            return ["runuser", "-u", _SERVICE_USER, "--", *args]
        return list(args)

    def _run(self, args: Sequence[str], timeout: float = 120) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
        env.setdefault("LC_ALL", "C.UTF-8")
        try:
            return subprocess.run(
                self._cmd(args),
                check=False,
                capture_output=True,
                text=True,
                cwd="/",
                env=env,
                timeout=timeout,
                stdin=subprocess.DEVNULL,
            )
        except FileNotFoundError as e:
            raise LocalClusterError(f"cannot run {args[0]}: {e}") from e
        except subprocess.TimeoutExpired as e:
            raise LocalClusterError(
                f"{' '.join(args)} did not finish in {timeout:.0f} s{self._log_tail()}"
            ) from e

    def _chown(self, path: Path) -> None:
        if self.as_root:
            pw = pwd.getpwnam(_SERVICE_USER)
            os.chown(path, pw.pw_uid, pw.pw_gid)

    def _mkdir(self, path: Path, mode: int = 0o755, chown: bool = True) -> None:
        """Create ``path`` and its missing parents, each with ``mode`` whatever the umask."""
        missing = []
        p = path
        while not p.is_dir():
            missing.append(p)
            p = p.parent
        for d in reversed(missing):
            d.mkdir(exist_ok=True)
            d.chmod(mode)
            if chown:
                self._chown(d)

    def _prepare_dirs(self) -> None:
        if self.as_root:
            try:
                pwd.getpwnam(_SERVICE_USER)
            except KeyError as e:
                raise LocalClusterError(
                    f"running as root, but there is no '{_SERVICE_USER}' user to own the "
                    f"cluster (install postgresql-{PG_MAJOR}: `make setup`)"
                ) from e
        self._mkdir(self.root, chown=False)
        if self.base != self.root:
            self._mkdir(self.base)
            (self.root / "LOCATION").write_text(f"{self.base}\n")
        else:
            self._chown(self.root)
            self.root.chmod(0o755)
        self._mkdir(self.log_dir)
        self._mkdir(self.socket_dir)

    @contextlib.contextmanager
    def _lock(self) -> Iterator[None]:
        """Serialise start/stop between processes (say two test runs starting at once)."""
        self._mkdir(self.root, chown=False)
        with open(self.root / ".lock", "w") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)

    def _log_tail(self, lines: int = 30) -> str:
        try:
            text = self.logfile.read_text(errors="replace").splitlines()[-lines:]
        except OSError:
            return ""
        if not text:
            return ""
        return f"\n--- last lines of {self.logfile} ---\n" + "\n".join(text)

    def _pidfile_line(self, n: int) -> str | None:
        """Line ``n`` (0-based) of postmaster.pid: 0 pid, 1 data dir, 3 port, 4 socket dir."""
        try:
            lines = (self.data_dir / "postmaster.pid").read_text().split("\n")
        except OSError:
            return None
        return lines[n].strip() if len(lines) > n else None

    def _pid(self) -> int | None:
        try:
            return int(self._pidfile_line(0) or "")
        except ValueError:
            return None

    def _pid_is_postmaster(self, pid: int) -> bool:
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except FileNotFoundError:
            return False  # no such process
        except OSError:
            # /proc not readable here: fall back to pg_ctl's own check (kill(pid, 0)).
            r = self._run([str(self.bindir / "pg_ctl"), "status", "-D", str(self.data_dir)])
            return r.returncode == 0
        return b"postgres" in cmdline or b"postmaster" in cmdline

    def _binary_replaced(self) -> bool:
        """True when the running postmaster's program file has been replaced on disk."""
        try:
            return os.readlink(f"/proc/{self._pid()}/exe").endswith(" (deleted)")
        except OSError:  # no /proc, or not ours to read: assume it is current
            return False

    def is_initialized(self) -> bool:
        return (self.data_dir / "PG_VERSION").is_file()

    def is_running(self) -> bool:
        pid = self._pid()
        return pid is not None and self._pid_is_postmaster(pid)

    def _server_options(self) -> str:
        settings = {
            "port": str(self.port),
            "listen_addresses": "",
            "unix_socket_directories": str(self.socket_dir),
            "max_connections": "100",
            "shared_preload_libraries": "",
            "log_line_prefix": "%m [%p] ",
            "logging_collector": "off",
            **self.extra_settings,
        }
        # pg_ctl hands this string to /bin/sh: quote every value.
        return " ".join(f"-c {shlex.quote(f'{k}={v}')}" for k, v in settings.items())

    def _initdb(self) -> None:
        if self.data_dir.exists() and any(self.data_dir.iterdir()):
            raise LocalClusterError(
                f"{self.data_dir} exists but holds no cluster (no PG_VERSION): an earlier "
                f"initdb failed? Remove it (`make clean`) and try again."
            )
        r = self._run(
            [
                str(self.bindir / "initdb"),
                "-D", str(self.data_dir),
                "-U", SUPERUSER,
                "-A", "trust",
                "-E", "UTF8",
                "--locale=C.UTF-8",
                "--no-sync",
                "--no-instructions",
            ]
        )  # fmt: skip
        if r.returncode != 0:
            raise LocalClusterError(
                f"initdb failed (exit {r.returncode}) for {self.data_dir}:\n{r.stdout}{r.stderr}"
            )

    def start(self) -> LocalCluster:
        """Create the cluster if needed and start it unless it runs already. Idempotent."""
        with self._lock():
            self._prepare_dirs()
            if not self.is_initialized():
                self._initdb()
            if self.is_running():
                running_port = self._pidfile_line(3)
                if running_port and running_port != str(self.port):
                    raise LocalClusterError(
                        f"the local cluster in {self.data_dir} already runs on port "
                        f"{running_port}, not {self.port}: stop it first (`make db-stop`)"
                    )
                if not self._binary_replaced():
                    return self
                # A package upgrade replaced the server under it: its modules (plpgsql.so)
                # no longer match the running binary, and calls fail until it restarts.
                print("local PostgreSQL: its server binary was upgraded; restarting", file=sys.stderr)
                self._stop()
            pidfile = self.data_dir / "postmaster.pid"
            if pidfile.exists():
                # Left by a server that died (or a machine that restarted); its pid may
                # belong to another process now, which would make postgres refuse to start.
                pidfile.unlink()
            self._rotate_log()
            if self.logfile.exists():
                self._chown(self.logfile)
            r = self._run(
                [
                    str(self.bindir / "pg_ctl"),
                    "start",
                    "-D", str(self.data_dir),
                    "-l", str(self.logfile),
                    "-w", "-t", str(_START_TIMEOUT_S),
                    "-o", self._server_options(),
                ],
                timeout=_START_TIMEOUT_S + 30,
            )  # fmt: skip
            if r.returncode != 0:
                raise LocalClusterError(
                    f"could not start the local PostgreSQL cluster in {self.data_dir} "
                    f"(pg_ctl exit {r.returncode}):\n{(r.stdout + r.stderr).strip()}"
                    f"{self._log_tail()}"
                )
        return self

    def _rotate_log(self) -> None:
        # Tests log every statement (the secret watch reads them), tens of MB a run: at each
        # start, a log past the limit becomes postgresql.log.1, replacing the one before.
        if self.logfile.exists() and self.logfile.stat().st_size > _LOG_ROTATE_BYTES:
            self.logfile.replace(self.logfile.with_name(self.logfile.name + ".1"))

    def stop(self) -> LocalCluster:
        """Stop the server (fast shutdown) if it runs. Idempotent."""
        with self._lock():
            if self.is_running():
                self._stop()
        return self

    def _stop(self) -> None:
        """Stop the running server; the caller holds the lock."""
        r = self._run(
            [str(self.bindir / "pg_ctl"), "stop", "-D", str(self.data_dir), "-m", "fast", "-w",
             "-t", str(_START_TIMEOUT_S)],
            timeout=_START_TIMEOUT_S + 30,
        )  # fmt: skip
        if r.returncode != 0 and self.is_running():
            raise LocalClusterError(
                f"could not stop the local PostgreSQL cluster in {self.data_dir} "
                f"(pg_ctl exit {r.returncode}):\n{(r.stdout + r.stderr).strip()}"
                f"{self._log_tail()}"
            )

    def destroy(self) -> None:
        """Stop the server and remove all of the cluster's files."""
        if self.is_initialized():
            self.stop()
        for d in {self.base, self.root, self.socket_dir}:
            shutil.rmtree(d, ignore_errors=True)

    def status(self) -> str:
        if not self.is_initialized():
            return f"not initialized: no cluster in {self.data_dir} (start creates it)"
        if self.is_running():
            return f"running: pid {self._pid()}, data {self.data_dir}, url {self.url()}"
        return f"stopped: data {self.data_dir}"

    # ----------------------------------------------------------- databases

    def _admin_connect(self):  # -> psycopg.Connection
        import psycopg

        return psycopg.connect(self.url("postgres"), autocommit=True)

    def database_exists(self, name: str) -> bool:
        with self._admin_connect() as c:
            row = c.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
            return row is not None

    def create_database(
        self, name: str, template: str | None = None, drop_existing: bool = False
    ) -> str:
        """Create database ``name`` (from ``template`` if given) and return its URL.

        If it exists already: drop and recreate it with ``drop_existing``, else keep it.
        """
        from psycopg import sql

        with self._admin_connect() as c:
            exists = c.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
            if exists and drop_existing:
                c.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))
                exists = None
            if not exists:
                stmt = sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name))
                if template:
                    stmt = sql.SQL("{} TEMPLATE {}").format(stmt, sql.Identifier(template))
                c.execute(stmt)
        return self.url(name)

    def drop_database(self, name: str) -> None:
        """Drop database ``name`` if it exists, disconnecting its sessions."""
        from psycopg import sql

        with self._admin_connect() as c:
            stmt = sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)")
            c.execute(stmt.format(sql.Identifier(name)))


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m buzz_signer.localdb",
        description="The project's local PostgreSQL cluster (under $BUZZ_LOCAL_DB or ./.buzz/pg).",
    )
    sub = p.add_subparsers(dest="cmd", required=True, metavar="COMMAND")
    sub.add_parser("start", help="create the cluster if needed and start it (idempotent)")
    sub.add_parser("stop", help="stop the server if it runs")
    sub.add_parser("status", help="say whether it runs; exit 1 if not")
    sub.add_parser("destroy", help="stop the server and remove all its files")
    sp = sub.add_parser("url", help="print the libpq URL of a database (default postgres)")
    sp.add_argument("dbname", nargs="?", default="postgres")
    sp = sub.add_parser("env", help="print `export PGHOST=... PGPORT=... PGUSER=...` for eval")
    sp.add_argument("dbname", nargs="?")
    sp = sub.add_parser("create", help="start the cluster, create a database, print its URL")
    sp.add_argument("dbname")
    sp.add_argument("--template")
    sp.add_argument("--recreate", action="store_true", help="drop it first if it exists")
    sp = sub.add_parser("drop", help="drop a database if it exists")
    sp.add_argument("dbname")
    args = p.parse_args(argv)

    cluster = LocalCluster()
    try:
        if args.cmd == "start":
            cluster.start()
            print(f"local PostgreSQL running: {cluster.url()}")
        elif args.cmd == "stop":
            was_running = cluster.is_running()
            cluster.stop()
            print("local PostgreSQL stopped" if was_running else "local PostgreSQL was not running")
        elif args.cmd == "status":
            print(cluster.status())
            return 0 if cluster.is_running() else 1
        elif args.cmd == "destroy":
            cluster.destroy()
            print(f"local PostgreSQL removed: {cluster.root}")
        elif args.cmd == "url":
            print(cluster.url(args.dbname))
        elif args.cmd == "env":
            for k, v in cluster.env(args.dbname).items():
                print(f"export {k}={shlex.quote(v)}")
        elif args.cmd == "create":
            cluster.start()
            print(cluster.create_database(args.dbname, args.template, drop_existing=args.recreate))
        elif args.cmd == "drop":
            cluster.start()
            cluster.drop_database(args.dbname)
    except LocalClusterError as e:
        print(f"localdb: {e}", file=sys.stderr)
        return 1
    except ImportError as e:
        print(f"localdb: {e} (run `make setup` to create .venv)", file=sys.stderr)
        return 1
    except Exception as e:  # psycopg errors: say what failed, without a traceback
        if type(e).__module__.startswith("psycopg"):
            print(f"localdb: {type(e).__name__}: {e}", file=sys.stderr)
            return 1
        raise
    return 0


if __name__ == "__main__":
    sys.exit(main())
