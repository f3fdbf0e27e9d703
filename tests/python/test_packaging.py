"""The wheel, installed the way a relay operator installs it, builds the database by itself.

The wheel is built from this repository's files, installed into a new virtualenv outside the
checkout, and its `buzz-admin migrate` is run from a directory outside the checkout, without
PYTHONPATH, on a brand-new database: everything it applies (the Alembic environment and
revisions, every function file) must come from the wheel's own buzz_signer/db, which
pyproject.toml maps from the repository's db/.

How, and why so (the test runs in CI, so it is kept to some seconds):

- The build runs on a copy of the files git would put in a clone (tracked and untracked, not
  ignored), plus the community page's assets that scripts/setup built into buzz_signer/web
  (ignored, as generated files are; the wheel must carry them, so that no Node is needed where
  it is installed), in a temporary directory: setuptools builds in the source tree (build/ and
  *.egg-info), which must not be written in a checkout shared with other work, and whose stale
  build/lib could put files in the wheel that the repository no longer has.
- The build is isolated (pip installs pyproject's build requirements, setuptools>=68, in its
  own environment): .venv's setuptools is not what pyproject.toml asks for, and the wheel must
  be the one `pip wheel .` or `python -m build` gives anyone.
- The virtualenv is made without pip (`venv --without-pip`, instant), and .venv's pip installs
  into it (`pip --python`): the wheel and its dependencies, resolved from the configured index
  like any installation, with nothing from .venv or the checkout. With pip's cache this takes
  about ten seconds here; no shortcut (a .pth onto .venv's site-packages, wheels re-made from
  .venv) was needed, and each would have let the checkout's environment leak in.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import tarfile
import time
import urllib.request
import zipfile
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from ports import free_port
from psycopg import sql

from buzz_signer.keys import RelayKey
from buzz_signer.localdb import url_with_dbname
from buzz_signer.membership import Membership
from buzz_signer.migrate import head_revision

REPO = Path(__file__).resolve().parents[2]
DB = REPO / "db"
# The page's assets, built from web/ (scripts/setup) and shipped as package data.
WEB = REPO / "buzz_signer" / "web"
# What the wheel must carry, as paths under db/ (the package data globs of pyproject.toml).
SHIPPED_GLOBS = (
    "functions/**/*.sql",
    "migrations/env.py",
    "migrations/script.py.mako",
    "migrations/versions/*.py",
)
# Directories never copied into the build when git is not there to list the files.
NOT_SOURCES = (".git", ".venv", ".buzz", "build", "dist", "*.egg-info", "__pycache__", ".*cache")

# What the installed package says about itself, printed by the venv's interpreter.
PROBE = """
import json, sys
import buzz_signer, buzz_signer.migrate as m
print(json.dumps({
    "package": buzz_signer.__file__,
    "db_dir": str(m.DB_DIR),
    "alembic_ini": None if m.ALEMBIC_INI is None else str(m.ALEMBIC_INI),
    "sys_path": sys.path,
}))
"""


def shipped_files() -> set[str]:
    """Every file of db/ the wheel must hold, relative to db/."""
    return {
        p.relative_to(DB).as_posix()
        for pattern in SHIPPED_GLOBS
        for p in DB.glob(pattern)
        if p.is_file() and "__pycache__" not in p.parts
    }


def page_assets() -> list[Path]:
    """The built assets of the community's page, relative to REPO (generated, so ignored)."""
    assert (WEB / "manifest.json").is_file(), f"no page assets in {WEB}: run scripts/setup"
    return [p.relative_to(REPO) for p in WEB.iterdir() if p.is_file()]


def source_files() -> list[Path]:
    """The repository's files as a clone (plus work in progress) has them, relative to REPO."""
    git = shutil.which("git")
    if git and (REPO / ".git").exists():
        out = subprocess.run(
            [git, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=REPO,
            check=True,
            capture_output=True,
            timeout=60,
        ).stdout
        names = [Path(n) for n in out.decode().split("\0") if n]
        return [n for n in names if (REPO / n).is_file()]  # not files deleted in the tree
    ignore = shutil.ignore_patterns(*NOT_SOURCES)
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(REPO):
        skipped = ignore(dirpath, dirnames + filenames)
        dirnames[:] = [d for d in dirnames if d not in skipped]
        found += [Path(dirpath, f).relative_to(REPO) for f in filenames if f not in skipped]
    return found


def copy_sources(dest: Path, *, with_page: bool) -> None:
    """The repository's files as a clone has them; and the built page, as scripts/setup
    leaves it in a checkout, when `with_page`."""
    for rel in source_files() + (page_assets() if with_page else []):
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / rel, dest / rel)


