-- buzz.relay_members(p_community uuid)
--   -> TABLE(pubkey text, role text, added_by text, joined_at timestamptz, roles text[])
-- The committed members of a community, ordered by pubkey, each with the defined roles held
-- (ascending; '{}' for none); no rows for an unknown community.
CREATE OR REPLACE FUNCTION buzz.relay_members(p_community uuid)
RETURNS TABLE (pubkey text, role text, added_by text, joined_at timestamptz, roles text[])
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT m.pubkey, m.role, m.added_by, m.joined_at, m.roles
    FROM buzz_private.relay_members m
    WHERE m.community_id = p_community
    ORDER BY m.pubkey;
END;
ALTER FUNCTION buzz.relay_members(uuid) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.relay_members(uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.relay_members(uuid) TO buzz_reader;
COMMENT ON FUNCTION buzz.relay_members(uuid) IS 'Members of a community with their defined roles, by pubkey.';
