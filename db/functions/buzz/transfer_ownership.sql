-- buzz.transfer_ownership(p_community uuid, p_new_owner text,
--                         p_expected_owner text DEFAULT NULL) -> text
-- Hands the community to p_new_owner (who joins as owner if not a member: an 8000 event);
-- the previous owner stays as 'member'.
-- Outcomes, checked in this order: 'no_owner', 'already_owner' (so a retried transfer is
-- idempotent), 'owner_conflict' (p_expected_owner given and not the owner), 'limit_reached'
-- (the new owner already owns max_communities_per_owner communities), then 'transferred'.
-- Raises: BZIPK, BZISO, BZNCM, BZARC.
-- Locks: ownership lock of the community, owner-limit lock of the new owner, community
-- FOR KEY SHARE, both owner rows FOR NO KEY UPDATE.
CREATE OR REPLACE FUNCTION buzz.transfer_ownership(
    p_community uuid, p_new_owner text, p_expected_owner text DEFAULT NULL)
RETURNS text
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_new_owner text := buzz_private.normalize_pubkey(p_new_owner, 'p_new_owner');
    v_expected text;
    v_owner text;
BEGIN
    IF p_expected_owner IS NOT NULL THEN
        v_expected := buzz_private.normalize_pubkey(p_expected_owner, 'p_expected_owner');
    END IF;
    PERFORM buzz_private.require_read_committed();
    PERFORM buzz_private.lock_ownership(p_community);
    PERFORM buzz_private.lock_owner_limit(v_new_owner);
    PERFORM buzz_private.lock_community(p_community);
    -- Before any member row, as a ban takes it: a ban under way would wait for a row this
    -- locks while this waits for the ban (lock_bans).
    PERFORM buzz_private.lock_bans(p_community, false);

    -- Read without a row lock: the ownership lock already keeps every other ownership change
    -- out, and no other write touches the owner's row. The rows are locked below, in order.
    SELECT m.pubkey::text INTO v_owner
    FROM buzz_private.relay_members m
    WHERE m.community_id = p_community AND m.role = 'owner';
    IF NOT FOUND THEN
        RETURN 'no_owner';
    ELSIF v_owner = v_new_owner THEN
        RETURN 'already_owner';
    ELSIF v_expected IS NOT NULL AND v_expected <> v_owner THEN
        RETURN 'owner_conflict';
    ELSIF (SELECT pg_catalog.count(*) FROM buzz_private.relay_members m
           WHERE m.pubkey = v_new_owner AND m.role = 'owner')
          >= (SELECT s.max_communities_per_owner FROM buzz_private.settings s) THEN
        RETURN 'limit_reached';
    END IF;

    -- Both member rows, locked in pubkey order like a batch of adds takes them: the new
    -- owner's row is made (as a member) if missing, so that it can be locked in its turn.
    -- Out of order, a batch holding one and a transfer holding the other would deadlock.
    INSERT INTO buzz_private.relay_members (community_id, pubkey, role, added_by)
    VALUES (p_community, v_new_owner, 'member', 'transfer')
    ON CONFLICT (community_id, pubkey) DO NOTHING;
    PERFORM FROM buzz_private.relay_members m
    WHERE m.community_id = p_community AND m.pubkey IN (v_owner, v_new_owner)
    ORDER BY m.pubkey
    FOR NO KEY UPDATE;
    UPDATE buzz_private.relay_members m SET role = 'member'
    WHERE m.community_id = p_community AND m.pubkey = v_owner;
    UPDATE buzz_private.relay_members m SET role = 'owner'
    WHERE m.community_id = p_community AND m.pubkey = v_new_owner;
    RETURN 'transferred';
END
$$;
ALTER FUNCTION buzz.transfer_ownership(uuid, text, text) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.transfer_ownership(uuid, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.transfer_ownership(uuid, text, text) TO buzz_writer;
COMMENT ON FUNCTION buzz.transfer_ownership(uuid, text, text) IS
    'Hands ownership over: transferred | already_owner | no_owner | owner_conflict | limit_reached.';
