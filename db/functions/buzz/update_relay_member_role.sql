-- buzz.update_relay_member_role(p_community uuid, p_pubkey text, p_role text) -> text
-- Makes a member an admin or an admin a member. The owner's role changes only by transfer.
-- Outcomes: 'updated'; 'unchanged', 'not_member', 'is_owner' (no change).
-- Raises: BZIPK, BZIRL ('owner' included), BZISO, BZNCM, BZARC.
-- Locks: community FOR KEY SHARE, the member row FOR NO KEY UPDATE (role is not a key).
CREATE OR REPLACE FUNCTION buzz.update_relay_member_role(
    p_community uuid, p_pubkey text, p_role text)
RETURNS text
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_pubkey text := buzz_private.normalize_pubkey(p_pubkey, 'p_pubkey');
    v_role text := buzz_private.normalize_role(p_role, ARRAY['admin', 'member']);
    v_current text;
BEGIN
    PERFORM buzz_private.require_read_committed();
    PERFORM buzz_private.lock_community(p_community);
    -- Before any member row, as a ban takes it: a ban under way would wait for a row this
    -- locks while this waits for the ban (lock_bans).
    PERFORM buzz_private.lock_bans(p_community, false);
    UPDATE buzz_private.relay_members m SET role = v_role
    WHERE m.community_id = p_community AND m.pubkey = v_pubkey
      AND m.role <> 'owner' AND m.role <> v_role;
    IF FOUND THEN
        RETURN 'updated';
    END IF;
    v_current := buzz_private.member_role(p_community, v_pubkey);
    RETURN CASE WHEN v_current IS NULL THEN 'not_member'
                WHEN v_current = 'owner' THEN 'is_owner'
                ELSE 'unchanged' END;
END
$$;
ALTER FUNCTION buzz.update_relay_member_role(uuid, text, text) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.update_relay_member_role(uuid, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.update_relay_member_role(uuid, text, text) TO buzz_writer;
COMMENT ON FUNCTION buzz.update_relay_member_role(uuid, text, text) IS
    'Sets a member''s role to admin or member: updated | unchanged | not_member | is_owner.';
