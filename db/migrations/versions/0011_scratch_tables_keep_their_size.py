"""The scratch tables (tx_*) keep their size, so that the plans a write keeps for its session
read them by their primary keys (docs/design.md, "Plans the write keeps").

PostgreSQL costs a scan of a table by the pages it has when the statement is planned. A
scratch table holds only the rows of the transactions in flight, so after VACUUM has cut it
back to a page or two, a plan made then reads it whole instead of by its index; and a write
keeps that plan while the table grows again with the rows of the writes that follow, until
the next autovacuum. Measured side by side at 10 members: 5.8% more of the server's CPU per
write (docs/benchmark.md).

So each scratch table gets 16 pages or more now (rows inserted and deleted here), and VACUUM no
longer gives back the empty pages at their end (vacuum_truncate = off). A table of 16 pages
or more is read by its index whatever it holds. The rows are gone when this commits; the
pages stay, empty once vacuumed.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-03
"""

from buzz_signer.migrate import run_statements

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

# As they were at this revision (a later scratch table is a later migration's business).
SCRATCH_TABLES = (
    "buzz_private.tx_pending_lists",
    "buzz_private.tx_member_changes",
    "buzz_private.tx_prepared_events",
    "buzz_private.tx_published_events",
    "buzz_private.tx_role_changes",
)


def upgrade() -> None:
    run_statements(
        "\n".join(f"ALTER TABLE {t} SET (vacuum_truncate = off);" for t in SCRATCH_TABLES)
        + r"""
-- The commit guard would check each filler row of tx_pending_lists at COMMIT.
ALTER TABLE buzz_private.tx_pending_lists DISABLE TRIGGER USER;
-- Rows of transaction 0, which is never a transaction's id; more of each than 16 pages hold.
INSERT INTO buzz_private.tx_pending_lists (xid, community_id)
SELECT '0', gen_random_uuid() FROM generate_series(1, 3000);
INSERT INTO buzz_private.tx_member_changes (xid, community_id, pubkey, was_member)
SELECT '0', gen_random_uuid(), md5(i::text) || md5(i::text), false FROM generate_series(1, 3000) i;
INSERT INTO buzz_private.tx_prepared_events
    (xid, position, community_id, id, pubkey, kind, created_at)
SELECT '0', i, gen_random_uuid(), md5(i::text) || md5(i::text), md5(i::text) || md5(i::text),
       8000, 0
FROM generate_series(1, 3000) i;
INSERT INTO buzz_private.tx_published_events (xid, community_id, created_at)
SELECT '0', gen_random_uuid(), 0 FROM generate_series(1, 3000);
INSERT INTO buzz_private.tx_role_changes (xid, community_id, role_id)
SELECT '0', gen_random_uuid(), 'filler' FROM generate_series(1, 3000);
"""
        + "\n".join(f"DELETE FROM {t} WHERE xid = '0';" for t in SCRATCH_TABLES)
        + "\nALTER TABLE buzz_private.tx_pending_lists ENABLE TRIGGER USER;"
    )


def downgrade() -> None:
    run_statements("\n".join(f"ALTER TABLE {t} RESET (vacuum_truncate);" for t in SCRATCH_TABLES))
