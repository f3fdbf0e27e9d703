-- buzz_private.member_tags(p_community, p_prefixes) -> TABLE(prefix, member_count, tags)
-- The list's member tags computed from relay_members, one row per two-hex-digit pubkey prefix
-- that has members (every prefix when p_prefixes is NULL), in NIP-01 bytes:
-- ',["member","<pubkey>","<role>"]' in pubkey order, the member's defined roles (kept
-- ascending) after the base role. Pubkeys are CHECKed lowercase hex and roles CHECKed words
-- and role ids, so plain concatenation is exactly what JSON.stringify would write:
-- nothing here ever needs escaping.
-- One index range scan per prefix (a LATERAL subquery with both bounds): the plan stays a
-- range scan whatever the statistics or the cached plan, and reads only the prefixes asked.
CREATE OR REPLACE FUNCTION buzz_private.member_tags(p_community uuid, p_prefixes text[])
RETURNS TABLE (prefix text, member_count integer, tags text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN QUERY
    SELECT pr.prefix, piece.member_count, piece.tags
    FROM pg_catalog.unnest(coalesce(
             p_prefixes,
             ARRAY(SELECT pg_catalog.lpad(pg_catalog.to_hex(i), 2, '0')
                   FROM pg_catalog.generate_series(0, 255) AS i))) AS pr (prefix)
    CROSS JOIN LATERAL (
        -- '0'..'9' < 'a'..'f' < 'g' in the "C" collation: [prefix, prefix || 'g') is the range.
        SELECT pg_catalog.count(*)::integer AS member_count,
               pg_catalog.string_agg(
                   ',["member","' || m.pubkey || '","' || m.role || '"'
                   || CASE WHEN pg_catalog.cardinality(m.roles) = 0 THEN ']'
                           ELSE ',"' || pg_catalog.array_to_string(m.roles, '","') || '"]' END,
                   '' ORDER BY m.pubkey) AS tags
        FROM buzz_private.relay_members m
        WHERE m.community_id = p_community
          AND m.pubkey >= (pr.prefix COLLATE "C")
          AND m.pubkey < ((pr.prefix || 'g') COLLATE "C")
    ) AS piece
    WHERE piece.member_count > 0;
END
$$;
ALTER FUNCTION buzz_private.member_tags(uuid, text[]) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.member_tags(uuid, text[]) FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.member_tags(uuid, text[]) IS
    'Member tags of a community from relay_members, per pubkey prefix, as NIP-01 JSON text.';
