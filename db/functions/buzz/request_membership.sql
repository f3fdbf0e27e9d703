-- buzz.request_membership(p_community uuid, p_pubkey text, p_request_id text,
--                         p_note text DEFAULT NULL) -> text
-- Someone without an invite asks to join (a kind 28934 without a claim; p_request_id is its
-- event id, p_note what it said, at most 1,000 characters). The community's join policy
-- answers: 'open' adds them at once as 'member' (added_by 'open'); 'request' keeps the request
-- pending until an owner or admin approves (approve_join_request) or rejects it; 'invite'
-- refuses. Requests are bounded here, without a sweep: a pending request expires after 30
-- days, a rejection is kept 24 hours (the pubkey may ask again after it), and a community
-- keeps at most 1,000 pending requests (a new one drops the oldest).
-- Outcomes, checked in order: 'banned', 'already_member', 'closed' (policy invite),
-- 'already_requested' (one pending request per pubkey), 'rejected' (rejected less than 24
-- hours ago), then 'joined' (open) or 'requested' (request). Only 'joined' changes members.
-- Raises: BZIPK, 22023 (p_request_id, p_note), BZISO, BZNCM, BZARC.
-- Locks: community FOR KEY SHARE, the ban lock shared (lock_bans), the request or member row.
CREATE OR REPLACE FUNCTION buzz.request_membership(
    p_community uuid, p_pubkey text, p_request_id text, p_note text DEFAULT NULL)
RETURNS text
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_pubkey text := buzz_private.normalize_pubkey(p_pubkey, 'p_pubkey');
    v_request_id text := buzz_private.normalize_event_id(p_request_id, 'p_request_id');
    v_note text := buzz_private.normalize_note(p_note, 'p_note', 1000);
    v_policy text;
    v_rejected_at timestamptz;
    v_now timestamptz := pg_catalog.now();
BEGIN
    PERFORM buzz_private.require_read_committed();
    PERFORM buzz_private.lock_community(p_community);
    PERFORM buzz_private.lock_bans(p_community, false);
    IF EXISTS (SELECT FROM buzz_private.banned_pubkeys b
               WHERE b.community_id = p_community AND b.pubkey = v_pubkey) THEN
        RETURN 'banned';
    END IF;
    IF buzz_private.member_role(p_community, v_pubkey) IS NOT NULL THEN
        RETURN 'already_member';
    END IF;
    SELECT coalesce(pg_catalog.max(p.join_policy), 'invite') INTO v_policy
    FROM buzz_private.community_profiles p
    WHERE p.community_id = p_community;
    IF v_policy = 'invite' THEN
        RETURN 'closed';
    END IF;

    -- Expire what is past its time: the rows of this community only, oldest first by index.
    -- The 30 days bound pending requests only: a rejection is kept its full 24 hours even
    -- when the request it answered was made nearly 30 days ago.
    DELETE FROM buzz_private.join_requests r
    WHERE r.community_id = p_community
      AND ((r.rejected_at IS NULL AND r.requested_at < v_now - interval '30 days')
           OR r.rejected_at < v_now - interval '24 hours');
    SELECT r.rejected_at INTO v_rejected_at
    FROM buzz_private.join_requests r
    WHERE r.community_id = p_community AND r.pubkey = v_pubkey
    FOR UPDATE;
    IF FOUND THEN
        RETURN CASE WHEN v_rejected_at IS NULL THEN 'already_requested' ELSE 'rejected' END;
    END IF;

    IF v_policy = 'open' THEN
        -- A concurrent join by another path may win the row: then it was already a member.
        INSERT INTO buzz_private.relay_members (community_id, pubkey, role, added_by)
        VALUES (p_community, v_pubkey, 'member', 'open')
        ON CONFLICT (community_id, pubkey) DO NOTHING;
        RETURN CASE WHEN FOUND THEN 'joined' ELSE 'already_member' END;
    END IF;

    -- At most 1,000 pending: the oldest beyond 999 make room for this one.
    DELETE FROM buzz_private.join_requests r
    WHERE r.community_id = p_community
      AND r.request_id IN (SELECT o.request_id
                           FROM buzz_private.join_requests o
                           WHERE o.community_id = p_community AND o.rejected_at IS NULL
                           ORDER BY o.requested_at DESC, o.request_id DESC
                           OFFSET 999);
    -- A concurrent request of the same pubkey (or the same event again) keeps the first.
    INSERT INTO buzz_private.join_requests (community_id, request_id, pubkey, note)
    VALUES (p_community, v_request_id, v_pubkey, v_note)
    ON CONFLICT DO NOTHING;
    RETURN CASE WHEN FOUND THEN 'requested' ELSE 'already_requested' END;
END
$$;
ALTER FUNCTION buzz.request_membership(uuid, text, text, text) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.request_membership(uuid, text, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.request_membership(uuid, text, text, text) TO buzz_writer;
COMMENT ON FUNCTION buzz.request_membership(uuid, text, text, text) IS
    'Asks to join under the join policy: joined | requested | already_member'
    ' | already_requested | rejected | banned | closed.';
