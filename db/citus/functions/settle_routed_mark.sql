-- buzz_private.settle_routed_mark() -> trigger, on a Citus coordinator
--
-- A deferred constraint trigger on tx_pending_lists, so it runs at COMMIT for every community
-- this transaction marked, just before the commit guard (check_list_signed; triggers of one
-- event fire in the order of their names). A mark that a routed write left (mark_routed,
-- rebuild false) and prepare did not settle may be of a write that changed nothing: the
-- worker is asked (buzz_node.owes_list), and a mark it owes nothing for is dropped, so the
-- guard lets the COMMIT through. A mark that is owed stays, and the guard refuses the COMMIT
-- with BZUNS before Citus commits the worker. Marks of a republish or rotation run here are
-- owed. On a worker (whose scratch tables are copies of the coordinator's) it does nothing.
CREATE OR REPLACE FUNCTION buzz_private.settle_routed_mark()
RETURNS trigger
-- It runs at COMMIT as whoever commits (a buzz_writer login has no access to buzz_private).
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_owes boolean;
BEGIN
    IF NOT (SELECT g.groupid = 0 FROM pg_catalog.pg_dist_local_group g)
       OR NOT EXISTS (SELECT FROM buzz_private.tx_pending_lists p
                      WHERE p.xid = NEW.xid AND p.community_id = NEW.community_id
                        AND NOT p.rebuild) THEN
        RETURN NULL;
    END IF;
    -- Dynamic SQL with the value as a constant, which Citus delegates to the worker.
    EXECUTE 'SELECT * FROM buzz_node.owes_list($1)' INTO v_owes USING NEW.community_id;
    IF NOT v_owes THEN
        DELETE FROM buzz_private.tx_pending_lists p
        WHERE p.xid = NEW.xid AND p.community_id = NEW.community_id;
    END IF;
    RETURN NULL;
END
$$;
ALTER FUNCTION buzz_private.settle_routed_mark() OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.settle_routed_mark() FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.settle_routed_mark() IS
    'Coordinator, at COMMIT: drops the mark of a routed write whose worker owes no list.';

DROP TRIGGER IF EXISTS tx_pending_lists_settled_at_commit ON buzz_private.tx_pending_lists;
CREATE CONSTRAINT TRIGGER tx_pending_lists_settled_at_commit
    AFTER INSERT ON buzz_private.tx_pending_lists
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION buzz_private.settle_routed_mark();
