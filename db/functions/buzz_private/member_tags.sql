-- buzz_private.member_tags(p_community, p_prefixes) -> TABLE(prefix, member_count, tags)
-- The list's member tags computed from relay_members, one row per two-hex-digit pubkey prefix
-- (all prefixes when p_prefixes is NULL), in NIP-01 bytes: ',["member","<pubkey>","<role>"]'
-- in pubkey order. Pubkeys are CHECKed lowercase hex and roles CHECKed words, so plain
-- concatenation is exactly what JSON.stringify would write: nothing here ever needs escaping.
CREATE OR REPLACE FUNCTION buzz_private.member_tags(p_community uuid, p_prefixes text[])
RETURNS TABLE (prefix text, member_count integer, tags text)
LANGUAGE sql STABLE
SET search_path = ''
BEGIN ATOMIC
    SELECT pg_catalog.left(m.pubkey, 2) COLLATE "C",
           pg_catalog.count(*)::integer,
           pg_catalog.string_agg(',["member","' || m.pubkey || '","' || m.role || '"]', ''
                                 ORDER BY m.pubkey)
    FROM buzz_private.relay_members m
    WHERE p_prefixes IS NULL AND m.community_id = p_community
    GROUP BY 1
    UNION ALL
    -- One index range per prefix: '0'..'9' < 'a'..'f' < 'g' in the "C" collation.
    SELECT pr.prefix,
           pg_catalog.count(*)::integer,
           pg_catalog.string_agg(',["member","' || m.pubkey || '","' || m.role || '"]', ''
                                 ORDER BY m.pubkey)
    FROM pg_catalog.unnest(p_prefixes) AS pr (prefix)
    JOIN buzz_private.relay_members m
      ON m.community_id = p_community
     AND m.pubkey >= (pr.prefix COLLATE "C")
     AND m.pubkey < ((pr.prefix || 'g') COLLATE "C")
    WHERE p_prefixes IS NOT NULL
    GROUP BY pr.prefix;
END;
ALTER FUNCTION buzz_private.member_tags(uuid, text[]) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.member_tags(uuid, text[]) FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.member_tags(uuid, text[]) IS
    'Member tags of a community from relay_members, per pubkey prefix, as NIP-01 JSON text.';
