-- buzz.communities() -> TABLE(community_id uuid, host text, created_at timestamptz,
--                             archived_at timestamptz)
-- Every community of the relay, by host: what an operator's tools list and verify. Not in the
-- contract's list of reads; added so that no tool needs to read buzz_private.
CREATE OR REPLACE FUNCTION buzz.communities()
RETURNS TABLE (community_id uuid, host text, created_at timestamptz, archived_at timestamptz)
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT c.community_id, c.host, c.created_at, c.archived_at
    FROM buzz_private.communities c
    ORDER BY c.host;
END;
ALTER FUNCTION buzz.communities() OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.communities() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.communities() TO buzz_reader;
COMMENT ON FUNCTION buzz.communities() IS 'Every community, by host.';
