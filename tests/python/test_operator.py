"""What an operator meets first (SPEC sections 5 and 10): which database the tools use and
never one nobody asked for, configuration from the environment, the version, and what
`migrate` says it did."""

from __future__ import annotations

import asyncio
import json
import os
import re
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp
import psycopg
import pytest
from click.testing import CliRunner
from relay_client import signed
from relay_fixtures import Person

from buzz_signer.keys import RelayKey
from buzz_signer.migrate import head_revision
from buzz_signer.nip19 import encode_npub
from buzz_signer.relay import cli as relay_cli

pytest_plugins = ("fixtures_membership", "relay_fixtures")

BIN = Path(sys.executable).parent
REPO = Path(__file__).resolve().parents[2]
# What would choose a database or a key for the tools if the caller's shell had it.
CHOOSING = ("DATABASE_URL", "BUZZ_LOCAL", "BUZZ_LOCAL_DB", "PGHOST", "PGDATABASE", "RELAY_URL")


async def join_on(ws: Any, joiner: Person | None = None) -> list[Any]:
    """A join without a claim (the `open` policy) on an open websocket: its OK."""
    event = signed((joiner or Person.new()).secret, 28934, [])
    await ws.send_str(json.dumps(["EVENT", event]))
    while True:
        answer = json.loads((await ws.receive(timeout=10)).data)
        if answer[0] == "OK" and answer[1] == event["id"]:
            return answer


async def join(url: str, joiner: Person | None = None) -> list[Any]:
    """The same on a connection of its own, after the relay's AUTH challenge."""
    async with aiohttp.ClientSession() as http, http.ws_connect(url) as ws:
        await ws.receive(timeout=10)  # the AUTH challenge
        return await join_on(ws, joiner)


def bare_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in CHOOSING and not k.startswith("BUZZ_")}
    return {**env, **extra}


def tool(cwd: Path, *argv: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / argv[0]), *argv[1:]], cwd=cwd, env=bare_env(**env), capture_output=True,
        text=True, timeout=60, check=False,
    )  # fmt: skip


# --------------------------------------------------------------------------- the database


@pytest.mark.parametrize(
    "argv",
    [
        ("buzz-admin", "migrate"),
        ("buzz-admin", "-c", "relay.example.org", "members"),
        ("buzz-admin", "community", "list"),
        ("buzz-relay", "--listen", "127.0.0.1:1"),
    ],
    ids=lambda a: " ".join(a[:2]),
)
def test_no_database_is_started_by_surprise(tmp_path: Path, argv: tuple[str, ...]) -> None:
    """Without a URL and without --local: the usage-error code (buzz-admin 1, buzz-relay 2, as
    click's own), a message naming DATABASE_URL, and nothing created where it ran."""
    key = RelayKey.generate().secret_hex()
    done = tool(tmp_path, *argv, BUZZ_RELAY_SECRET_KEY=key)
    assert done.returncode == (2 if argv[0] == "buzz-relay" else 1), done
    assert "DATABASE_URL" in done.stderr and "--local" in done.stderr, done.stderr
    assert list(tmp_path.iterdir()) == []
    assert key not in done.stderr + done.stdout


def test_a_url_and_local_together_or_a_password_in_argv_are_refused(tmp_path: Path) -> None:
    both = tool(tmp_path, "buzz-admin", "--local", "migrate", DATABASE_URL="postgresql:///x")
    assert both.returncode == 1 and "choose one" in both.stderr, both
    for argv in (
        ("buzz-admin", "--database-url", "postgresql://u:hunter2@db.example.org/buzz", "migrate"),
        ("buzz-relay", "--database-url", "postgresql://u:hunter2@db.example.org/buzz"),
        ("buzz-relay", "--database-url", "host=db password=hunter2"),
    ):
        done = tool(tmp_path, *argv, BUZZ_RELAY_SECRET_KEY=RelayKey.generate().secret_hex())
        assert done.returncode in (1, 2) and "password" in done.stderr, done
        assert "hunter2" not in done.stderr + done.stdout
    assert list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------------- the environment


