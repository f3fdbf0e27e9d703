-- buzz_private.mark_for_list(p_communities, p_rebuild) -> void
-- Records that this transaction owes these communities a new list (the commit guard holds it
-- to that) and drops any events prepared before this change, so their signatures are refused
-- (BZSTL) and prepare must run again. p_rebuild: rebuild the list from every member row
-- (republish, key rotation) rather than from the pubkeys this transaction touched.
CREATE OR REPLACE FUNCTION buzz_private.mark_for_list(p_communities uuid[], p_rebuild boolean)
RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_xid xid8;
BEGIN
    IF pg_catalog.cardinality(p_communities) IS DISTINCT FROM 0 AND p_communities IS NOT NULL THEN
        v_xid := pg_catalog.pg_current_xact_id();
        WITH voided AS (
            DELETE FROM buzz_private.tx_prepared_events e WHERE e.xid = v_xid
        )
        INSERT INTO buzz_private.tx_pending_lists AS p (xid, community_id, rebuild)
        SELECT DISTINCT v_xid, c.community_id, p_rebuild
        FROM pg_catalog.unnest(p_communities) AS c (community_id)
        ON CONFLICT (xid, community_id) DO UPDATE SET rebuild = true
            WHERE EXCLUDED.rebuild AND NOT p.rebuild;
    END IF;
END
$$;
ALTER FUNCTION buzz_private.mark_for_list(uuid[], boolean) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.mark_for_list(uuid[], boolean) FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.mark_for_list(uuid[], boolean) IS
    'This transaction owes these communities a signed list; earlier prepared events are void.';
