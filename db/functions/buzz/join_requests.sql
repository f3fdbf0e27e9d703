-- buzz.join_requests(p_community uuid)
--   -> TABLE(request_id text, pubkey text, note text, requested_at timestamptz)
-- The pending join requests (not rejected, not expired), oldest first. No rows for an unknown
-- community.
CREATE OR REPLACE FUNCTION buzz.join_requests(p_community uuid)
RETURNS TABLE (request_id text, pubkey text, note text, requested_at timestamptz)
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT r.request_id::text, r.pubkey::text, r.note::text, r.requested_at
    FROM buzz_private.join_requests r
    WHERE r.community_id = p_community
      AND r.rejected_at IS NULL
      AND r.requested_at >= pg_catalog.now() - interval '30 days'
    ORDER BY r.requested_at, r.request_id;
END;
ALTER FUNCTION buzz.join_requests(uuid) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.join_requests(uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.join_requests(uuid) TO buzz_reader;
COMMENT ON FUNCTION buzz.join_requests(uuid) IS 'The pending join requests, oldest first.';
