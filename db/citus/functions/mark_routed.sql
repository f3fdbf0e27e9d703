-- buzz_private.mark_routed(p_community uuid) -> void
-- On the coordinator, after a write of p_community ran on its worker: when the worker now
-- owes a signed list, mark the community here too. The coordinator's commit guard
-- (check_list_signed on its own tx_pending_lists) then refuses a COMMIT without the list
-- with BZUNS, before Citus commits the worker, and its prepare_membership_events knows which
-- workers to prepare on.
CREATE OR REPLACE FUNCTION buzz_private.mark_routed(p_community uuid)
RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_owes boolean;
BEGIN
    -- Dynamic SQL with the value as a constant, which Citus delegates to the worker.
    EXECUTE 'SELECT * FROM buzz_node.owes_list($1)' INTO v_owes USING p_community;
    IF v_owes THEN
        PERFORM buzz_private.mark_for_list(ARRAY[p_community], false);
    END IF;
END
$$;
ALTER FUNCTION buzz_private.mark_routed(uuid) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.mark_routed(uuid) FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.mark_routed(uuid) IS
    'Coordinator: marks a community whose worker now owes a signed list.';
