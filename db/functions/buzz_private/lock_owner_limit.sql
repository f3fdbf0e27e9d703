-- buzz_private.lock_owner_limit(p_pubkey) -> void
-- Serializes the per-owner community count of one pubkey (create_community and
-- transfer_ownership count, then add): a transaction-scoped advisory lock, two-int key space,
-- class 2. Taken after lock_ownership and before any row lock.
CREATE OR REPLACE FUNCTION buzz_private.lock_owner_limit(p_pubkey text)
RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM pg_catalog.pg_advisory_xact_lock(2, pg_catalog.hashtext(p_pubkey));
END
$$;
ALTER FUNCTION buzz_private.lock_owner_limit(text) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.lock_owner_limit(text) FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.lock_owner_limit(text) IS
    'Advisory lock (2, hash) serializing the community count of one owner.';
