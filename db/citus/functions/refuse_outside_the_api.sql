-- buzz_private.refuse_outside_the_api() -> trigger, on a Citus cluster only
--
-- On one server a statement on relay_members or roles outside the API (plain SQL) marks its
-- community, and the commit guard refuses a COMMIT without its signed list (BZUNS). On a
-- cluster such a statement runs on the worker as the caller, where the coordinator can mark
-- nothing, and Citus reports the worker's guard at COMMIT as its own error (XX000, "could not
-- commit transaction", the guard's message only a warning). So it is refused here, at the
-- statement, with BZUNS: the API's writes reach the workers as buzz_owner (the functions are
-- SECURITY DEFINER), anything else is a change without its list. A restore with
-- session_replication_role = replica fires no trigger and is let through, as on one server.
CREATE OR REPLACE FUNCTION buzz_private.refuse_outside_the_api()
RETURNS trigger
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF SESSION_USER <> 'buzz_owner' THEN
        RAISE EXCEPTION 'on a Citus cluster % changes only through the buzz API', TG_TABLE_NAME
            USING ERRCODE = 'BZUNS',
                  HINT = 'Call the buzz functions, which publish the signed list; a restore '
                         'runs on the worker with session_replication_role = replica.';
    END IF;
    RETURN NULL;
END
$$;
ALTER FUNCTION buzz_private.refuse_outside_the_api() OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.refuse_outside_the_api() FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.refuse_outside_the_api() IS
    'Cluster: BZUNS for a statement on relay_members or roles that is not the API''s.';

CREATE OR REPLACE TRIGGER relay_members_through_the_api
    BEFORE INSERT OR UPDATE OR DELETE ON buzz_private.relay_members
    FOR EACH STATEMENT EXECUTE FUNCTION buzz_private.refuse_outside_the_api();
CREATE OR REPLACE TRIGGER roles_through_the_api
    BEFORE INSERT OR UPDATE OR DELETE ON buzz_private.roles
    FOR EACH STATEMENT EXECUTE FUNCTION buzz_private.refuse_outside_the_api();
