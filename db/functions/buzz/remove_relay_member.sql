-- buzz.remove_relay_member(p_community uuid, p_pubkey text) -> text
-- Removes a member or admin. The owner is never removed (transfer ownership first).
-- Outcomes: 'removed'; 'not_member', 'is_owner' (no change).
-- Raises: BZIPK, BZISO, BZNCM, BZARC. Locks: community FOR KEY SHARE, the member row FOR UPDATE.
CREATE OR REPLACE FUNCTION buzz.remove_relay_member(p_community uuid, p_pubkey text)
RETURNS text
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_pubkey text := buzz_private.normalize_pubkey(p_pubkey, 'p_pubkey');
BEGIN
    PERFORM buzz_private.require_read_committed();
    PERFORM buzz_private.lock_community(p_community);
    -- The role condition is rechecked on the newest row version if a concurrent transfer
    -- made this pubkey the owner while we waited for its row.
    DELETE FROM buzz_private.relay_members m
    WHERE m.community_id = p_community AND m.pubkey = v_pubkey AND m.role <> 'owner';
    IF FOUND THEN
        RETURN 'removed';
    END IF;
    RETURN CASE WHEN buzz_private.member_role(p_community, v_pubkey) IS NULL THEN 'not_member'
                ELSE 'is_owner' END;
END
$$;
ALTER FUNCTION buzz.remove_relay_member(uuid, text) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.remove_relay_member(uuid, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.remove_relay_member(uuid, text) TO buzz_writer;
COMMENT ON FUNCTION buzz.remove_relay_member(uuid, text) IS
    'Removes a member or admin: removed | not_member | is_owner.';
