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
    v_fresh_prefixes text[] COLLATE "C";  -- the pieces relay_members makes now
    v_fresh_counts integer[];
    v_fresh_tags text[];
    v_prefix text;
    v_emptied text[];   -- prefixes touched that have no member left
BEGIN
    IF NOT p_rebuild THEN
        SELECT pg_catalog.array_agg(DISTINCT pg_catalog.left(ch.pubkey, 2)) INTO v_prefixes
        FROM buzz_private.tx_member_changes ch
        WHERE ch.xid = p_xid AND ch.community_id = p_community;
        IF v_prefixes IS NULL THEN
            RETURN;
        END IF;
    END IF;

    -- The fresh pieces first, then the stored ones written from them, by statements of their
    -- own (on a Citus worker each then stays on the community's shard).
    SELECT pg_catalog.array_agg(t.prefix), pg_catalog.array_agg(t.member_count),
           pg_catalog.array_agg(t.tags)
    INTO v_fresh_prefixes, v_fresh_counts, v_fresh_tags
    FROM buzz_private.member_tags(p_community, v_prefixes) t;
    -- A row at a time (one piece, as a rule): Citus sends an INSERT of one row to its shard,
    -- where an INSERT ... SELECT would lock every shard of the table.
    FOR v_i IN 1 .. coalesce(pg_catalog.cardinality(v_fresh_prefixes), 0) LOOP
        INSERT INTO buzz_private.member_list_pieces AS p (community_id, prefix, member_count, tags)
        VALUES (p_community, v_fresh_prefixes[v_i], v_fresh_counts[v_i], v_fresh_tags[v_i])
        ON CONFLICT (community_id, prefix) DO UPDATE
            SET member_count = EXCLUDED.member_count, tags = EXCLUDED.tags
            WHERE p.tags IS DISTINCT FROM EXCLUDED.tags;
    END LOOP;
    -- The pieces whose pubkeys all left. Two statements, each with a plan kept for the session
    -- (docs/design.md, "Plans the write keeps"): one for a write, which names the prefixes it
    -- touched and runs only when one of them emptied, one for a rebuild.
    IF v_prefixes IS NULL THEN
        DELETE FROM buzz_private.member_list_pieces p
        WHERE p.community_id = p_community
          AND p.prefix <> ALL (coalesce(v_fresh_prefixes, '{}'));
        RETURN;
    END IF;
    FOREACH v_prefix IN ARRAY v_prefixes LOOP
        IF v_prefix <> ALL (coalesce(v_fresh_prefixes, '{}')) THEN
            v_emptied := pg_catalog.array_append(v_emptied, v_prefix);
        END IF;
    END LOOP;
    IF v_emptied IS NOT NULL THEN
        DELETE FROM buzz_private.member_list_pieces p
        WHERE p.community_id = p_community AND p.prefix = ANY (v_emptied);
    END IF;
END
$$;
ALTER FUNCTION buzz_private.rebuild_list_pieces(xid8, uuid, boolean) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.rebuild_list_pieces(xid8, uuid, boolean) FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.rebuild_list_pieces(xid8, uuid, boolean) IS
    'Rewrites the list pieces a transaction''s member changes touched (or all of them).';
