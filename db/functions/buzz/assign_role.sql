-- buzz.assign_role(p_community uuid, p_pubkey text, p_role text) -> text
-- Gives a member a defined role; the list, whose member tags name it, is rewritten in the
-- same transaction (prepare).
-- Outcomes: 'assigned'; 'already_assigned', 'not_member' (no change).
-- Raises: BZIPK, BZIRL (malformed role id, a base role, or a role the community has not
-- defined), BZISO, BZNCM, BZARC.
-- Locks: community FOR KEY SHARE, the role's row FOR KEY SHARE (a delete_role waits, or is
-- waited for), then the member row FOR NO KEY UPDATE.
CREATE OR REPLACE FUNCTION buzz.assign_role(p_community uuid, p_pubkey text, p_role text)
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
    PERFORM FROM buzz_private.roles r
    WHERE r.community_id = p_community AND r.role_id = v_role
    FOR KEY SHARE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'p_role names no role that community % defines', p_community
            USING ERRCODE = 'BZIRL', HINT = 'Define it first with buzz.define_role.';
    END IF;
    UPDATE buzz_private.relay_members m
    SET roles = ARRAY(SELECT r FROM pg_catalog.unnest(m.roles || v_role) AS r ORDER BY r COLLATE "C")
    WHERE m.community_id = p_community AND m.pubkey = v_pubkey
      AND NOT m.roles @> ARRAY[v_role];
    IF FOUND THEN
        RETURN 'assigned';
    END IF;
    RETURN CASE WHEN buzz_private.member_role(p_community, v_pubkey) IS NULL THEN 'not_member'
                ELSE 'already_assigned' END;
END
$$;
ALTER FUNCTION buzz.assign_role(uuid, text, text) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.assign_role(uuid, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.assign_role(uuid, text, text) TO buzz_writer;
COMMENT ON FUNCTION buzz.assign_role(uuid, text, text) IS
    'Gives a member a defined role: assigned | already_assigned | not_member.';
