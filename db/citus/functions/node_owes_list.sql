-- buzz_node.owes_list(p_community uuid) -> boolean
-- On the worker that holds p_community (delegated): whether the caller's transaction changed
-- it there and has not inserted its signed list since (what the worker's commit guard,
-- buzz_private.check_list_signed, would refuse).
CREATE OR REPLACE FUNCTION buzz_node.owes_list(p_community uuid)
RETURNS boolean
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    -- Two statements: the scratch table is local, communities a Citus table.
    IF NOT EXISTS (SELECT FROM buzz_private.tx_pending_lists p
                   WHERE p.xid = pg_catalog.pg_current_xact_id_if_assigned()
                     AND p.community_id = p_community) THEN
        RETURN false;
    END IF;
    RETURN EXISTS (SELECT FROM buzz_private.communities c WHERE c.community_id = p_community);
END
$$;
ALTER FUNCTION buzz_node.owes_list(uuid) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_node.owes_list(uuid) FROM PUBLIC;
COMMENT ON FUNCTION buzz_node.owes_list(uuid) IS
    'On the worker of one community: whether this transaction owes it a signed list.';
