-- buzz_private.lock_ownership(p_community) -> void, as a Citus cluster runs it
--
-- Replaces the one-server form (buzz_signer/citus.py): the same lock, (1, hashtext(community
-- id)), always on the community's worker. transfer_ownership runs on the coordinator and
-- bootstrap_owner on the worker; a lock each took on its own node would not serialize them.
CREATE OR REPLACE FUNCTION buzz_private.lock_ownership(p_community uuid)
RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF (SELECT g.groupid = 0 FROM pg_catalog.pg_dist_local_group g) THEN
        -- On the coordinator: the worker's (SELECT * FROM, which Citus delegates).
        EXECUTE 'SELECT * FROM buzz_node.lock_ownership($1)' USING p_community;
    ELSE
        PERFORM pg_catalog.pg_advisory_xact_lock(1, pg_catalog.hashtext(p_community::text));
    END IF;
END
$$;
ALTER FUNCTION buzz_private.lock_ownership(uuid) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.lock_ownership(uuid) FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.lock_ownership(uuid) IS
    'Advisory lock (1, hash) serializing ownership changes of a community, on its worker.';
