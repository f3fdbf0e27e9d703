-- buzz_private.lock_relay_key(p_exclusive) -> void
-- Every prepare holds this lock shared until its transaction ends; rotate_relay_key takes it
-- exclusive. So a rotation waits for every transaction that prepared with the old key, and no
-- list signed by the old key can commit after the rotation has. Two-int key space, (3, 0).
CREATE OR REPLACE FUNCTION buzz_private.lock_relay_key(p_exclusive boolean)
RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF p_exclusive THEN
        PERFORM pg_catalog.pg_advisory_xact_lock(3, 0);
    ELSE
        PERFORM pg_catalog.pg_advisory_xact_lock_shared(3, 0);
    END IF;
END
$$;
ALTER FUNCTION buzz_private.lock_relay_key(boolean) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.lock_relay_key(boolean) FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.lock_relay_key(boolean) IS
    'Advisory lock (3, 0): shared by prepare, exclusive by rotate_relay_key.';
