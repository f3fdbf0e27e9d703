-- buzz.unban_pubkey(p_community uuid, p_pubkey text) -> text
-- Lifts a ban: the pubkey may claim an invite or ask to join again. It does not make a
-- member. Not a membership write: no list.
-- Outcomes: 'unbanned'; 'not_banned' (no change).
-- Raises: BZIPK, BZNCM, BZARC. Locks: community FOR KEY SHARE, the ban row.
CREATE OR REPLACE FUNCTION buzz.unban_pubkey(p_community uuid, p_pubkey text)
RETURNS text
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_pubkey text := buzz_private.normalize_pubkey(p_pubkey, 'p_pubkey');
BEGIN
    PERFORM buzz_private.lock_community(p_community);
    DELETE FROM buzz_private.banned_pubkeys b
    WHERE b.community_id = p_community AND b.pubkey = v_pubkey;
    RETURN CASE WHEN FOUND THEN 'unbanned' ELSE 'not_banned' END;
END
$$;
ALTER FUNCTION buzz.unban_pubkey(uuid, text) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.unban_pubkey(uuid, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.unban_pubkey(uuid, text) TO buzz_writer;
COMMENT ON FUNCTION buzz.unban_pubkey(uuid, text) IS 'Lifts a ban: unbanned | not_banned.';
