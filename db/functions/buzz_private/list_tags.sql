-- buzz_private.list_tags(p_community) -> text
-- The live list's tags as NIP-01 JSON text: ["-"] and then the stored pieces in prefix order.
-- These are the bytes that were signed; served and hashed as they are.
CREATE OR REPLACE FUNCTION buzz_private.list_tags(p_community uuid)
RETURNS text
-- The brackets join the aggregate as rows of their own: concatenating them to its 870 kB
-- result afterwards would copy it twice.
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    -- The pieces as a range of the primary key: a plan that reads them by the index whatever
    -- the statistics say of the communities, which a write keeps for the session
    -- (docs/design.md, "Plans the write keeps"). The id as well, by which Citus routes it.
    RETURN (SELECT pg_catalog.string_agg(t.tags, '' ORDER BY t.prefix COLLATE "C")
            FROM (SELECT p.prefix, p.tags
                  FROM buzz_private.member_list_pieces p
                  WHERE p.community_id = p_community
                    AND (p.community_id, p.prefix) > (p_community, '')
                    AND (p.community_id, p.prefix) < (p_community, '~')
                  UNION ALL
                  -- '' sorts before every prefix and '~' after: both are 2 hex characters.
                  VALUES ('', '[["-"]'), ('~', ']')) AS t (prefix, tags));
END
$$;
ALTER FUNCTION buzz_private.list_tags(uuid) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.list_tags(uuid) FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.list_tags(uuid) IS
    'Tags of a community''s list, from its stored pieces, as NIP-01 JSON text.';
