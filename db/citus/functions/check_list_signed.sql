-- buzz_private.check_list_signed() -> trigger, as a Citus cluster runs it
--
-- Replaces the one-server form (buzz_signer/citus.py), the commit guard on tx_pending_lists,
-- whose trigger stays as it is. On a worker it is the one-server guard. On the coordinator a
-- mark left by a routed write (buzz_private.mark_routed, rebuild false) may be of a write that
-- changed nothing: the worker is asked (buzz_node.owes_list), and the COMMIT fails with
-- BZUNS only when it owes a signed list. Marks of a republish or rotation run here are owed.
CREATE OR REPLACE FUNCTION buzz_private.check_list_signed()
RETURNS trigger
-- It runs at COMMIT as whoever commits (a buzz_writer login has no access to buzz_private).
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_rebuild boolean;
    v_owes boolean := true;
BEGIN
    SELECT p.rebuild INTO v_rebuild FROM buzz_private.tx_pending_lists p
    WHERE p.xid = NEW.xid AND p.community_id = NEW.community_id;
    IF NOT FOUND OR NOT EXISTS (SELECT FROM buzz_private.communities c
                                WHERE c.community_id = NEW.community_id) THEN
        PERFORM buzz_private.forget_community_changes(NEW.xid, NEW.community_id);
        RETURN NULL;
    END IF;
    IF NOT v_rebuild AND (SELECT g.groupid = 0 FROM pg_catalog.pg_dist_local_group g) THEN
        -- Dynamic SQL with the value as a constant, which Citus delegates to the worker.
        EXECUTE 'SELECT * FROM buzz_node.owes_list($1)' INTO v_owes USING NEW.community_id;
    END IF;
    IF NOT v_owes THEN
        PERFORM buzz_private.forget_community_changes(NEW.xid, NEW.community_id);
        RETURN NULL;
    END IF;
    RAISE EXCEPTION 'community % changed without its signed membership list', NEW.community_id
        USING ERRCODE = 'BZUNS',
              HINT = 'Before COMMIT call buzz.prepare_membership_events, sign what it returns, '
                     'and pass the signatures to buzz.insert_signed_events (buzz_signer does this).';
END
$$;
ALTER FUNCTION buzz_private.check_list_signed() OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.check_list_signed() FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.check_list_signed() IS
    'Commit guard: BZUNS for a marked community whose list was not signed and inserted.';
