-- buzz.unassign_role(p_community uuid, p_pubkey text, p_role text) -> text
-- Takes a defined role from a member; the list is rewritten in the same transaction.
-- Outcomes: 'unassigned'; 'not_assigned', 'not_member' (no change). A role the community
-- does not define is held by nobody: 'not_assigned'.
-- Raises: BZIPK, BZIRL (malformed role id, or a base role), BZISO, BZNCM, BZARC.
-- Locks: community FOR KEY SHARE, the member row FOR NO KEY UPDATE.
CREATE OR REPLACE FUNCTION buzz.unassign_role(p_community uuid, p_pubkey text, p_role text)
RETURNS text
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_pubkey text := buzz_private.normalize_pubkey(p_pubkey, 'p_pubkey');
    v_role text := buzz_private.normalize_role_id(p_role, false);
BEGIN
    PERFORM buzz_private.require_read_committed();
    PERFORM buzz_private.lock_community(p_community);
    -- Before any member row, as a ban takes it: a ban under way would wait for a row this
    -- locks while this waits for the ban (lock_bans).
    PERFORM buzz_private.lock_bans(p_community, false);
    UPDATE buzz_private.relay_members m SET roles = pg_catalog.array_remove(m.roles, v_role)
    WHERE m.community_id = p_community AND m.pubkey = v_pubkey AND m.roles @> ARRAY[v_role];
    IF FOUND THEN
        RETURN 'unassigned';
    END IF;
    RETURN CASE WHEN buzz_private.member_role(p_community, v_pubkey) IS NULL THEN 'not_member'
                ELSE 'not_assigned' END;
END
$$;
ALTER FUNCTION buzz.unassign_role(uuid, text, text) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.unassign_role(uuid, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.unassign_role(uuid, text, text) TO buzz_writer;
COMMENT ON FUNCTION buzz.unassign_role(uuid, text, text) IS
    'Takes a defined role from a member: unassigned | not_assigned | not_member.';
