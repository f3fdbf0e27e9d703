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
DECLARE
    v_settings buzz_private.settings;
    v_name text;
    v_bound integer;
    v_current integer;
BEGIN
    SELECT s.* INTO v_settings FROM buzz_private.settings s;
    FOREACH v_name IN ARRAY ARRAY['idle_in_transaction_session_timeout', 'lock_timeout'] LOOP
        v_bound := CASE v_name WHEN 'lock_timeout' THEN v_settings.lock_timeout_ms
                               ELSE v_settings.idle_timeout_ms END;
        -- current_setting gives '0' (none), '1500ms', '2min', ...: all read as intervals.
        v_current := (pg_catalog.date_part('epoch', pg_catalog.current_setting(v_name)::interval)
                      * 1000)::integer;
        IF v_current = 0 OR v_current > v_bound THEN
            PERFORM pg_catalog.set_config(v_name, v_bound || 'ms', true);
        END IF;
    END LOOP;
END
$$;
ALTER FUNCTION buzz_private.bound_waits() OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.bound_waits() FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.bound_waits() IS
    'Tightens idle_in_transaction_session_timeout and lock_timeout for this transaction.';
