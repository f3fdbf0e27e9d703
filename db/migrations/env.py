"""Alembic environment: one transaction for every pending migration and then the functions.

DATABASE_URL is handed to psycopg as it is (libpq URL or key=value form), so users never write
SQLAlchemy's 'postgresql+psycopg://' dialect prefix.
"""

import os

import psycopg
from alembic import context
from sqlalchemy import create_engine, pool

from buzz_signer import citus
from buzz_signer.migrate import apply_functions, is_citus

config = context.config


def database_url() -> str:
    url = config.attributes.get("database_url") or os.environ.get("DATABASE_URL")
    if not url:
        raise SystemExit("Set DATABASE_URL (for example postgresql://postgres@localhost/buzz).")
    return url


def is_upgrade() -> bool:
    # Functions are applied by upgrades only; 'alembic current' or 'history' must not write.
    cmd = getattr(config.cmd_opts, "cmd", None)
    if cmd is None:  # called from Python (buzz_signer.migrate.upgrade)
        return True
    return getattr(cmd[0], "__name__", "") == "upgrade"


def run_migrations_online() -> None:
    url = database_url()
    engine = create_engine(
        "postgresql+psycopg://", creator=lambda: psycopg.connect(url), poolclass=pool.NullPool
    )
    with engine.connect() as connection:
        context.configure(connection=connection, target_metadata=None, transactional_ddl=True)
        with context.begin_transaction():
            context.run_migrations()
            # The function files are head's: applied when an upgrade reaches head (a database
            # left at an older revision may lack what they call, such as an extension).
            at = context.get_context().get_current_revision()
            at_head = at is not None and at == context.script.get_current_head()
            if is_upgrade() and at_head:
                apply_functions(connection.connection.driver_connection)
            driver = connection.connection.driver_connection
            citus_upgrade = is_upgrade() and at_head and is_citus(driver)
        if citus_upgrade:
            # After the commit, and outside a transaction: Citus runs these on the workers
            # in connections and transactions of their own.
            driver.commit()
            driver.autocommit = True
            citus.copy_scratch_tables(driver)


if context.is_offline_mode():
    raise SystemExit("Offline (--sql) mode is not supported: functions are applied from files.")
run_migrations_online()
