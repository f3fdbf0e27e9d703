-- buzz_private.normalize_address(p_address inet) -> cidr
-- An address or a network as blocked_ips keeps it: a network with no bit set beyond its mask
-- (10.0.0.0/8; a single address is its /32 or /128), and an IPv4-mapped IPv6 address or
-- network (::ffff:192.0.2.1) as the IPv4 one it maps, since the relay sees such a peer as its
-- IPv4 address.
-- Raises 22023 (invalid_parameter_value) for NULL and for an address with bits set beyond its
-- mask (10.0.0.1/8: say 10.0.0.0/8, or 10.0.0.1 for the one address).
CREATE OR REPLACE FUNCTION buzz_private.normalize_address(p_address inet)
RETURNS cidr
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_address inet := p_address;
BEGIN
    IF v_address IS NULL THEN
        RAISE EXCEPTION 'p_address must be an IPv4 or IPv6 address, or a network in CIDR notation'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF pg_catalog.family(v_address) = 6 AND pg_catalog.masklen(v_address) >= 96
       AND v_address <<= '::ffff:0.0.0.0/96'::inet THEN
        v_address := pg_catalog.set_masklen(
            '0.0.0.0'::inet + (v_address - '::ffff:0.0.0.0'::inet),
            pg_catalog.masklen(v_address) - 96);
    END IF;
    IF pg_catalog.host(v_address) <> pg_catalog.host(pg_catalog.network(v_address)) THEN
        RAISE EXCEPTION 'p_address has bits set beyond its mask'
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Give the network (10.0.0.0/8), or the address alone (10.0.0.1).';
    END IF;
    RETURN pg_catalog.network(v_address);
END
$$;
ALTER FUNCTION buzz_private.normalize_address(inet) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.normalize_address(inet) FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.normalize_address(inet) IS
    'An address or network as a cidr (IPv4-mapped IPv6 as IPv4), else 22023.';
