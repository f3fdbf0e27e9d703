-- buzz.insert_signed_events(p_ids text[], p_sigs text[]) -> SETOF json
--
-- Phase two of a list write. Takes one id and one signature per row of the last prepare, in
-- its order (a repeated id as often as it was prepared), all in one call. Stores the 8000/8001
-- events (replacing any this transaction stored before for the same community), makes each
-- new list the live one (replacing the old), clears this transaction's commit guard, and
-- returns the signed events as compact NIP-01 JSON objects in prepare's order. With nothing prepared
-- and empty arrays it returns no rows. Each list that is live at COMMIT is announced then
-- (buzz_private.announce_list).
--
-- Every signature is verified (BIP-340, over its prepared id, for the recorded relay key;
-- buzz_private.bip340_verify) before anything is stored: no writer can make an event live
-- that a client could not verify.
--
-- Raises: BZSTL (counts or ids differ from the last prepare: unknown, missing, reordered, or
-- prepared before a later change or before a rotation of the relay key), BZSIG (a signature
-- that is not 128 hex characters, or one that does not verify: the first such names its
-- position and the id it was given for).
CREATE OR REPLACE FUNCTION buzz.insert_signed_events(p_ids text[], p_sigs text[])
RETURNS SETOF json
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_xid xid8 := pg_catalog.pg_current_xact_id_if_assigned();
    v_prepared integer;
    v_bad_position integer;
    v_bad_id text;
