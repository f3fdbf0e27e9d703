-- buzz.prepare_membership_events(p_relay_pubkey text), as a Citus coordinator runs it
--   -> TABLE(community_id uuid, id text, kind integer, created_at bigint, serialized text)
--
-- Replaces the one-server form on a cluster (buzz_signer/citus.py applies it after
-- db/functions). The same contract: for every community this transaction changed (marked
-- here by buzz_private.mark_routed, or by a rotation or republish run here), in ascending
-- list-lock-key order, the unsigned events, which buzz_node.prepare_events builds on the
-- community's worker, in this transaction there. Kept here too, by position, so that
-- insert_signed_events can hand each worker its own signatures.
--
-- Records the relay key on first use here: only the coordinator writes a reference table.
--
-- Takes each community's list lock here too, before its worker's: Citus commits a write of
-- one worker in one phase, as the coordinator begins to commit, and the worker's list lock
-- goes with it, before the coordinator queues the announcement (NOTIFY). Held here until
-- the coordinator's commit is over, it keeps the community's next writer from preparing
-- until then, so that the announcements of one community come in created_at order.
CREATE OR REPLACE FUNCTION buzz.prepare_membership_events(p_relay_pubkey text)
RETURNS TABLE (community_id uuid, id text, kind integer, created_at bigint, serialized text)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_pubkey text := buzz_private.normalize_pubkey(p_relay_pubkey, 'p_relay_pubkey');
    v_xid xid8;
    v_pending record;
    v_position integer := 0;
    v_returned integer;
BEGIN
    PERFORM buzz_private.require_read_committed();
    PERFORM buzz_private.bound_waits();
    v_xid := pg_catalog.pg_current_xact_id_if_assigned();
    IF EXISTS (SELECT FROM buzz_private.tx_pending_lists p WHERE p.xid = v_xid) THEN
        PERFORM buzz_private.lock_relay_key(false);
    END IF;
    PERFORM buzz_private.check_relay_key(v_pubkey);
    IF v_xid IS NULL THEN
        RETURN;
    END IF;
    DELETE FROM buzz_private.tx_prepared_events e WHERE e.xid = v_xid;
    FOR v_pending IN
        SELECT p.community_id, p.rebuild
        FROM buzz_private.tx_pending_lists p
        WHERE p.xid = v_xid
        ORDER BY buzz_private.list_lock_key(p.community_id), p.community_id
    LOOP
        v_returned := 0;
        PERFORM pg_catalog.pg_advisory_xact_lock(buzz_private.list_lock_key(v_pending.community_id));
        -- Dynamic SQL with constants, which Citus delegates to the community's worker.
        FOR community_id, id, kind, created_at, serialized IN
            EXECUTE 'SELECT * FROM buzz_node.prepare_events($1, $2, $3)'
            USING v_pubkey, v_pending.community_id, v_pending.rebuild
        LOOP
            v_returned := v_returned + 1;
            INSERT INTO buzz_private.tx_prepared_events
                (xid, position, community_id, id, pubkey, kind, created_at)
            VALUES (v_xid, v_position + v_returned, community_id, id, v_pubkey, kind, created_at);
            RETURN NEXT;
        END LOOP;
        v_position := v_position + v_returned;
        IF v_returned = 0 THEN
            -- Nothing to sign: the worker owes nothing (its prepare released its guard).
            DELETE FROM buzz_private.tx_pending_lists p
            WHERE p.xid = v_xid AND p.community_id = v_pending.community_id;
        END IF;
    END LOOP;
END
$$;
ALTER FUNCTION buzz.prepare_membership_events(text) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.prepare_membership_events(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.prepare_membership_events(text) TO buzz_writer;
COMMENT ON FUNCTION buzz.prepare_membership_events(text) IS
    'Phase one of a list write: takes the list locks and returns the unsigned events.';
