-- buzz.create_community(p_host text, p_owner text), as a Citus coordinator runs it
--   -> TABLE(community_id uuid, outcome text)
--
-- Replaces the one-server form on a cluster (buzz_signer/citus.py), which runs here as
-- buzz_node.create_community: it adds to the reference table communities, which only the
-- coordinator may write, and Citus sends its member and role rows to the new community's
-- worker. A created community is then marked for its list (buzz_private.mark_routed).
-- It takes the relay-key lock shared first, as the other changes of communities do on a
-- cluster (buzz_signer.citus.COORDINATOR_CHANGES): Citus locks a change of a reference table
-- as a change of the whole table, which a rotation, holding the relay-key lock, then waits for.
CREATE OR REPLACE FUNCTION buzz.create_community(p_host text, p_owner text)
RETURNS TABLE (community_id uuid, outcome text)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM buzz_private.lock_relay_key(false);
    SELECT c.community_id, c.outcome INTO community_id, outcome
    FROM buzz_node.create_community(p_host, p_owner) AS c;
    IF outcome = 'created' THEN
        PERFORM buzz_private.route_to(community_id);
        PERFORM buzz_private.mark_routed(community_id);
    END IF;
    RETURN NEXT;
END
$$;
ALTER FUNCTION buzz.create_community(text, text) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.create_community(text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.create_community(text, text) TO buzz_writer;
COMMENT ON FUNCTION buzz.create_community(text, text) IS
    'Creates a community with its owner: created | exists | host_taken | limit_reached.';
