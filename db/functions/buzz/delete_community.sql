-- buzz.delete_community(p_community uuid) -> text
-- Deletes a community with its members, list, events, invites, allowlist and policy
-- acceptances. No list and no 8001 events are written. Waits for membership writes under way
-- (their FOR KEY SHARE); writes that start later get BZNCM.
-- Outcomes: 'deleted'; 'not_found'. Raises: BZISO.
CREATE OR REPLACE FUNCTION buzz.delete_community(p_community uuid)
RETURNS text
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM buzz_private.require_read_committed();
    DELETE FROM buzz_private.communities c WHERE c.community_id = p_community;
    IF NOT FOUND THEN
        RETURN 'not_found';
    END IF;
    -- The cascade marked it through the member triggers; a deleted community owes no list.
    PERFORM buzz_private.forget_community_changes(pg_catalog.pg_current_xact_id(), p_community);
    RETURN 'deleted';
END
$$;
ALTER FUNCTION buzz.delete_community(uuid) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.delete_community(uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.delete_community(uuid) TO buzz_writer;
COMMENT ON FUNCTION buzz.delete_community(uuid) IS
    'Deletes a community and everything in it: deleted | not_found.';
