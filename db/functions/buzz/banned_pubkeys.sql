-- buzz.banned_pubkeys(p_community uuid)
--   -> TABLE(pubkey text, reason text, banned_by text, banned_at timestamptz)
-- The community's bans, by pubkey. No rows for an unknown community.
CREATE OR REPLACE FUNCTION buzz.banned_pubkeys(p_community uuid)
RETURNS TABLE (pubkey text, reason text, banned_by text, banned_at timestamptz)
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT b.pubkey::text, b.reason::text, b.banned_by, b.banned_at
    FROM buzz_private.banned_pubkeys b
    WHERE b.community_id = p_community
    ORDER BY b.pubkey;
END;
ALTER FUNCTION buzz.banned_pubkeys(uuid) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.banned_pubkeys(uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.banned_pubkeys(uuid) TO buzz_reader;
COMMENT ON FUNCTION buzz.banned_pubkeys(uuid) IS 'The community''s bans, by pubkey.';
