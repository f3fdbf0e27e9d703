-- buzz_node.insert_events(p_ids text[], p_sigs text[], p_community uuid) -> SETOF json
-- On the worker that holds p_community (delegated): buzz_private.insert_events for it.
CREATE OR REPLACE FUNCTION buzz_node.insert_events(p_ids text[], p_sigs text[], p_community uuid)
RETURNS SETOF json
LANGUAGE sql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT * FROM buzz_private.insert_events(p_ids, p_sigs, p_community)
$$;
ALTER FUNCTION buzz_node.insert_events(text[], text[], uuid) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_node.insert_events(text[], text[], uuid) FROM PUBLIC;
COMMENT ON FUNCTION buzz_node.insert_events(text[], text[], uuid) IS
    'On the worker of one community: phase two of its list write.';
