-- buzz_private.refuse_truncate() -> trigger
-- TRUNCATE fires no row triggers, so it would change members without a list: refused at the
-- statement. Delete rows instead (or the community), and each change publishes its list.
CREATE OR REPLACE FUNCTION buzz_private.refuse_truncate()
RETURNS trigger
LANGUAGE plpgsql VOLATILE
SET search_path = ''
AS $$
BEGIN
    RAISE EXCEPTION 'TRUNCATE of % is refused: it would change members without a signed list',
            TG_TABLE_NAME
        USING ERRCODE = 'object_not_in_prerequisite_state',
              HINT = 'DELETE the rows, or delete the community with buzz.delete_community.';
END
$$;
ALTER FUNCTION buzz_private.refuse_truncate() OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.refuse_truncate() FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.refuse_truncate() IS
    'BEFORE TRUNCATE trigger on relay_members: refuses the statement.';

CREATE OR REPLACE TRIGGER relay_members_refuse_truncate
    BEFORE TRUNCATE ON buzz_private.relay_members
    FOR EACH STATEMENT EXECUTE FUNCTION buzz_private.refuse_truncate();
