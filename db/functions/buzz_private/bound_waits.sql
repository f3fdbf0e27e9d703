-- buzz_private.bound_waits() -> void
-- Bounds, for the rest of this transaction, how long it may sit idle holding its locks
-- (idle_in_transaction_session_timeout: a hung client's transaction is ended and its
-- community writable again) and how long it waits for a lock (lock_timeout: 55P03), from
-- settings.idle_timeout_ms and lock_timeout_ms. A tighter bound the caller set is kept.
-- Called first by every membership write and by prepare.
CREATE OR REPLACE FUNCTION buzz_private.bound_waits()
RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    -- One statement: this runs twice in every write. current_setting gives '0' (none),
    -- '1500ms', '2min', ...: all read as intervals.
    PERFORM pg_catalog.set_config(b.name, b.bound_ms || 'ms', true)
    FROM buzz_private.settings s,
         LATERAL (VALUES ('idle_in_transaction_session_timeout', s.idle_timeout_ms),
                         ('lock_timeout', s.lock_timeout_ms)) AS b (name, bound_ms)
    WHERE pg_catalog.current_setting(b.name)::interval
          NOT BETWEEN interval '1 ms' AND b.bound_ms * interval '1 ms';
END
$$;
ALTER FUNCTION buzz_private.bound_waits() OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.bound_waits() FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.bound_waits() IS
    'Tightens idle_in_transaction_session_timeout and lock_timeout for this transaction.';
