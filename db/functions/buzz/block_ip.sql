-- buzz.block_ip(p_community uuid, p_address inet, p_reason text DEFAULT NULL,
--               p_blocked_by text DEFAULT NULL) -> text
-- Blocks an address, or a network in CIDR notation (IPv4 or IPv6), from the community: every
-- relay process answers its requests with HTTP 403 before any websocket (docs/relay.md says
-- which). An IPv4-mapped IPv6 address is blocked as its IPv4 address (normalize_address).
-- Overlapping networks are kept each as given. Not a membership write: no list. Every relay
-- process reloads the community's rules when it commits (NOTIFY buzz_moderation).
-- p_reason: at most 1,000 characters; p_blocked_by: who blocked (a pubkey or a short label).
-- At most 1,000 blocked addresses and networks per community (each connection is checked
-- against them; a network covers many addresses in one row).
-- Outcomes: 'blocked'; 'already_blocked' (no change: the first reason is kept).
-- Raises: 22023 (p_address NULL or with bits set beyond its mask, p_reason, p_blocked_by),
-- 54000 (the community has 1,000 blocked already), BZNCM, BZARC.
-- Locks: community FOR KEY SHARE, the moderation lock (lock_moderation), the new row.
CREATE OR REPLACE FUNCTION buzz.block_ip(
    p_community uuid, p_address inet, p_reason text DEFAULT NULL, p_blocked_by text DEFAULT NULL)
RETURNS text
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_address cidr := buzz_private.normalize_address(p_address);
    v_reason text := buzz_private.normalize_note(p_reason, 'p_reason', 1000);
    v_blocked_by text := buzz_private.normalize_actor(p_blocked_by, 'p_blocked_by');
BEGIN
    PERFORM buzz_private.lock_moderation(p_community);
    IF EXISTS (SELECT FROM buzz_private.blocked_ips b
               WHERE b.community_id = p_community AND b.address = v_address) THEN
        RETURN 'already_blocked';
    END IF;
    IF (SELECT count(*) FROM buzz_private.blocked_ips b
        WHERE b.community_id = p_community) >= 1000 THEN
        RAISE EXCEPTION 'the community has 1000 blocked addresses and networks, the most it may have'
            USING ERRCODE = 'program_limit_exceeded',
                  HINT = 'Block a network that covers several of them, or unblock some.';
    END IF;
    INSERT INTO buzz_private.blocked_ips (community_id, address, reason, blocked_by)
    VALUES (p_community, v_address, v_reason, v_blocked_by);
    PERFORM buzz_private.announce_moderation(p_community);
    RETURN 'blocked';
END
$$;
ALTER FUNCTION buzz.block_ip(uuid, inet, text, text) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.block_ip(uuid, inet, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.block_ip(uuid, inet, text, text) TO buzz_writer;
COMMENT ON FUNCTION buzz.block_ip(uuid, inet, text, text) IS
    'Blocks an address or network from the community: blocked | already_blocked.';