def sdist_has_the_extension(sdist: Path, where: Path, cwd: Path, env: dict[str, str]) -> None:
    """The sdist holds the extension's source and how to build it: it compiles, unpacked."""
    with tarfile.open(sdist) as t:
        t.extractall(where, filter="data")
    (top,) = where.iterdir()
    extension = top / "db" / "extension"
    assert (extension / "README.md").is_file() and (extension / "buzz_bip340.control").is_file()
    assert not list(extension.glob("*.so")) and not list(extension.glob("*.o"))
    made = run(["make", "-C", extension], cwd, env, 300)
    assert made.returncode == 0, made.stdout + made.stderr
    assert (extension / "buzz_bip340.so").is_file()


def test_no_wheel_without_the_page(tmp_path: Path) -> None:
    """Built from sources whose page was never built (buzz_signer/web is generated), the
    wheel is refused, naming the way to build the page, rather than made without it (the
    check is setup.py's)."""
    src = tmp_path / "src"
    copy_sources(src, with_page=False)
    assert not (src / "buzz_signer" / "web").exists()
    built = run(
        [sys.executable, "-m", "build", "--wheel", "-o", tmp_path / "dist", src],
        tmp_path, clean_env(), 300,
    )  # fmt: skip
    assert built.returncode != 0
    assert "holds no page assets" in built.stdout + built.stderr, built.stdout + built.stderr
    assert not list(tmp_path.glob("dist/*.whl"))


