"""The database verifies signatures: the buzz_bip340 extension (db/extension), in buzz_private.

insert_signed_events refuses any signature that does not verify (BZSIG) and member_list_drift
reports a live list whose signature does not, through buzz_private.bip340_first_invalid(sigs,
msgs, pubkey) and bip340_verify(sig, msg, pubkey), C functions over libsecp256k1. The extension must be installed on the server first
(`make -C db/extension install`, which scripts/setup does); db/extension/README.md says how,
and what a managed PostgreSQL without it can do.

Functions follow the code (db/functions): downgrading below this revision needs the function
files of that revision too.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01
"""

from buzz_signer.migrate import run_sql

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_sql("""
DO $$
BEGIN
    -- A DBA whose PostgreSQL forbids C extensions may have created the functions already
    -- (db/extension/README.md): keep them.
    IF pg_catalog.to_regprocedure('buzz_private.bip340_verify(bytea, bytea, bytea)') IS NOT NULL
       AND pg_catalog.to_regprocedure('buzz_private.bip340_first_invalid(bytea[], bytea[], bytea)') IS NOT NULL THEN
        RETURN;
    END IF;
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_available_extensions WHERE name = 'buzz_bip340') THEN
        RAISE EXCEPTION 'the buzz_bip340 extension is not installed on this server'
            USING ERRCODE = '58P01',
                  HINT = 'Build and install it: make -C db/extension install '
                         '(needs libsecp256k1-dev and postgresql-server-dev); see db/extension/README.md.';
    END IF;
    CREATE EXTENSION buzz_bip340 WITH SCHEMA buzz_private;
END
$$;
REVOKE ALL ON FUNCTION buzz_private.bip340_verify(bytea, bytea, bytea) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz_private.bip340_verify(bytea, bytea, bytea) TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.bip340_first_invalid(bytea[], bytea[], bytea) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz_private.bip340_first_invalid(bytea[], bytea[], bytea) TO buzz_owner;
""")


def downgrade() -> None:
    # CASCADE: the functions that call bip340_verify go with it; those of revision 0002 come
    # from that revision's function files (see above).
    run_sql("DROP EXTENSION IF EXISTS buzz_bip340 CASCADE;")
