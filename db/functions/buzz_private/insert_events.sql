-- buzz_private.insert_events(p_ids text[], p_sigs text[], p_community uuid) -> SETOF json
--
-- buzz.insert_signed_events, for what the last prepare_events of the transaction's
-- communities (p_community NULL) or of one of them returned.
--
-- Phase two of a list write. Takes one id and one signature per row of the last prepare, in
-- its order (a repeated id as often as it was prepared), all in one call. Stores the 8000/8001
-- events (replacing any this transaction stored before for the same community), makes each
-- new list the live one (replacing the old), and each role event the live one of its role
-- (a 33534 definition, or the kind 5 deletion of one), clears this transaction's commit guard, and
-- returns the signed events as compact NIP-01 JSON objects in prepare's order. With nothing prepared
-- and empty arrays it returns no rows. Each list that is live at COMMIT is announced then
-- (buzz_private.announce_list, announce_role_event).
--
-- Every signature is verified (BIP-340, over its prepared id, for the recorded relay key;
-- buzz_private.bip340_verify) before anything is stored: no writer can make an event live
-- that a client could not verify.
--
-- Raises: BZSTL (counts or ids differ from the last prepare: unknown, missing, reordered, or
-- prepared before a later change or before a rotation of the relay key), BZSIG (a signature
-- that is not 128 hex characters, or one that does not verify: the first such names its
-- position and the id it was given for).
--
-- As in prepare_events, no statement reads both the scratch tables and the community's.
CREATE OR REPLACE FUNCTION buzz_private.insert_events(
    p_ids text[], p_sigs text[], p_community uuid)
RETURNS SETOF json
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_xid xid8 := pg_catalog.pg_current_xact_id_if_assigned();
    v_events buzz_private.tx_prepared_events[];  -- the last prepare's rows, by position
    v_count integer;
    v_key text;
    v_bad_position integer;
    v_other_ids boolean;       -- an id that is not the prepared event's
    v_other_key boolean;       -- an event prepared with another key
    v_malformed_sigs boolean;  -- a signature that is not 128 hex characters
    v_replaced uuid[];         -- communities published before in this transaction ...
    v_replaced_at bigint[];    -- ... and the created_at of their events then
    v_event buzz_private.tx_prepared_events;
