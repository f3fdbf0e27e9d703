-- buzz.relay_member(p_community uuid, p_pubkey text)
--   -> TABLE(pubkey text, role text, added_by text, joined_at timestamptz, roles text[])
-- One committed member of a community, as relay_members gives it, read by its primary key
-- (a relay asks who is calling on every NIP-86 call and member's write: a look-up, not a scan
-- of the members); no row when the pubkey is no member (or NULL).
-- Raises: BZIPK (p_pubkey not 64 hexadecimal characters).
CREATE OR REPLACE FUNCTION buzz.relay_member(p_community uuid, p_pubkey text)
RETURNS TABLE (pubkey text, role text, added_by text, joined_at timestamptz, roles text[])
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT m.pubkey, m.role, m.added_by, m.joined_at, m.roles
    FROM buzz_private.relay_members m
    WHERE m.community_id = p_community
      AND m.pubkey = (SELECT buzz_private.normalize_pubkey(p_pubkey, 'p_pubkey')
                      WHERE p_pubkey IS NOT NULL);
END;
ALTER FUNCTION buzz.relay_member(uuid, text) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.relay_member(uuid, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.relay_member(uuid, text) TO buzz_reader;
COMMENT ON FUNCTION buzz.relay_member(uuid, text) IS 'One member of a community, by primary key; no row for a non-member.';