def run(argv: list[str | Path], cwd: Path, env: dict[str, str], timeout: int):
    start = time.monotonic()
    done = subprocess.run(
        [str(a) for a in argv],
        cwd=cwd,
        env=env,
        check=False,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    shown = " ".join(str(a) if "\n" not in str(a) else "..." for a in argv[:5])
    print(f"{time.monotonic() - start:6.1f} s  {shown}")
    return done


def clean_env(**extra: str) -> dict[str, str]:
    """The environment without anything that would point Python at the checkout."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV")
    }
    env["PYTHONNOUSERSITE"] = "1"
    env.update(extra)
    return env


def is_inside(path: str | Path, parent: Path) -> bool:
    return Path(path).resolve().is_relative_to(parent.resolve())


@pytest.fixture
def scratch_db(admin_url: str) -> Iterator[str]:
    """A brand-new empty database (not our template), dropped afterwards."""
    name = f"pkg_wheel_{os.getpid()}_{secrets.token_hex(3)}"
    ident = sql.Identifier(name)
    with psycopg.connect(admin_url, autocommit=True) as c:
        c.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(ident))
        c.execute(sql.SQL("CREATE DATABASE {}").format(ident))
    try:
        yield url_with_dbname(admin_url, name)
    finally:
        with psycopg.connect(admin_url, autocommit=True) as c:
            c.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(ident))


def test_installed_wheel_migrates_a_new_database(tmp_path: Path, scratch_db: str) -> None:
    assert not is_inside(tmp_path, REPO), "the temporary directory must be outside the checkout"
    began = time.monotonic()

    # 1. A release as `python -m build` makes it from a copy of the sources: the sdist, then
    #    the wheel from the sdist.
    src, dist, venv, elsewhere = (tmp_path / d for d in ("src", "dist", "venv", "cwd"))
    copy_sources(src, with_page=True)
    elsewhere.mkdir()
    env = clean_env()
    built = run([sys.executable, "-m", "build", "-o", dist, src], elsewhere, env, 300)
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = dist.glob("buzz_membership-*.whl")
    (sdist,) = dist.glob("buzz_membership-*.tar.gz")
    with zipfile.ZipFile(wheel) as z:
        in_wheel = {
            n.removeprefix("buzz_signer/db/")
            for n in z.namelist()
            if n.startswith("buzz_signer/db/")
        }
        web_in_wheel = {n for n in z.namelist() if n.startswith("buzz_signer/web/")}
    assert shipped_files() <= in_wheel, sorted(shipped_files() - in_wheel)
    assert not [n for n in in_wheel if "__pycache__" in n or n.endswith(".pyc")]
    assert web_in_wheel == {p.as_posix() for p in page_assets()}
    sdist_has_the_extension(sdist, tmp_path / "unpacked", elsewhere, env)

    # 2. A new virtualenv outside the checkout, with the wheel and its dependencies.
    made = run([sys.executable, "-m", "venv", "--without-pip", venv], elsewhere, env, 120)
    assert made.returncode == 0, made.stdout + made.stderr
    python, bindir = venv / "bin" / "python", venv / "bin"
    installed = run(
        [sys.executable, "-m", "pip", "--python", python, "install", "--no-input", wheel],
        cwd=elsewhere,
        env=env,
        timeout=600,
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr

    # 3. Python in that venv imports the installed package, never the checkout.
    env = clean_env(PATH=f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")
    probe = run([python, "-c", PROBE], elsewhere, env, 60)
    assert probe.returncode == 0, probe.stdout + probe.stderr
    where = json.loads(probe.stdout)
    assert is_inside(where["package"], venv), where
    assert is_inside(where["db_dir"], venv), where
    assert where["alembic_ini"] is None, where
    assert not [p for p in where["sys_path"] if p and is_inside(p, REPO)], where

    # 4. buzz-admin migrate, from elsewhere, on the new database; the version of both tools.
    migrated = run(
        [bindir / "buzz-admin", "migrate"], elsewhere, {**env, "DATABASE_URL": scratch_db}, 300
    )
    assert migrated.returncode == 0, migrated.stdout + migrated.stderr
    head = head_revision()
    assert migrated.stdout.strip() == f"empty -> {head}", migrated.stdout
    for tool in ("buzz-admin", "buzz-relay"):
        said = run([bindir / tool, "--version"], elsewhere, env, 60)
        assert said.stdout.strip() == f"{tool}, version {wheel.name.split('-')[1]}", said
    with psycopg.connect(scratch_db) as c:
        assert c.execute("SELECT to_regnamespace('buzz') IS NOT NULL").fetchone() == (True,)
        assert c.execute(
            "SELECT to_regprocedure('buzz.member_list(uuid)') IS NOT NULL"
        ).fetchone() == (True,)
        for schema in ("buzz", "buzz_private"):
            (count,) = c.execute(
                "SELECT count(*) FROM pg_proc p WHERE pronamespace = to_regnamespace(%s)"
                " AND NOT EXISTS (SELECT FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass"
                " AND d.objid = p.oid AND d.deptype = 'e')",  # not the extension's
                (schema,),
            ).fetchone()
            assert count == len(list((DB / "functions" / schema).glob("*.sql"))), schema
        assert c.execute("SELECT version_num FROM public.alembic_version").fetchall() == [(head,)]

    # 5. The installed buzz-relay serves a community's page and its assets from the wheel.
    relay = run([bindir / "buzz-relay", "--help"], elsewhere, env, 60)
    assert relay.returncode == 0, relay.stdout + relay.stderr
    serves_the_page(bindir, elsewhere, env, scratch_db)

    print(f"{time.monotonic() - began:6.1f} s  in all")


def serves_the_page(bindir: Path, cwd: Path, env: dict[str, str], db_url: str) -> None:
    key, host, port = RelayKey.generate(), "page.example.org", free_port()
    with Membership.connect(db_url, key) as mem:
        mem.create_community(host, "ab" * 32)
    proc = subprocess.Popen(
        [bindir / "buzz-relay", "--listen", f"127.0.0.1:{port}", "--community", host],
        cwd=cwd,
        env=env | {"DATABASE_URL": db_url, "BUZZ_RELAY_SECRET_KEY": key.secret_hex()},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
    )

    def get(path: str, accept: str = "*/*") -> tuple[int, bytes, str]:
        url = f"http://127.0.0.1:{port}{path}"
        request = urllib.request.Request(url, headers={"Accept": accept})
        with urllib.request.urlopen(request, timeout=5) as answer:
            return answer.status, answer.read(), answer.headers["Content-Type"]

    try:
        deadline = time.monotonic() + 30
        while True:
            assert proc.poll() is None, proc.communicate()[0].decode(errors="replace")
            try:
                get("/healthz")
                break
            except OSError:
                assert time.monotonic() < deadline, "the installed buzz-relay did not start"
                time.sleep(0.1)
        status, page, content_type = get("/", "text/html")
        assert (status, content_type) == (200, "text/html; charset=utf-8")
        assert f'<h1 id="community-name">{host}</h1>'.encode() in page
        assert b'<p id="member-count">1 member</p>' in page
        manifest = json.loads((WEB / "manifest.json").read_text())
        for name in manifest.values():
            assert f"/assets/{name}".encode() in page, name
            status, body, _ = get(f"/assets/{name}")
            assert (status, body) == (200, (WEB / name).read_bytes()), name
    finally:
        proc.terminate()
        proc.wait(10)