BEGIN
    -- Taken out of the scratch table in one statement, and read from the array from here on.
    -- Any error below rolls the DELETE back with the rest: a failed call leaves the prepared
    -- events in place for a corrected one.
    WITH taken AS (
        DELETE FROM buzz_private.tx_prepared_events e
        WHERE e.xid = v_xid AND (p_community IS NULL OR e.community_id = p_community)
        RETURNING e AS event
    )
    SELECT coalesce(pg_catalog.array_agg(t.event ORDER BY (t.event).position), '{}')
    INTO v_events
    FROM taken t;
    v_count := pg_catalog.cardinality(v_events);
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
    IF v_count = 0 THEN
        RETURN;
    END IF;
    -- Positions run 1..v_count (prepare numbers them), so p_ids and p_sigs line up with
    -- v_events element by element. ROWS FROM zips them: the event's columns, then the id
    -- given for it (a column named unnest). Zipped, not joined on the position:
    -- the planner takes each unnest for a few rows, and a nested loop over a batch of
    -- 10,000 cost seconds.
    -- The three checks below in one pass over the arrays (each raises in this order).
    SELECT k.pubkey::text,
           pg_catalog.bool_or(pg_catalog.lower(x.unnest) IS DISTINCT FROM x.id),
           pg_catalog.bool_or(x.pubkey IS DISTINCT FROM k.pubkey::text),
           (SELECT pg_catalog.bool_or(s.sig IS NULL OR pg_catalog.length(s.sig) <> 128
                                      OR s.sig ~ '[^0-9A-Fa-f]')
            FROM pg_catalog.unnest(p_sigs) AS s (sig))
    INTO v_key, v_other_ids, v_other_key, v_malformed_sigs
    FROM ROWS FROM (pg_catalog.unnest(v_events), pg_catalog.unnest(p_ids)) AS x
         LEFT JOIN buzz_private.relay_key k ON true
    GROUP BY k.pubkey;
    IF v_other_ids THEN
        RAISE EXCEPTION 'the ids are not those of the events prepared last in this transaction'
            USING ERRCODE = 'BZSTL',
                  HINT = 'Members changed after prepare, or the order differs: prepare again '
                         'and sign what it returns.';
    END IF;
    -- A rotation in this same transaction after prepare: those events name the old key.
    IF v_other_key THEN
        RAISE EXCEPTION 'the events were prepared with a key that is no longer the relay key'
            USING ERRCODE = 'BZSTL',
                  HINT = 'Prepare again with the new relay key and sign what it returns.';
    END IF;
    IF v_malformed_sigs THEN
        RAISE EXCEPTION 'every element of p_sigs must be a BIP-340 signature: 128 hexadecimal characters'
            USING ERRCODE = 'BZSIG',
                  HINT = 'Pass the 64-byte Schnorr signature of each prepared id as hex, in prepare''s order.';
    END IF;
    -- Every signature, for its prepared id and the relay key, all in one call (which spreads
    -- a large batch over the CPUs).
    v_bad_position := buzz_private.bip340_first_invalid(
        ARRAY(SELECT pg_catalog.decode(s.sig, 'hex')
              FROM pg_catalog.unnest(p_sigs) WITH ORDINALITY AS s (sig, n) ORDER BY s.n),
        ARRAY(SELECT pg_catalog.decode(e.id, 'hex')
              FROM pg_catalog.unnest(v_events) AS e ORDER BY e.position),
        pg_catalog.decode(v_key, 'hex'));
    IF v_bad_position > 0 THEN
        RAISE EXCEPTION 'p_sigs[%] does not verify for prepared event % and the relay key',
                v_bad_position, v_events[v_bad_position].id
            USING ERRCODE = 'BZSIG',
                  DETAIL = 'Nothing was stored.',
                  HINT = 'Sign each prepared id (32 bytes) with the relay key as BIP-340 Schnorr, in prepare''s order.';
    END IF;

    -- Published before in this transaction: those events are replaced by these, which count
    -- from the transaction's start. One list and one set of events per community. They are
    -- the community's events at that list's created_at (no other list of the community has
    -- it, and none can commit while this transaction holds the list lock). Then these are
    -- the published ones.
    -- One statement for the scratch tables: the earlier publication of each community with
    -- a list or a role event here (8000/8001 events come only with a list) taken out, and
    -- the commit guard satisfied (every change recorded so far is covered).
    WITH replaced AS (
        DELETE FROM buzz_private.tx_published_events t
        WHERE t.xid = v_xid
          AND t.community_id IN (SELECT e.community_id FROM pg_catalog.unnest(v_events) AS e
                                 WHERE e.kind NOT IN (8000, 8001))
        RETURNING t.community_id, t.created_at
    ), settled AS (
        DELETE FROM buzz_private.tx_pending_lists p
        WHERE p.xid = v_xid AND (p_community IS NULL OR p.community_id = p_community)
    )
    SELECT pg_catalog.array_agg(r.community_id), pg_catalog.array_agg(r.created_at)
    INTO v_replaced, v_replaced_at
    FROM replaced r;
    FOR v_i IN 1 .. coalesce(pg_catalog.cardinality(v_replaced), 0) LOOP
        DELETE FROM buzz_private.membership_events m
        WHERE m.community_id = v_replaced[v_i] AND m.created_at = v_replaced_at[v_i];
    END LOOP;
    INSERT INTO buzz_private.tx_published_events (xid, community_id, created_at)
    SELECT v_xid, e.community_id, e.created_at
    FROM pg_catalog.unnest(v_events) AS e
    WHERE e.kind = 13534;

    IF p_community IS NULL AND v_count > 8 THEN
        -- A batch: one statement stores the rest.
        WITH signed AS (
            SELECT x.community_id, x.position, x.id, x.pubkey, x.kind, x.created_at,
                   x.member_pubkey, x.role_id, x.tags, pg_catalog.lower(x.unnest) AS sig
            FROM ROWS FROM (pg_catalog.unnest(v_events), pg_catalog.unnest(p_sigs)) AS x
        ),
        live_roles AS (
            INSERT INTO buzz_private.role_events AS r
                (community_id, role_id, kind, id, pubkey, created_at, tags, sig)
            SELECT s.community_id, s.role_id, s.kind, s.id, s.pubkey, s.created_at, s.tags, s.sig
            FROM signed s
            WHERE s.kind IN (33534, 5)
            ON CONFLICT (community_id, role_id) DO UPDATE
                SET kind = EXCLUDED.kind, id = EXCLUDED.id, pubkey = EXCLUDED.pubkey,
                    created_at = EXCLUDED.created_at, tags = EXCLUDED.tags, sig = EXCLUDED.sig
        ),
        live AS (
            INSERT INTO buzz_private.member_lists AS l (community_id, id, pubkey, created_at, sig)
            SELECT s.community_id, s.id, s.pubkey, s.created_at, s.sig
            FROM signed s
            WHERE s.kind = 13534
            ON CONFLICT (community_id) DO UPDATE
                SET id = EXCLUDED.id, pubkey = EXCLUDED.pubkey,
                    created_at = EXCLUDED.created_at, sig = EXCLUDED.sig
        )
        INSERT INTO buzz_private.membership_events
            (community_id, id, pubkey, created_at, kind, member_pubkey, sig)
        SELECT s.community_id, s.id, s.pubkey, s.created_at, s.kind, s.member_pubkey, s.sig
        FROM signed s
        WHERE s.kind IN (8000, 8001)
        ORDER BY s.position;
    ELSE
        -- A row at a time: a few events (a statement of three inserts costs more to start
        -- than two of one), or one community's on its Citus worker, which Citus sends to the
        -- community's shard, where an INSERT ... SELECT would reach every shard.
        FOR v_i IN 1 .. v_count LOOP
            v_event := v_events[v_i];
            IF v_event.kind IN (8000, 8001) THEN
                INSERT INTO buzz_private.membership_events
                    (community_id, id, pubkey, created_at, kind, member_pubkey, sig)
                VALUES (v_event.community_id, v_event.id, v_event.pubkey, v_event.created_at,
                        v_event.kind, v_event.member_pubkey, pg_catalog.lower(p_sigs[v_i]));
            ELSIF v_event.kind IN (33534, 5) THEN
                INSERT INTO buzz_private.role_events AS r
                    (community_id, role_id, kind, id, pubkey, created_at, tags, sig)
                VALUES (v_event.community_id, v_event.role_id, v_event.kind, v_event.id,
                        v_event.pubkey, v_event.created_at, v_event.tags,
                        pg_catalog.lower(p_sigs[v_i]))
                ON CONFLICT (community_id, role_id) DO UPDATE
                    SET kind = EXCLUDED.kind, id = EXCLUDED.id, pubkey = EXCLUDED.pubkey,
                        created_at = EXCLUDED.created_at, tags = EXCLUDED.tags,
                        sig = EXCLUDED.sig;
            ELSE
                INSERT INTO buzz_private.member_lists AS l
                    (community_id, id, pubkey, created_at, sig)
                VALUES (v_event.community_id, v_event.id, v_event.pubkey, v_event.created_at,
                        pg_catalog.lower(p_sigs[v_i]))
                ON CONFLICT (community_id) DO UPDATE
                    SET id = EXCLUDED.id, pubkey = EXCLUDED.pubkey,
                        created_at = EXCLUDED.created_at, sig = EXCLUDED.sig;
            END IF;
        END LOOP;
    END IF;

    -- The signed events, in prepare's order, as the compact NIP-01 text whose tags are the
    -- signed bytes: a list's as prepare kept them (else from its stored pieces, which prepare
    -- wrote), an 8000/8001's from its member, a role event's as prepare kept them.
    RETURN QUERY
        SELECT buzz_private.event_json(
                   x.id, x.pubkey, x.created_at, x.kind,
                   CASE WHEN x.kind = 13534
                        THEN coalesce(buzz_private.kept_list_tags(x.id),
                                      buzz_private.list_tags(x.community_id))
                        WHEN x.kind IN (8000, 8001)
                        THEN buzz_private.member_event_tags(x.member_pubkey)
                        ELSE x.tags END,
                   pg_catalog.lower(x.unnest))
        FROM ROWS FROM (pg_catalog.unnest(v_events), pg_catalog.unnest(p_sigs)) AS x
        ORDER BY x.position;
END
$$;
ALTER FUNCTION buzz_private.insert_events(text[], text[], uuid) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.insert_events(text[], text[], uuid) FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.insert_events(text[], text[], uuid) IS
    'insert_signed_events, of the transaction''s communities or of one of them.';
