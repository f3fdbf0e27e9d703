-- buzz.unblock_ip(p_community uuid, p_address inet) -> text
-- Lifts the block of exactly that address or network (as block_ip stored it: an
-- IPv4-mapped IPv6 address is its IPv4 address). A network that covers it stays blocked.
-- Not a membership write: no list. Every relay process reloads the community's rules when it
-- commits (NOTIFY buzz_moderation).
-- Outcomes: 'unblocked'; 'not_blocked' (no change).
-- Raises: 22023 (p_address NULL or with bits set beyond its mask), BZNCM, BZARC.
-- Locks: community FOR KEY SHARE, the moderation lock (lock_moderation), the row.
CREATE OR REPLACE FUNCTION buzz.unblock_ip(p_community uuid, p_address inet)
RETURNS text
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_address cidr := buzz_private.normalize_address(p_address);
BEGIN
    PERFORM buzz_private.lock_moderation(p_community);
    DELETE FROM buzz_private.blocked_ips b
    WHERE b.community_id = p_community AND b.address = v_address;
    IF NOT FOUND THEN
        RETURN 'not_blocked';
    END IF;
    PERFORM buzz_private.announce_moderation(p_community);
    RETURN 'unblocked';
END
$$;
ALTER FUNCTION buzz.unblock_ip(uuid, inet) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.unblock_ip(uuid, inet) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.unblock_ip(uuid, inet) TO buzz_writer;
COMMENT ON FUNCTION buzz.unblock_ip(uuid, inet) IS
    'Lifts the block of an address or network: unblocked | not_blocked.';
