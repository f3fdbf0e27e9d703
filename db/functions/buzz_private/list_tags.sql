-- buzz_private.list_tags(p_community) -> text
-- The live list's tags as NIP-01 JSON text: ["-"] and then the stored pieces in prefix order.
-- These are the bytes that were signed; served and hashed as they are.
CREATE OR REPLACE FUNCTION buzz_private.list_tags(p_community uuid)
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN '[["-"]'
       || coalesce((SELECT pg_catalog.string_agg(p.tags, '' ORDER BY p.prefix)
                    FROM buzz_private.member_list_pieces p
                    WHERE p.community_id = p_community), '')
       || ']';
ALTER FUNCTION buzz_private.list_tags(uuid) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.list_tags(uuid) FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.list_tags(uuid) IS
    'Tags of a community''s list, from its stored pieces, as NIP-01 JSON text.';
