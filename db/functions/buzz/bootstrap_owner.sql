-- buzz.bootstrap_owner(p_community uuid, p_pubkey text) -> text
-- Provisioning: makes p_pubkey the owner (joining if needed); any other owner becomes admin.
-- Outcomes: 'provisioned'; 'unchanged' (it already is the owner).
-- Raises: BZIPK, BZISO, BZNCM, BZARC.
-- Locks: ownership lock of the community, community FOR KEY SHARE, the new and the old
-- owner's rows FOR NO KEY UPDATE in pubkey order (role is not a key, so foreign-key readers
-- are never blocked).
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
    -- Before any member row, as a ban takes it: a ban under way would wait for a row this
    -- locks while this waits for the ban (lock_bans).
    PERFORM buzz_private.lock_bans(p_community, false);
    IF EXISTS (SELECT FROM buzz_private.relay_members m
               WHERE m.community_id = p_community AND m.pubkey = v_pubkey
                 AND m.role = 'owner') THEN
        RETURN 'unchanged';
    END IF;
    -- The rows in pubkey order, as a batch of adds takes them: the new owner's row is made
    -- (as a member) if missing, then it and the owner's are locked in order. Demoting the
    -- owner before making the row would hold one row while waiting for another: against a
    -- batch that made the new owner's row and goes on to the owner's, a deadlock.
    INSERT INTO buzz_private.relay_members (community_id, pubkey, role, added_by)
    VALUES (p_community, v_pubkey, 'member', 'bootstrap')
    ON CONFLICT (community_id, pubkey) DO NOTHING;
    PERFORM FROM buzz_private.relay_members m
    WHERE m.community_id = p_community AND (m.pubkey = v_pubkey OR m.role = 'owner')
    ORDER BY m.pubkey
    FOR NO KEY UPDATE;
    -- Demote first: at most one owner at any moment (relay_members_one_owner).
    UPDATE buzz_private.relay_members m SET role = 'admin'
    WHERE m.community_id = p_community AND m.role = 'owner';
    UPDATE buzz_private.relay_members m SET role = 'owner'
    WHERE m.community_id = p_community AND m.pubkey = v_pubkey;
    RETURN 'provisioned';
END
$$;
ALTER FUNCTION buzz.bootstrap_owner(uuid, text) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.bootstrap_owner(uuid, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.bootstrap_owner(uuid, text) TO buzz_writer;
COMMENT ON FUNCTION buzz.bootstrap_owner(uuid, text) IS
    'Makes a pubkey the owner, demoting any other owner to admin: provisioned | unchanged.';
