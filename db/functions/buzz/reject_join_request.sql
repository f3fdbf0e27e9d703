-- buzz.reject_join_request(p_community uuid, p_request_id text, p_reason text DEFAULT NULL)
--   -> text
-- Turns a pending join request down. The rejection is kept 24 hours: the pubkey's next
-- request_membership before then answers 'rejected'. Not a membership write: no list.
-- Outcomes: 'rejected'; 'not_found' (no pending request with that id).
-- Raises: 22023 (p_request_id, p_reason), BZNCM, BZARC. Locks: community FOR KEY SHARE, the
-- request row.
CREATE OR REPLACE FUNCTION buzz.reject_join_request(
    p_community uuid, p_request_id text, p_reason text DEFAULT NULL)
RETURNS text
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_request_id text := buzz_private.normalize_event_id(p_request_id, 'p_request_id');
    v_reason text := buzz_private.normalize_note(p_reason, 'p_reason', 1000);
BEGIN
    PERFORM buzz_private.lock_community(p_community);
    UPDATE buzz_private.join_requests r
    SET rejected_at = pg_catalog.now(), rejection_reason = v_reason
    WHERE r.community_id = p_community AND r.request_id = v_request_id
      AND r.rejected_at IS NULL
      AND r.requested_at >= pg_catalog.now() - interval '30 days';
    RETURN CASE WHEN FOUND THEN 'rejected' ELSE 'not_found' END;
END
$$;
ALTER FUNCTION buzz.reject_join_request(uuid, text, text) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.reject_join_request(uuid, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.reject_join_request(uuid, text, text) TO buzz_writer;
COMMENT ON FUNCTION buzz.reject_join_request(uuid, text, text) IS
    'Rejects a pending join request: rejected | not_found.';
