-- buzz.banned_events(p_community uuid)
--   -> TABLE(event_id text, reason text, banned_by text, banned_at timestamptz)
-- The community's banned events, by event id. No rows for an unknown community.
CREATE OR REPLACE FUNCTION buzz.banned_events(p_community uuid)
RETURNS TABLE (event_id text, reason text, banned_by text, banned_at timestamptz)
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT b.event_id::text, b.reason::text, b.banned_by, b.banned_at
    FROM buzz_private.banned_events b
    WHERE b.community_id = p_community
    ORDER BY b.event_id;
END;
ALTER FUNCTION buzz.banned_events(uuid) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.banned_events(uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.banned_events(uuid) TO buzz_reader;
COMMENT ON FUNCTION buzz.banned_events(uuid) IS 'The community''s banned events, by event id.';
