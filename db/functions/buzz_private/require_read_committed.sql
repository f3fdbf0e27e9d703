-- buzz_private.require_read_committed() -> void
-- Membership writes and prepare run under READ COMMITTED: each statement after the list lock
-- is granted must see the writers that committed before it. A REPEATABLE READ or SERIALIZABLE
-- snapshot is taken before the lock and would build a list missing their members. Raises BZISO.
CREATE OR REPLACE FUNCTION buzz_private.require_read_committed()
RETURNS void
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF pg_catalog.current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION 'membership writes need READ COMMITTED, not %',
                pg_catalog.upper(pg_catalog.current_setting('transaction_isolation'))
            USING ERRCODE = 'BZISO',
                  HINT = 'Start the transaction with BEGIN ISOLATION LEVEL READ COMMITTED.';
    END IF;
END
$$;
ALTER FUNCTION buzz_private.require_read_committed() OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.require_read_committed() FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.require_read_committed() IS
    'BZISO unless the transaction is READ COMMITTED.';