def relay_config(argv: list[str], env: dict[str, str], monkeypatch: Any) -> Any:
    """The RelayConfig and listening address that buzz-relay would serve with."""
    seen: dict[str, Any] = {}

    def run(config: Any, host: str, port: int, **kw: Any) -> None:
        seen.update(config=config, host=host, port=port)

    monkeypatch.setattr(relay_cli, "run", run)
    monkeypatch.setattr(relay_cli, "raise_open_files", lambda *a: None)
    values: dict[str, str | None] = {k: None for k in os.environ if k.startswith("BUZZ_")}
    values.update(DATABASE_URL=None, BUZZ_LOCAL=None, **env)
    result = CliRunner().invoke(relay_cli.main, argv, env=values, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return seen


def test_every_relay_flag_comes_from_the_environment_and_the_flag_wins(monkeypatch: Any) -> None:
    key = RelayKey.generate()
    env = {
        "BUZZ_RELAY_SECRET_KEY": key.secret_hex(),
        "BUZZ_RELAY_DATABASE_URL": "postgresql://buzz:from-env@db.example.org/buzz",
        "BUZZ_RELAY_LISTEN": "127.0.0.1:7001",
        "BUZZ_RELAY_MAX_JOINS": "7",
        "BUZZ_RELAY_MAX_QUEUED_BYTES": "65536",
        "BUZZ_RELAY_TRUSTED_PROXY": "10.0.0.0/8, 192.0.2.1",
        "BUZZ_RELAY_CONTACT": "mailto:ops@example.org",
        "BUZZ_RELAY_READ": "anyone",
        "BUZZ_RELAY_NO_PROFILES": "1",
    }
    seen = relay_config([], env, monkeypatch)
    config = seen["config"]
    assert (seen["host"], seen["port"]) == ("127.0.0.1", 7001)
    # From the environment a URL may hold its password: nobody else reads it there.
    assert config.database_url == env["BUZZ_RELAY_DATABASE_URL"]
    assert config.limits.max_joins == 7 and config.limits.max_queued_bytes == 65536
    assert [str(n) for n in config.trusted_proxies] == ["10.0.0.0/8", "192.0.2.1/32"]
    assert config.contact == "mailto:ops@example.org" and config.read_anyone
    assert config.key.pubkey == key.pubkey
    assert not config.profiles
    assert relay_config([], env | {"BUZZ_RELAY_NO_PROFILES": "0"}, monkeypatch)["config"].profiles

    flags = ["--listen", "127.0.0.1:7002", "--max-joins", "3", "--read", "members"]
    seen = relay_config(flags, env, monkeypatch)
    assert seen["port"] == 7002
    assert seen["config"].limits.max_joins == 3 and not seen["config"].read_anyone
    assert seen["config"].limits.max_queued_bytes == 65536  # not given: still the variable's

    # Every flag has its variable, named after the flag.
    for param in relay_cli.main.params:
        if param.opts[0].startswith("--") and param.name not in ("help", "version"):
            flag = max(param.opts, key=len)
            expected = "BUZZ_RELAY_" + flag[2:].upper().replace("-", "_")
            assert param.envvar == expected, (flag, param.envvar)


# --------------------------------------------------------------------------- versions


def test_both_tools_print_the_version_and_it_follows_the_migrations(tmp_path: Path) -> None:
    from importlib.metadata import version

    installed = version("buzz-membership")
    for name in ("buzz-admin", "buzz-relay"):
        done = tool(tmp_path, name, "--version")
        assert done.returncode == 0 and done.stdout.strip() == f"{name}, version {installed}"
    # The minor number is the newest migration's: adding one means a new version.
    pyproject = (REPO / "pyproject.toml").read_text()
    declared = re.search(r'^version = "(\d+)\.(\d+)\.(\d+)"', pyproject, re.MULTILINE)
    assert declared is not None
    assert int(declared.group(2)) == int(head_revision()), (declared.group(0), head_revision())
    assert installed == ".".join(declared.groups())


def test_migrate_says_from_which_revision_to_which(empty_database: str, tmp_path: Path) -> None:
    url, head = empty_database, head_revision()
    subprocess.run(
        [str(BIN / "alembic"), "upgrade", "0006"], env=bare_env(DATABASE_URL=url),
        cwd=REPO, capture_output=True, check=True, timeout=300,
    )  # fmt: skip
    first = tool(tmp_path, "buzz-admin", "migrate", DATABASE_URL=url)
    assert first.returncode == 0 and first.stdout.strip() == f"0006 -> {head}", first
    again = tool(tmp_path, "buzz-admin", "--json", "migrate", DATABASE_URL=url)
    assert json.loads(again.stdout) == {
        "outcome": "unchanged", "from": head, "to": head, "exit_code": 0
    }  # fmt: skip
    with psycopg.connect(url, autocommit=True) as c:  # a function edited by hand
        c.execute(
            "CREATE OR REPLACE FUNCTION buzz.relay_member(p_community uuid, p_pubkey text)"
            " RETURNS TABLE (pubkey text, role text, added_by text, joined_at timestamptz,"
            " roles text[]) LANGUAGE sql AS 'SELECT NULL, NULL, NULL, NULL::timestamptz,"
            " NULL::text[] WHERE false'"
        )
    fixed = tool(tmp_path, "buzz-admin", "migrate", DATABASE_URL=url)
    assert fixed.stdout.strip() == f"at {head}, functions updated", fixed
    assert list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------------- outages


def test_a_database_outage_is_503_at_once_logged_once_and_over_when_it_returns(
    tmp_path: Path,
) -> None:
    """A cluster of the test's own, stopped under a running relay and started again
    (bench.outage): every answer during the outage a 503 with Retry-After, one line when it
    began and one when it ended, no traceback, and NIP-11 and joins served again after."""
    done = subprocess.run(
        [sys.executable, "-m", "bench.outage", "--quick", "--out", str(tmp_path)],
        cwd=REPO, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    r = json.loads((tmp_path / "outage.json").read_text())
    assert len(r["probes"]) >= 2
    for probe in r["probes"][1:]:  # the first may race the outage's start
        assert [probe[w][0] for w in ("healthz", "nip11", "page", "upgrade")] == [503] * 4, probe
        assert probe["nip11"][2] == probe["page"][2] == "5", probe  # Retry-After
    assert r["nip11_back_seconds"] is not None and r["join_back_seconds"] is not None, r
    assert r["after"] == {"healthz": 200, "nip11": 200, "page": 200, "upgrade": 101}, r
    assert r["tracebacks"] == 0, r["log"]
    began = [line for line in r["log"] if "the database does not answer" in line]
    ended = [line for line in r["log"] if "the database answers again" in line]
    assert len(began) == 1 and " ERROR " in began[0], r["log"]
    assert len(ended) == 1, r["log"]


# --------------------------------------------------------------------------- the relay key


def test_a_retired_key_is_an_error_a_503_and_a_refusal_until_sighup_loads_the_new_one(
    start_relay: Any, mem: Any, db_url: str, key: RelayKey, tmp_path: Path
) -> None:
    """`buzz-admin rotate-key` under a running relay: the relay hears the rotation, logs one
    error naming both keys, /healthz says 503, a join is refused with the retired-key words;
    the new key file and SIGHUP put it right on the same connection, which stays open."""
    key_file = tmp_path / "relay.key"
    key_file.write_text(key.secret_hex() + "\n")
    key_file.chmod(0o600)
    owner = Person.new()
    cid = mem.create_community(f"rotate-{secrets.token_hex(3)}.example.org", owner.pubkey)
    cid = cid.details["community_id"]
    mem.set_join_policy(cid, "open")
    relay = start_relay("--community", str(cid), "--key-file", str(key_file))

    def until(check: Any, what: str) -> None:
        deadline = time.monotonic() + 15
        while not check():
            assert time.monotonic() < deadline, f"{what}:\n{relay.log()}"
            time.sleep(0.05)

    new = RelayKey.generate()
    new_file = tmp_path / "new.key"
    new_file.write_text(new.secret_hex() + "\n")
    new_file.chmod(0o600)

    async def main() -> None:
        async with aiohttp.ClientSession() as http, http.ws_connect(relay.url) as ws:
            await ws.receive(timeout=10)  # the AUTH challenge
            assert (await join_on(ws))[2] is True
            rotated = tool(
                tmp_path, "buzz-admin", "--key-file", str(new_file), "-c", str(cid),
                "rotate-key", "--yes", DATABASE_URL=db_url,
            )  # fmt: skip
            assert rotated.returncode == 0, rotated
            await asyncio.to_thread(until, lambda: relay.get("/healthz")[0] == 503, "no 503")
            body = relay.get("/healthz")[1]
            assert encode_npub(key.pubkey) in body and encode_npub(new.pubkey) in body, body
            refused = await join_on(ws)
            assert refused[2:] == [False, "error: this relay holds a retired key; try again later"]
            errors = [line for line in relay.log().splitlines() if "is not the database's" in line]
            assert len(errors) == 1 and " ERROR " in errors[0], relay.log()
            assert "buzz_relay_key_retired 1.0" in relay.get("/metrics")[1]

            key_file.write_text(new.secret_hex() + "\n")
            relay.proc.send_signal(signal.SIGHUP)
            await asyncio.to_thread(until, lambda: relay.get("/healthz")[0] == 200, "no 200")
            assert (await join_on(ws))[2] is True  # the same connection, open all along
            document = json.loads(relay.get("/", {"Accept": "application/nostr+json"})[1])
            assert document["self"] == new.pubkey
            assert "buzz_relay_key_retired 0.0" in relay.get("/metrics")[1]

    asyncio.run(main())
    assert mem.member_list(cid)["pubkey"] == new.pubkey
    assert relay.proc.poll() is None


# --------------------------------------------------------------------------- errors


def test_an_error_that_is_no_outcome_is_logged_and_counted_by_sqlstate(
    start_relay: Any, mem: Any, db_url: str
) -> None:
    """A write the database refuses with a SQLSTATE the API never raises (here from a
    trigger an operator's extension might add): the client gets the usual refusal, the log
    one line with the SQLSTATE and message, /metrics a count under that SQLSTATE."""
    owner = Person.new()
    cid = mem.create_community(f"errors-{secrets.token_hex(3)}.example.org", owner.pubkey)
    cid = cid.details["community_id"]
    mem.set_join_policy(cid, "open")
    with psycopg.connect(db_url, autocommit=True) as su:
        su.execute(
            "CREATE FUNCTION public.refuse_members() RETURNS trigger LANGUAGE plpgsql AS"
            " $$BEGIN RAISE EXCEPTION 'no more members today' USING ERRCODE = '58030'; END$$"
        )
        su.execute(
            "CREATE TRIGGER refuse BEFORE INSERT ON buzz_private.relay_members"
            " FOR EACH ROW EXECUTE FUNCTION public.refuse_members()"
        )
    relay = start_relay("--community", str(cid))

    answer = asyncio.run(join(relay.url))
    assert answer[2:] == [False, "error: the database could not record it; try again"]
    lines = [line for line in relay.log().splitlines() if "SQLSTATE 58030" in line]
    assert len(lines) == 1 and "no more members today" in lines[0], relay.log()
    assert 'buzz_relay_database_errors_total{sqlstate="58030"} 1.0' in relay.get("/metrics")[1]
    assert str(cid) not in answer[3]


# --------------------------------------------------------------------------- logs and systemd


def test_json_logs_a_line_per_request_connection_and_write(
    start_relay: Any, mem: Any, tmp_path: Path
) -> None:
    owner = Person.new()
    cid = mem.create_community(f"logs-{secrets.token_hex(3)}.example.org", owner.pubkey)
    cid = cid.details["community_id"]
    mem.set_join_policy(cid, "open")
    relay = start_relay("--community", str(cid), env={"BUZZ_RELAY_LOG_FORMAT": "json"})
    assert relay.get("/", {"Accept": "application/nostr+json"})[0] == 200
    joiner = Person.new()

    asyncio.run(join(relay.url, joiner))
    deadline = time.monotonic() + 10
    while "websocket closed" not in relay.log():
        assert time.monotonic() < deadline, relay.log()
        time.sleep(0.05)
    lines = [json.loads(line) for line in relay.log().splitlines()]  # every line is JSON
    assert all({"time", "level", "logger", "message"} <= line.keys() for line in lines)
    http_lines = [x for x in lines if x["logger"] == "buzz_relay.http"]
    assert any(x["message"] == "GET / 200" and x["address"] == "127.0.0.1" for x in http_lines)
    assert any(x["message"].startswith("GET /healthz") for x in http_lines)
    opened = [x for x in lines if x["message"] == "websocket opened"]
    closed = [x for x in lines if x["message"] == "websocket closed"]
    assert len(opened) == len(closed) == 1 and closed[0]["address"] == "127.0.0.1", lines
    assert closed[0]["received"] == 1 and closed[0]["sent"] == 2  # AUTH, then OK
    assert isinstance(closed[0]["seconds"], float)
    writes = [x for x in lines if x["message"] == "request_membership: joined"]
    assert len(writes) == 1 and writes[0]["level"] == "info" and "ms" in writes[0], [
        x["message"] for x in lines
    ]
    assert joiner.secret not in relay.log()


def test_the_systemd_unit_and_its_environment_file(tmp_path: Path) -> None:
    """contrib/buzz-relay.service passes `systemd-analyze verify` (with ExecStart pointed at
    this checkout's buzz-relay, since /opt/buzz is not installed here) and has what SPEC
    section 10 names; every variable of contrib/buzz-relay.env is one buzz-relay reads."""
    unit = (REPO / "contrib" / "buzz-relay.service").read_text()
    settings = dict(
        line.split("=", 1) for line in unit.splitlines() if "=" in line and line[0] != "#"
    )
    assert settings["ExecStart"] == "/opt/buzz/bin/buzz-relay"
    assert settings["ExecReload"] == "/bin/kill -HUP $MAINPID"
    assert settings["KillMode"] == "mixed" and int(settings["TimeoutStopSec"]) > 15
    assert int(settings["LimitNOFILE"]) >= 65536
    assert settings["EnvironmentFile"] == "/etc/buzz/buzz-relay.env"
    here = tmp_path / "buzz-relay.service"
    here.write_text(unit.replace("/opt/buzz/bin/buzz-relay", str(BIN / "buzz-relay")))
    verified = subprocess.run(
        ["systemd-analyze", "verify", str(here)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert verified.returncode == 0 and not verified.stderr.strip(), verified

    variables = {
        line.split("=", 1)[0].lstrip("#")
        for line in (REPO / "contrib" / "buzz-relay.env").read_text().splitlines()
        if "=" in line and not line.startswith("# ")
    }
    read = {p.envvar for p in relay_cli.main.params} | {"DATABASE_URL"}
    assert variables and variables <= read, variables - read
    assert "BUZZ_RELAY_KEY_FILE" in variables and "BUZZ_RELAY_SECRET_KEY" not in variables
