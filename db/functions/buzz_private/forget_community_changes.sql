-- buzz_private.forget_community_changes(p_xid, p_community) -> void
-- Drops what transaction p_xid recorded for a community: when it deleted the community (no
-- list, no 8001 events), and at COMMIT once the community's list is published.
CREATE OR REPLACE FUNCTION buzz_private.forget_community_changes(p_xid xid8, p_community uuid)
RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    -- One statement (it runs at every commit): the scratch rows of each kind.
    WITH pending AS (
        DELETE FROM buzz_private.tx_pending_lists p
        WHERE p.xid = p_xid AND p.community_id = p_community
    ), members AS (
        DELETE FROM buzz_private.tx_member_changes ch
        WHERE ch.xid = p_xid AND ch.community_id = p_community
    ), roles AS (
        DELETE FROM buzz_private.tx_role_changes r
        WHERE r.xid = p_xid AND r.community_id = p_community
    )
    DELETE FROM buzz_private.tx_published_events t
    WHERE t.xid = p_xid AND t.community_id = p_community;
END
$$;
ALTER FUNCTION buzz_private.forget_community_changes(xid8, uuid) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.forget_community_changes(xid8, uuid) FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.forget_community_changes(xid8, uuid) IS
    'Forget what a transaction recorded for a community.';
