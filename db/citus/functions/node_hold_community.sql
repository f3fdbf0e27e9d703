-- buzz_node.hold_community(p_community uuid, p_exclusive boolean) -> void
-- On the worker that holds p_community (delegated), for a path that runs on the coordinator:
-- the community lock (advisory (4, hashtext(community_id::text))), which every write of the
-- community there takes shared first (buzz_private.lock_community). delete_community takes it
-- exclusive, so that it waits for the writes under way and later ones wait for it and find no
-- community (BZNCM). transfer_ownership takes it exclusive too: it then waits for the writes
-- under way here before it takes the relay-key lock, rather than for their rows while holding
-- it (docs/scale-out.md). The locks its statements then take on the worker come after it, as
-- a write's do.
CREATE OR REPLACE FUNCTION buzz_node.hold_community(p_community uuid, p_exclusive boolean)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM buzz_private.bound_waits();
    IF p_exclusive THEN
        PERFORM pg_catalog.pg_advisory_xact_lock(4, pg_catalog.hashtext(p_community::text));
    ELSE
        PERFORM pg_catalog.pg_advisory_xact_lock_shared(4, pg_catalog.hashtext(p_community::text));
    END IF;
END
$$;
ALTER FUNCTION buzz_node.hold_community(uuid, boolean) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_node.hold_community(uuid, boolean) FROM PUBLIC;
COMMENT ON FUNCTION buzz_node.hold_community(uuid, boolean) IS
    'On the worker of one community: its community lock, for a path run on the coordinator.';
