-- buzz_private.mark_routed(p_community uuid) -> void
-- On the coordinator, after a write of p_community ran on its worker: marks the community
-- here, without asking the worker whether the write changed anything (that would cost the
-- write a second round trip). The mark is settled where the worker answers anyway:
--   - prepare_membership_events forwards the community's phase to its worker; a worker that
--     owes nothing returns no events, and the mark is dropped;
--   - at COMMIT, a mark still here is settled with the worker (settle_routed_mark), and the
--     commit guard (check_list_signed) refuses with BZUNS only a mark that is owed, before
--     Citus commits the worker.
-- It voids none of the events prepared here: a write that changed the community after its
-- prepare voided the worker's, whose insert then refuses the old signatures (BZSTL).
CREATE OR REPLACE FUNCTION buzz_private.mark_routed(p_community uuid)
RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    INSERT INTO buzz_private.tx_pending_lists (xid, community_id, rebuild)
    VALUES (pg_catalog.pg_current_xact_id(), p_community, false)
    ON CONFLICT DO NOTHING;
END
$$;
ALTER FUNCTION buzz_private.mark_routed(uuid) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.mark_routed(uuid) FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.mark_routed(uuid) IS
    'Coordinator: marks a community a write ran on, to be settled at prepare or COMMIT.';
