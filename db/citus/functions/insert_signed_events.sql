-- buzz.insert_signed_events(p_ids text[], p_sigs text[]), as a Citus coordinator runs it
--   -> SETOF json
--
-- Replaces the one-server form on a cluster (buzz_signer/citus.py). The same contract: one
-- id and signature per row of the last prepare, in its order. Each community's share goes to
-- buzz_node.insert_events on its worker, which checks the ids and signatures and stores the
-- events; then this transaction's marks here are settled, and its COMMIT passes the guard.
-- The lists and role events made live are announced when it commits (announce_routed).
CREATE OR REPLACE FUNCTION buzz.insert_signed_events(p_ids text[], p_sigs text[])
RETURNS SETOF json
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_xid xid8 := pg_catalog.pg_current_xact_id_if_assigned();
    v_communities uuid[];  -- the community of each prepared row, by position
    v_count integer;
    v_from integer := 1;
    v_to integer;
    v_event json;
BEGIN
    WITH taken AS (
        DELETE FROM buzz_private.tx_prepared_events e WHERE e.xid = v_xid
        RETURNING e.position, e.community_id
    )
    SELECT coalesce(pg_catalog.array_agg(t.community_id ORDER BY t.position), '{}')
    INTO v_communities
    FROM taken t;
    v_count := pg_catalog.cardinality(v_communities);
    IF p_ids IS NULL OR p_sigs IS NULL
       OR pg_catalog.array_ndims(p_ids) > 1 OR pg_catalog.array_ndims(p_sigs) > 1
       OR pg_catalog.cardinality(p_ids) <> v_count
       OR pg_catalog.cardinality(p_sigs) <> v_count THEN
        RAISE EXCEPTION 'expected % ids and % signatures, one per prepared event; got % and %',
                v_count, v_count,
                coalesce(pg_catalog.cardinality(p_ids)::text, 'NULL'),
                coalesce(pg_catalog.cardinality(p_sigs)::text, 'NULL')
            USING ERRCODE = 'BZSTL',
                  HINT = 'Sign every row of the last buzz.prepare_membership_events, in order.';
    END IF;
    -- Each community's rows are consecutive (prepare returned them so).
    WHILE v_from <= v_count LOOP
        v_to := v_from;
        WHILE v_to < v_count AND v_communities[v_to + 1] = v_communities[v_from] LOOP
            v_to := v_to + 1;
        END LOOP;
        FOR v_event IN
            EXECUTE 'SELECT * FROM buzz_node.insert_events($1, $2, $3)'
            USING p_ids[v_from:v_to], p_sigs[v_from:v_to], v_communities[v_from]
        LOOP
            IF (v_event->>'kind')::integer IN (13534, 33534, 5) THEN
                -- The address: the list, or the role of a definition (d) or deletion (a).
                INSERT INTO buzz_private.tx_announcements AS a
                    (xid, community_id, address, id, kind, created_at)
                VALUES (v_xid, v_communities[v_from],
                        CASE (v_event->>'kind')::integer
                            WHEN 13534 THEN ''
                            WHEN 33534 THEN v_event->'tags'->1->>1
                            ELSE pg_catalog.split_part(v_event->'tags'->1->>1, ':', 3) END,
                        v_event->>'id', (v_event->>'kind')::integer,
                        (v_event->>'created_at')::bigint)
                ON CONFLICT (xid, community_id, address) DO UPDATE
                    SET id = EXCLUDED.id, kind = EXCLUDED.kind, created_at = EXCLUDED.created_at;
            END IF;
            RETURN NEXT v_event;
        END LOOP;
        v_from := v_to + 1;
    END LOOP;
    DELETE FROM buzz_private.tx_pending_lists p WHERE p.xid = v_xid;
END
$$;
ALTER FUNCTION buzz.insert_signed_events(text[], text[]) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.insert_signed_events(text[], text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.insert_signed_events(text[], text[]) TO buzz_writer;
COMMENT ON FUNCTION buzz.insert_signed_events(text[], text[]) IS
    'Phase two of a list write: stores the signed events and makes the new lists live.';
