-- buzz.blocked_ips(p_community uuid)
--   -> TABLE(address cidr, reason text, blocked_by text, blocked_at timestamptz)
-- The community's blocked addresses and networks (a single address as its /32 or /128), IPv4
-- before IPv6, each by address. No rows for an unknown community.
CREATE OR REPLACE FUNCTION buzz.blocked_ips(p_community uuid)
RETURNS TABLE (address cidr, reason text, blocked_by text, blocked_at timestamptz)
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT b.address, b.reason::text, b.blocked_by, b.blocked_at
    FROM buzz_private.blocked_ips b
    WHERE b.community_id = p_community
    ORDER BY b.address;
END;
ALTER FUNCTION buzz.blocked_ips(uuid) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.blocked_ips(uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.blocked_ips(uuid) TO buzz_reader;
COMMENT ON FUNCTION buzz.blocked_ips(uuid) IS
    'The community''s blocked addresses and networks, by address.';