BEGIN
    SELECT pg_catalog.count(*)::integer INTO v_prepared
    FROM buzz_private.tx_prepared_events e WHERE e.xid = v_xid;
    IF p_ids IS NULL OR p_sigs IS NULL
       OR pg_catalog.array_ndims(p_ids) > 1 OR pg_catalog.array_ndims(p_sigs) > 1
       OR pg_catalog.cardinality(p_ids) <> v_prepared
       OR pg_catalog.cardinality(p_sigs) <> v_prepared THEN
        RAISE EXCEPTION 'expected % ids and % signatures, one per prepared event; got % and %',
                v_prepared, v_prepared,
                coalesce(pg_catalog.cardinality(p_ids)::text, 'NULL'),
                coalesce(pg_catalog.cardinality(p_sigs)::text, 'NULL')
            USING ERRCODE = 'BZSTL',
                  HINT = 'Sign every row of the last buzz.prepare_membership_events, in order.';
    END IF;
    IF v_prepared = 0 THEN
        RETURN;
    END IF;
    IF EXISTS (SELECT FROM buzz_private.tx_prepared_events e
               JOIN pg_catalog.unnest(p_ids) WITH ORDINALITY AS i (id, position)
                 ON i.position = e.position
               WHERE e.xid = v_xid AND pg_catalog.lower(i.id) IS DISTINCT FROM e.id) THEN
        RAISE EXCEPTION 'the ids are not those of the events prepared last in this transaction'
            USING ERRCODE = 'BZSTL',
                  HINT = 'Members changed after prepare, or the order differs: prepare again '
                         'and sign what it returns.';
    END IF;
    -- A rotation in this same transaction after prepare: those events name the old key.
    IF EXISTS (SELECT FROM buzz_private.tx_prepared_events e
               WHERE e.xid = v_xid
                 AND e.pubkey IS DISTINCT FROM (SELECT k.pubkey FROM buzz_private.relay_key k)) THEN
        RAISE EXCEPTION 'the events were prepared with a key that is no longer the relay key'
            USING ERRCODE = 'BZSTL',
                  HINT = 'Prepare again with the new relay key and sign what it returns.';
    END IF;
    IF EXISTS (SELECT FROM pg_catalog.unnest(p_sigs) AS s (sig)
               WHERE s.sig IS NULL OR pg_catalog.length(s.sig) <> 128
                  OR s.sig ~ '[^0-9A-Fa-f]') THEN
        RAISE EXCEPTION 'every element of p_sigs must be a BIP-340 signature: 128 hexadecimal characters'
            USING ERRCODE = 'BZSIG',
                  HINT = 'Pass the 64-byte Schnorr signature of each prepared id as hex, in prepare''s order.';
    END IF;
    -- Every signature, for its prepared id (p_ids equals them, in order: checked above) and
    -- the relay key, all in one call (which spreads a large batch over the CPUs).
    v_bad_position := buzz_private.bip340_first_invalid(
        ARRAY(SELECT pg_catalog.decode(s.sig, 'hex')
              FROM pg_catalog.unnest(p_sigs) WITH ORDINALITY AS s (sig, n) ORDER BY s.n),
        ARRAY(SELECT pg_catalog.decode(i.id, 'hex')
              FROM pg_catalog.unnest(p_ids) WITH ORDINALITY AS i (id, n) ORDER BY i.n),
        pg_catalog.decode((SELECT k.pubkey FROM buzz_private.relay_key k), 'hex'));
    IF v_bad_position > 0 THEN
        v_bad_id := pg_catalog.lower(p_ids[v_bad_position]);
        RAISE EXCEPTION 'p_sigs[%] does not verify for prepared event % and the relay key',
                v_bad_position, v_bad_id
            USING ERRCODE = 'BZSIG',
                  DETAIL = 'Nothing was stored.',
                  HINT = 'Sign each prepared id (32 bytes) with the relay key as BIP-340 Schnorr, in prepare''s order.';
    END IF;

    -- Published before in this transaction: those events are replaced by these, which count
    -- from the transaction's start. One list and one set of events per community.
    WITH replaced AS (
        DELETE FROM buzz_private.tx_published_events t
        WHERE t.xid = v_xid
          AND t.community_id IN (SELECT e.community_id FROM buzz_private.tx_prepared_events e
                                 WHERE e.xid = v_xid)
        RETURNING t.event_seq
    )
    DELETE FROM buzz_private.membership_events m
    WHERE m.event_seq IN (SELECT r.event_seq FROM replaced r);

    WITH stored AS (
        INSERT INTO buzz_private.membership_events
            (community_id, id, pubkey, created_at, kind, member_pubkey, sig)
        SELECT e.community_id, e.id, e.pubkey, e.created_at, e.kind, e.member_pubkey,
               pg_catalog.lower(s.sig)
        FROM buzz_private.tx_prepared_events e
        JOIN pg_catalog.unnest(p_sigs) WITH ORDINALITY AS s (sig, position)
          ON s.position = e.position
        WHERE e.xid = v_xid AND e.kind <> 13534
        ORDER BY e.position
        RETURNING membership_events.community_id, membership_events.event_seq
    )
    INSERT INTO buzz_private.tx_published_events (xid, community_id, event_seq)
    SELECT v_xid, st.community_id, st.event_seq FROM stored st;

    INSERT INTO buzz_private.member_lists AS l (community_id, id, pubkey, created_at, sig)
    SELECT e.community_id, e.id, e.pubkey, e.created_at, pg_catalog.lower(s.sig)
    FROM buzz_private.tx_prepared_events e
    JOIN pg_catalog.unnest(p_sigs) WITH ORDINALITY AS s (sig, position) ON s.position = e.position
    WHERE e.xid = v_xid AND e.kind = 13534
    ON CONFLICT (community_id) DO UPDATE
        SET id = EXCLUDED.id, pubkey = EXCLUDED.pubkey,
            created_at = EXCLUDED.created_at, sig = EXCLUDED.sig;

    -- The signed events as the compact NIP-01 text whose tags are the signed bytes: lists
    -- from their stored pieces (written by prepare), 8000/8001 from their member.
    RETURN QUERY
        SELECT buzz_private.event_json(
                   e.id, e.pubkey, e.created_at, e.kind,
                   CASE WHEN e.kind = 13534 THEN buzz_private.list_tags(e.community_id)
                        ELSE buzz_private.member_event_tags(e.member_pubkey) END,
                   pg_catalog.lower(s.sig))
        FROM buzz_private.tx_prepared_events e
        JOIN pg_catalog.unnest(p_sigs) WITH ORDINALITY AS s (sig, position)
          ON s.position = e.position
        WHERE e.xid = v_xid
        ORDER BY e.position;

    -- Published: every change recorded so far is covered, and the commit guard is satisfied.
    DELETE FROM buzz_private.tx_pending_lists p WHERE p.xid = v_xid;
    DELETE FROM buzz_private.tx_prepared_events e WHERE e.xid = v_xid;
END
$$;
ALTER FUNCTION buzz.insert_signed_events(text[], text[]) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.insert_signed_events(text[], text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.insert_signed_events(text[], text[]) TO buzz_writer;
COMMENT ON FUNCTION buzz.insert_signed_events(text[], text[]) IS
    'Phase two of a list write: stores the signed events and makes the new lists live.';
