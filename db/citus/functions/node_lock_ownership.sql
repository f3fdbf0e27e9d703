-- buzz_node.lock_ownership(p_community uuid) -> void
-- On the worker that holds p_community (delegated): its ownership lock
-- (buzz_private.lock_ownership), for transfer_ownership on the coordinator.
CREATE OR REPLACE FUNCTION buzz_node.lock_ownership(p_community uuid)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM buzz_private.lock_ownership(p_community);
END
$$;
ALTER FUNCTION buzz_node.lock_ownership(uuid) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_node.lock_ownership(uuid) FROM PUBLIC;
COMMENT ON FUNCTION buzz_node.lock_ownership(uuid) IS
    'On the worker of one community: its ownership lock, for transfer_ownership.';
