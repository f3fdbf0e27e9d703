-- buzz.approve_join_request(p_community uuid, p_request_id text, p_approved_by text) -> text
-- An owner or admin lets a pending request's pubkey in: it becomes a 'member', added_by the
-- approver (p_approved_by: a pubkey or a short label), and the request is gone. Approving
-- works under any join policy (the request was made under 'request').
-- Outcomes: 'joined'; 'not_found' (no pending request with that id, expired ones included),
-- 'already_member' (the request is gone, members unchanged), 'banned' (no change).
-- Raises: 22023 (p_request_id, p_approved_by), BZISO, BZNCM, BZARC.
-- Locks: community FOR KEY SHARE, the ban lock shared (lock_bans), the request row FOR UPDATE,
-- the new member row.
CREATE OR REPLACE FUNCTION buzz.approve_join_request(
    p_community uuid, p_request_id text, p_approved_by text)
RETURNS text
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_request_id text := buzz_private.normalize_event_id(p_request_id, 'p_request_id');
    v_approved_by text := buzz_private.normalize_actor(p_approved_by, 'p_approved_by', true);
    v_pubkey text;
BEGIN
    PERFORM buzz_private.require_read_committed();
    PERFORM buzz_private.lock_community(p_community);
    PERFORM buzz_private.lock_bans(p_community, false);
    SELECT r.pubkey::text INTO v_pubkey
    FROM buzz_private.join_requests r
    WHERE r.community_id = p_community AND r.request_id = v_request_id
      AND r.rejected_at IS NULL
      AND r.requested_at >= pg_catalog.now() - interval '30 days'
    FOR UPDATE;
    IF NOT FOUND THEN
        RETURN 'not_found';
    END IF;
    IF EXISTS (SELECT FROM buzz_private.banned_pubkeys b
               WHERE b.community_id = p_community AND b.pubkey = v_pubkey) THEN
        RETURN 'banned';
    END IF;
    DELETE FROM buzz_private.join_requests r
    WHERE r.community_id = p_community AND r.request_id = v_request_id;
    INSERT INTO buzz_private.relay_members (community_id, pubkey, role, added_by)
    VALUES (p_community, v_pubkey, 'member', v_approved_by)
    ON CONFLICT (community_id, pubkey) DO NOTHING;
    RETURN CASE WHEN FOUND THEN 'joined' ELSE 'already_member' END;
END
$$;
ALTER FUNCTION buzz.approve_join_request(uuid, text, text) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.approve_join_request(uuid, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.approve_join_request(uuid, text, text) TO buzz_writer;
COMMENT ON FUNCTION buzz.approve_join_request(uuid, text, text) IS
    'Approves a pending join request: joined | not_found | already_member | banned.';
