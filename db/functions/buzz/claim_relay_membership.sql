-- buzz.claim_relay_membership(p_community uuid, p_pubkey text,
--                             p_policy_version text DEFAULT NULL) -> text
-- A pubkey joins an open community as 'member' (added_by 'claim'). Records its acceptance of
-- the policy version when one is given, whether or not it was already a member.
-- Outcomes: 'joined'; 'already_member' (no member change); 'banned' (ban_pubkey: no change,
-- no acceptance recorded).
-- Raises: BZIPK, 22023 (p_policy_version), BZISO, BZNCM, BZARC.
-- Locks: community FOR KEY SHARE, the ban lock shared (lock_bans), the new member row.
CREATE OR REPLACE FUNCTION buzz.claim_relay_membership(
    p_community uuid, p_pubkey text, p_policy_version text DEFAULT NULL)
RETURNS text
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_pubkey text := buzz_private.normalize_pubkey(p_pubkey, 'p_pubkey');
    v_policy_version text := buzz_private.check_policy_version(p_policy_version);
    v_joined boolean;
BEGIN
    PERFORM buzz_private.require_read_committed();
    PERFORM buzz_private.lock_community(p_community);
    PERFORM buzz_private.lock_bans(p_community, false);
    IF EXISTS (SELECT FROM buzz_private.banned_pubkeys b
               WHERE b.community_id = p_community AND b.pubkey = v_pubkey) THEN
        RETURN 'banned';
    END IF;
    INSERT INTO buzz_private.relay_members (community_id, pubkey, role, added_by)
    VALUES (p_community, v_pubkey, 'member', 'claim')
    ON CONFLICT (community_id, pubkey) DO NOTHING;
    v_joined := FOUND;
    PERFORM buzz_private.record_policy_acceptance(p_community, v_pubkey, v_policy_version);
    RETURN CASE WHEN v_joined THEN 'joined' ELSE 'already_member' END;
END
$$;
ALTER FUNCTION buzz.claim_relay_membership(uuid, text, text) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.claim_relay_membership(uuid, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.claim_relay_membership(uuid, text, text) TO buzz_writer;
COMMENT ON FUNCTION buzz.claim_relay_membership(uuid, text, text) IS
    'A pubkey joins as member: joined | already_member | banned.';
