"""A write's own WAL records, read back with pg_waldump (bench.wal's ``wal_own_bytes@N``).
Its own module, so that bench.common's Bench can hold one without importing bench.wal."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import Any

import psycopg

from buzz_signer.localdb import LocalClusterError, find_bindir

BLCKSZ = 8192  # PostgreSQL's page size (checked against the server's block_size)


class WalDump:
    """A write's own WAL records, read back with pg_waldump: the records of its transaction
    (its commit record included) and any other record on this database's pages within its LSN
    span (page pruning, say). The LSN difference counts every database of the cluster, so
    others at work on a shared server add to it; this does not."""

    _RECORD = re.compile(
        r"len \(rec/tot\):\s*\d+/\s*(\d+), tx:\s*(\d+), lsn: ([0-9A-F]+/[0-9A-F]+),"
    )
    _REL = re.compile(r"rel \d+/(\d+)/\d+")
    _FPW = re.compile(r"\(FPW\); hole: offset: \d+, length: (\d+)(?:, compression saved: (\d+))?")

    def __init__(self, program: Path, wal_dir: Path, dboid: int) -> None:
        self.program, self.wal_dir, self.dboid = program, wal_dir, str(dboid)

    @classmethod
    def for_database(cls, su: psycopg.Connection[Any]) -> WalDump | None:
        try:
            program = find_bindir() / "pg_waldump"
            data_dir = Path(su.execute("SHOW data_directory").fetchone()[0])
        except (LocalClusterError, psycopg.Error):
            return None
        wal_dir = data_dir / "pg_wal"
        if not program.is_file() or not os.access(wal_dir, os.R_OK | os.X_OK):
            return None  # another machine's server, or one we may not read
        dboid = su.execute(
            "SELECT oid FROM pg_database WHERE datname = current_database()"
        ).fetchone()[0]
        if su.execute("SHOW block_size").fetchone()[0] != str(BLCKSZ):
            return None
        return cls(program, wal_dir, dboid)

    def own_bytes(self, before: str, after: str, xid: int) -> tuple[int, int] | None:
        """(all bytes, bytes less full-page images) of the write between LSNs `before` and
        `after` whose transaction is `xid`; None when its commit record could not be read (the
        segment already recycled, say). Called right after each write: on a busy cluster old
        segments go quickly."""
        try:
            r = subprocess.run(
                [str(self.program), "-b", "-p", str(self.wal_dir), "-s", before, "-e", after],
                capture_output=True,
                text=True,
                check=False,
                timeout=60,
                stdin=subprocess.DEVNULL,
            )
        except (OSError, subprocess.SubprocessError):
            return None
        # pg_waldump may end on an error past the last flushed record: what it read stands.
        # With -b, each record's block references follow it on lines of their own.
        total = images = 0
        committed = False
        record: list[Any] | None = None  # [bytes, tx, is commit, databases, image bytes]

        def count(rec: list[Any] | None) -> None:
            nonlocal total, images, committed
            if rec and (rec[1] == xid or self.dboid in rec[3]):
                total += rec[0]
                images += rec[4]
                committed |= rec[1] == xid and rec[2]

        for line in r.stdout.splitlines():
            m = self._RECORD.search(line)
            if m:
                count(record)
                record = [int(m[1]), int(m[2]), "desc: COMMIT" in line, set(), 0]
            elif record is None:
                continue
            record[3].update(self._REL.findall(line))
            fpw = self._FPW.search(line)
            if fpw:
                record[4] += BLCKSZ - int(fpw[1]) - int(fpw[2] or 0)
        count(record)
        return (total, total - images) if committed else None
