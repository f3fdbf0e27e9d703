-- buzz.community_id(p_host text) -> uuid
-- The community of a host (compared case-insensitively, port included), NULL if none.
CREATE OR REPLACE FUNCTION buzz.community_id(p_host text)
RETURNS uuid
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
-- Only printable ASCII can name a host: lower() of some other letters (U+212A) is ASCII.
RETURN (SELECT c.community_id FROM buzz_private.communities c
        WHERE c.host = pg_catalog.lower(p_host) COLLATE "C"
          AND p_host ~ '^[!-~]+$');
ALTER FUNCTION buzz.community_id(text) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.community_id(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.community_id(text) TO buzz_reader;
COMMENT ON FUNCTION buzz.community_id(text) IS 'The community of a host, or NULL.';
