"""The local cluster's housekeeping that needs no server: its log is rotated at start."""

from __future__ import annotations

import pytest

from buzz_signer import localdb


@pytest.fixture
def cluster(tmp_path, monkeypatch):
    c = localdb.LocalCluster(root=tmp_path / "pg")
    c._base = tmp_path / "pg"  # never the relocated /var/tmp directory, even as root
    c.log_dir.mkdir(parents=True)
    monkeypatch.setattr(localdb, "_LOG_ROTATE_BYTES", 100)
    return c


def test_a_log_past_the_limit_is_rotated_replacing_the_previous_one(cluster):
    rotated = cluster.logfile.with_name("postgresql.log.1")
    rotated.write_text("older\n")
    cluster.logfile.write_text("x" * 101)
    cluster._rotate_log()
    assert not cluster.logfile.exists()
    assert rotated.read_text() == "x" * 101


def test_a_log_within_the_limit_stays(cluster):
    cluster.logfile.write_text("x" * 100)
    cluster._rotate_log()
    assert cluster.logfile.read_text() == "x" * 100
    assert not cluster.logfile.with_name("postgresql.log.1").exists()
    cluster.logfile.unlink()
    cluster._rotate_log()  # no log yet: nothing to do
