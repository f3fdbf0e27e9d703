-- buzz_private.lock_ownership(p_community) -> void
-- Serializes ownership changes (bootstrap_owner, transfer_ownership) of one community: a
-- transaction-scoped advisory lock in the two-int key space, class 1. Taken before any row
-- lock, so every statement after it sees the owner that the previous change committed.
CREATE OR REPLACE FUNCTION buzz_private.lock_ownership(p_community uuid)
RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM pg_catalog.pg_advisory_xact_lock(1, pg_catalog.hashtext(p_community::text));
END
$$;
ALTER FUNCTION buzz_private.lock_ownership(uuid) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.lock_ownership(uuid) FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.lock_ownership(uuid) IS
    'Advisory lock (1, hash) serializing ownership changes of a community.';
