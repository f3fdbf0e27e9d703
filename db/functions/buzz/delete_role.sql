-- buzz.delete_role(p_community uuid, p_role text) -> text
-- Deletes a defined role: takes it from every member holding it (so the list changes too)
-- and publishes the kind 5 deletion of its 33534, in the same transaction (prepare).
-- Outcomes: 'deleted'; 'not_found' (no such role: no change).
-- Raises: BZIRL (malformed role id, or a base role: those are never removed), BZISO, BZNCM,
-- BZARC.
-- Locks: community FOR KEY SHARE, the role's row (before any member row, as assign_role),
-- then the rows of the members holding it.
CREATE OR REPLACE FUNCTION buzz.delete_role(p_community uuid, p_role text)
RETURNS text
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_role text := buzz_private.normalize_role_id(p_role, false);
BEGIN
    PERFORM buzz_private.require_read_committed();
    PERFORM buzz_private.lock_community(p_community);
    -- Before any member row, as a ban takes it: a ban under way would wait for a row this
    -- locks while this waits for the ban (lock_bans).
    PERFORM buzz_private.lock_bans(p_community, false);
    -- The roles trigger (track_role_changes) takes the role from its holders, in a statement
    -- of its own: it sees the holders an assign_role we waited for committed.
    DELETE FROM buzz_private.roles r WHERE r.community_id = p_community AND r.role_id = v_role;
    RETURN CASE WHEN FOUND THEN 'deleted' ELSE 'not_found' END;
END
$$;
ALTER FUNCTION buzz.delete_role(uuid, text) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.delete_role(uuid, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.delete_role(uuid, text) TO buzz_writer;
COMMENT ON FUNCTION buzz.delete_role(uuid, text) IS
    'Deletes a defined role from the community and its holders: deleted | not_found.';
