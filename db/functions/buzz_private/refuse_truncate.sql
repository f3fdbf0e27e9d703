-- buzz_private.refuse_truncate() -> trigger
-- TRUNCATE fires no row triggers: on relay_members it would change members without a list, on
-- member_lists and member_list_pieces it would drop live lists and the newest created_at the
-- next list must pass; on roles and role_events the same for definitions. Refused at the
-- statement. Delete rows (or the community) instead.
CREATE OR REPLACE FUNCTION buzz_private.refuse_truncate()
RETURNS trigger
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RAISE EXCEPTION 'TRUNCATE of % is refused: members and lists change only with a signed list',
            TG_TABLE_NAME
        USING ERRCODE = 'object_not_in_prerequisite_state',
              HINT = 'DELETE the rows, or delete the community with buzz.delete_community.';
END
$$;
ALTER FUNCTION buzz_private.refuse_truncate() OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.refuse_truncate() FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.refuse_truncate() IS
    'BEFORE TRUNCATE trigger on relay_members, the roles and the list tables: refuses it.';

CREATE OR REPLACE TRIGGER relay_members_refuse_truncate
    BEFORE TRUNCATE ON buzz_private.relay_members
    FOR EACH STATEMENT EXECUTE FUNCTION buzz_private.refuse_truncate();
CREATE OR REPLACE TRIGGER member_lists_refuse_truncate
    BEFORE TRUNCATE ON buzz_private.member_lists
    FOR EACH STATEMENT EXECUTE FUNCTION buzz_private.refuse_truncate();
CREATE OR REPLACE TRIGGER member_list_pieces_refuse_truncate
    BEFORE TRUNCATE ON buzz_private.member_list_pieces
    FOR EACH STATEMENT EXECUTE FUNCTION buzz_private.refuse_truncate();
CREATE OR REPLACE TRIGGER roles_refuse_truncate
    BEFORE TRUNCATE ON buzz_private.roles
    FOR EACH STATEMENT EXECUTE FUNCTION buzz_private.refuse_truncate();
CREATE OR REPLACE TRIGGER role_events_refuse_truncate
    BEFORE TRUNCATE ON buzz_private.role_events
    FOR EACH STATEMENT EXECUTE FUNCTION buzz_private.refuse_truncate();
