-- buzz.remove_relay_member_if_role(p_community uuid, p_pubkey text, p_role text) -> text
-- Removes a member only if it has the given role (a guard against acting on a stale view).
-- Outcomes: 'removed'; 'not_member', 'role_mismatch', 'is_owner' (no change). The owner
-- answers 'is_owner' whatever p_role says: it is never removed. The members it brought in
-- stay, re-attached to its inviter, and its invites are revoked (release_departed).
-- Raises: BZIPK, BZIRL, BZISO, BZNCM, BZARC.
-- Locks: community FOR KEY SHARE; the member's row and those of the members it brought in, in
-- pubkey order, FOR UPDATE; its invites.
CREATE OR REPLACE FUNCTION buzz.remove_relay_member_if_role(
    p_community uuid, p_pubkey text, p_role text)
RETURNS text
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_pubkey text := buzz_private.normalize_pubkey(p_pubkey, 'p_pubkey');
    v_role text := buzz_private.normalize_role(p_role, ARRAY['owner', 'admin', 'member']);
    v_current text;
BEGIN
    PERFORM buzz_private.require_read_committed();
    PERFORM buzz_private.lock_community(p_community);
    -- Before any member row, as a ban takes it: a ban under way would wait for a row this
    -- locks while this waits for the ban (lock_bans).
    PERFORM buzz_private.lock_bans(p_community, false);
    IF buzz_private.remove_member(p_community, v_pubkey, v_role) THEN
        RETURN 'removed';
    END IF;
    v_current := buzz_private.member_role(p_community, v_pubkey);
    RETURN CASE WHEN v_current IS NULL THEN 'not_member'
                WHEN v_current = 'owner' THEN 'is_owner'
                ELSE 'role_mismatch' END;
END
$$;
ALTER FUNCTION buzz.remove_relay_member_if_role(uuid, text, text) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.remove_relay_member_if_role(uuid, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.remove_relay_member_if_role(uuid, text, text) TO buzz_writer;
COMMENT ON FUNCTION buzz.remove_relay_member_if_role(uuid, text, text) IS
    'Removes a member with the given role: removed | not_member | role_mismatch | is_owner.';
