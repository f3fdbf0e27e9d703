-- buzz.claim_relay_invite(p_community uuid, p_code text, p_pubkey text,
--                         p_policy_version text DEFAULT NULL)
--   -> TABLE(outcome text, use_count integer, uses_remaining integer)
-- A pubkey joins with an invite code (as 'member', added_by the invite's creator: the
-- community's invite tree), consuming one use. Codes are compared without regard to case.
-- Checked in order: 'invalid' (no such code in this community), 'banned' (ban_pubkey),
-- 'expired', 'already_member', 'exhausted', then 'joined'; only 'joined' consumes a use.
-- use_count and uses_remaining (NULL when unlimited) describe the invite after the call; both
-- NULL for 'invalid'. The policy acceptance is recorded for 'joined' and 'already_member'.
-- Raises: BZIPK, 22023 (p_policy_version), BZISO, BZNCM, BZARC.
-- Locks: community FOR KEY SHARE, the ban lock shared (lock_bans), the invite row FOR NO KEY
-- UPDATE, the new member row.
CREATE OR REPLACE FUNCTION buzz.claim_relay_invite(
    p_community uuid, p_code text, p_pubkey text, p_policy_version text DEFAULT NULL)
RETURNS TABLE (outcome text, use_count integer, uses_remaining integer)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_pubkey text := buzz_private.normalize_pubkey(p_pubkey, 'p_pubkey');
    v_policy_version text := buzz_private.check_policy_version(p_policy_version);
    v_invite buzz_private.relay_invites;
BEGIN
    PERFORM buzz_private.require_read_committed();
    PERFORM buzz_private.lock_community(p_community);
    PERFORM buzz_private.lock_bans(p_community, false);
    SELECT i.* INTO v_invite
    FROM buzz_private.relay_invites i
    WHERE i.community_id = p_community
      AND i.code_sha256 = pg_catalog.sha256(pg_catalog.convert_to(pg_catalog.lower(p_code), 'UTF8'))
    FOR NO KEY UPDATE;
    IF NOT FOUND THEN
        RETURN QUERY SELECT 'invalid'::text, NULL::integer, NULL::integer;
        RETURN;
    END IF;
    use_count := v_invite.use_count;
    uses_remaining := v_invite.max_uses - v_invite.use_count;

    IF EXISTS (SELECT FROM buzz_private.banned_pubkeys b
               WHERE b.community_id = p_community AND b.pubkey = v_pubkey) THEN
        outcome := 'banned';
    ELSIF v_invite.expires_at <= pg_catalog.clock_timestamp() THEN
        outcome := 'expired';
    ELSIF EXISTS (SELECT FROM buzz_private.relay_members m
                  WHERE m.community_id = p_community AND m.pubkey = v_pubkey) THEN
        outcome := 'already_member';
    ELSIF uses_remaining = 0 THEN
        outcome := 'exhausted';
    ELSE
        -- A concurrent join by another path may win the row: then it was already a member.
        INSERT INTO buzz_private.relay_members (community_id, pubkey, role, added_by)
        VALUES (p_community, v_pubkey, 'member', v_invite.created_by)
        ON CONFLICT (community_id, pubkey) DO NOTHING;
        IF FOUND THEN
            UPDATE buzz_private.relay_invites i SET use_count = i.use_count + 1
            WHERE i.community_id = p_community AND i.invite_id = v_invite.invite_id;
            outcome := 'joined';
            use_count := use_count + 1;
            uses_remaining := uses_remaining - 1;
        ELSE
            outcome := 'already_member';
        END IF;
    END IF;
    IF outcome IN ('joined', 'already_member') THEN
        PERFORM buzz_private.record_policy_acceptance(p_community, v_pubkey, v_policy_version);
    END IF;
    RETURN NEXT;
END
$$;
ALTER FUNCTION buzz.claim_relay_invite(uuid, text, text, text) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.claim_relay_invite(uuid, text, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.claim_relay_invite(uuid, text, text, text) TO buzz_writer;
COMMENT ON FUNCTION buzz.claim_relay_invite(uuid, text, text, text) IS
    'Joins with an invite: joined | already_member | banned | expired | exhausted | invalid.';
