-- buzz_node.prepare_events(p_relay_pubkey text, p_community uuid, p_rebuild boolean)
--   -> TABLE(community_id uuid, id text, kind integer, created_at bigint, serialized text)
-- On the worker that holds p_community (delegated), in the caller's transaction there: what
-- buzz_private.prepare_events returns for it. p_rebuild: the coordinator marked it for a new
-- list (republish, rotation), which is marked here too first. Not by mark_for_list, which
-- voids every event this transaction prepared here: a rotation prepares several communities
-- of this worker, one call each, and each keeps its own (prepare_events replaces only its
-- community's).
CREATE OR REPLACE FUNCTION buzz_node.prepare_events(
    p_relay_pubkey text, p_community uuid, p_rebuild boolean)
RETURNS TABLE (community_id uuid, id text, kind integer, created_at bigint, serialized text)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF p_rebuild THEN
        INSERT INTO buzz_private.tx_pending_lists AS p (xid, community_id, rebuild)
        VALUES (pg_catalog.pg_current_xact_id(), p_community, true)
        ON CONFLICT ON CONSTRAINT tx_pending_lists_pkey DO UPDATE SET rebuild = true
            WHERE NOT p.rebuild;
    END IF;
    RETURN QUERY SELECT * FROM buzz_private.prepare_events(p_relay_pubkey, p_community);
END
$$;
ALTER FUNCTION buzz_node.prepare_events(text, uuid, boolean) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_node.prepare_events(text, uuid, boolean) FROM PUBLIC;
COMMENT ON FUNCTION buzz_node.prepare_events(text, uuid, boolean) IS
    'On the worker of one community: phase one of its list write.';
