-- buzz.bootstrap_owner(p_community uuid, p_pubkey text) -> text
-- Provisioning: makes p_pubkey the owner (joining if needed); any other owner becomes admin.
-- Outcomes: 'provisioned'; 'unchanged' (it already is the owner).
-- Raises: BZIPK, BZISO, BZNCM, BZARC.
-- Locks: ownership lock of the community, community FOR KEY SHARE, the owner rows
-- FOR NO KEY UPDATE (role is not a key, so foreign-key readers are never blocked).
CREATE OR REPLACE FUNCTION buzz.bootstrap_owner(p_community uuid, p_pubkey text)
RETURNS text
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_pubkey text := buzz_private.normalize_pubkey(p_pubkey, 'p_pubkey');
BEGIN
    PERFORM buzz_private.require_read_committed();
    PERFORM buzz_private.lock_ownership(p_community);
    PERFORM buzz_private.lock_community(p_community);
    IF EXISTS (SELECT FROM buzz_private.relay_members m
               WHERE m.community_id = p_community AND m.pubkey = v_pubkey
                 AND m.role = 'owner') THEN
        RETURN 'unchanged';
    END IF;
    -- Demote first: at most one owner at any moment (relay_members_one_owner).
    UPDATE buzz_private.relay_members m SET role = 'admin'
    WHERE m.community_id = p_community AND m.role = 'owner';
    INSERT INTO buzz_private.relay_members AS m (community_id, pubkey, role, added_by)
    VALUES (p_community, v_pubkey, 'owner', 'bootstrap')
    ON CONFLICT (community_id, pubkey) DO UPDATE SET role = 'owner';
    RETURN 'provisioned';
END
$$;
ALTER FUNCTION buzz.bootstrap_owner(uuid, text) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.bootstrap_owner(uuid, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.bootstrap_owner(uuid, text) TO buzz_writer;
COMMENT ON FUNCTION buzz.bootstrap_owner(uuid, text) IS
    'Makes a pubkey the owner, demoting any other owner to admin: provisioned | unchanged.';
