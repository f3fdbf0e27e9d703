-- buzz.add_relay_member(p_community uuid, p_pubkey text, p_role text DEFAULT 'member',
--                       p_added_by text DEFAULT NULL) -> text
-- Adds a member with role 'member' or 'admin'. An explicit add by an owner or admin lifts a
-- ban of the pubkey (ban_pubkey), whatever the outcome.
-- Outcomes: 'added'; 'already_member' (no member change, the role is left as it is).
-- Raises: BZIPK, BZIRL ('owner' included: see bootstrap_owner), 22023 (p_added_by), BZISO,
-- BZNCM, BZARC. Locks: community FOR KEY SHARE, the ban lock shared (lock_bans), the ban
-- row, the new member row.
CREATE OR REPLACE FUNCTION buzz.add_relay_member(
    p_community uuid, p_pubkey text, p_role text DEFAULT 'member', p_added_by text DEFAULT NULL)
RETURNS text
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_pubkey text := buzz_private.normalize_pubkey(p_pubkey, 'p_pubkey');
    v_role text := buzz_private.normalize_role(p_role, ARRAY['admin', 'member']);
    v_added_by text := buzz_private.normalize_actor(p_added_by, 'p_added_by');
BEGIN
    PERFORM buzz_private.require_read_committed();
    PERFORM buzz_private.lock_community(p_community);
    PERFORM buzz_private.lock_bans(p_community, false);
    DELETE FROM buzz_private.banned_pubkeys b
    WHERE b.community_id = p_community AND b.pubkey = v_pubkey;
    INSERT INTO buzz_private.relay_members (community_id, pubkey, role, added_by)
    VALUES (p_community, v_pubkey, v_role, v_added_by)
    ON CONFLICT (community_id, pubkey) DO NOTHING;
    RETURN CASE WHEN FOUND THEN 'added' ELSE 'already_member' END;
END
$$;
ALTER FUNCTION buzz.add_relay_member(uuid, text, text, text) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.add_relay_member(uuid, text, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.add_relay_member(uuid, text, text, text) TO buzz_writer;
COMMENT ON FUNCTION buzz.add_relay_member(uuid, text, text, text) IS
    'Adds a member or admin: added | already_member.';
