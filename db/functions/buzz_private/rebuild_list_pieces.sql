-- buzz_private.rebuild_list_pieces(p_xid, p_community, p_rebuild) -> void
-- Brings the stored pieces of a community's list up to date with relay_members: the pieces of
-- the pubkeys transaction p_xid touched, or all of them when p_rebuild. Unchanged pieces are
-- not rewritten, so a write costs the WAL of one piece (about 3 kB at 10,000 members).
-- Called by prepare under the list lock.
CREATE OR REPLACE FUNCTION buzz_private.rebuild_list_pieces(
    p_xid xid8, p_community uuid, p_rebuild boolean)
RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_prefixes text[];  -- NULL: every prefix
BEGIN
    IF NOT p_rebuild THEN
        SELECT pg_catalog.array_agg(DISTINCT pg_catalog.left(ch.pubkey, 2)) INTO v_prefixes
        FROM buzz_private.tx_member_changes ch
        WHERE ch.xid = p_xid AND ch.community_id = p_community;
        IF v_prefixes IS NULL THEN
            RETURN;
        END IF;
    END IF;

    WITH fresh AS (
        SELECT t.prefix, t.member_count, t.tags
        FROM buzz_private.member_tags(p_community, v_prefixes) t
    ), upserted AS (
        INSERT INTO buzz_private.member_list_pieces AS p (community_id, prefix, member_count, tags)
        SELECT p_community, f.prefix, f.member_count, f.tags FROM fresh f
        ON CONFLICT (community_id, prefix) DO UPDATE
            SET member_count = EXCLUDED.member_count, tags = EXCLUDED.tags
            WHERE p.tags IS DISTINCT FROM EXCLUDED.tags
    )
    DELETE FROM buzz_private.member_list_pieces p
    WHERE p.community_id = p_community
      AND (v_prefixes IS NULL OR p.prefix = ANY (v_prefixes))
      AND p.prefix NOT IN (SELECT f.prefix FROM fresh f);
END
$$;
ALTER FUNCTION buzz_private.rebuild_list_pieces(xid8, uuid, boolean) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.rebuild_list_pieces(xid8, uuid, boolean) FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.rebuild_list_pieces(xid8, uuid, boolean) IS
    'Rewrites the list pieces a transaction''s member changes touched (or all of them).';
