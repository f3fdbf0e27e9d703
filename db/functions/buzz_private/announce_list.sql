-- buzz_private.announce_list() -> trigger
-- NOTIFY buzz_membership for each list that is live when its transaction commits: a deferred
-- constraint trigger on member_lists, so it runs at COMMIT, and PostgreSQL delivers the
-- notification only if the commit succeeds. A list replaced again before COMMIT (a second
-- publish in the same transaction) is not announced. Payload: {"community_id": "<uuid>",
-- "id": "<hex>", "kind": 13534, "created_at": <seconds>}.
CREATE OR REPLACE FUNCTION buzz_private.announce_list()
RETURNS trigger
-- It runs at COMMIT as whoever commits (a buzz_writer login has no access to buzz_private).
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF EXISTS (SELECT FROM buzz_private.member_lists l
               WHERE l.community_id = NEW.community_id AND l.id = NEW.id) THEN
        PERFORM pg_catalog.pg_notify('buzz_membership', pg_catalog.jsonb_build_object(
            'community_id', NEW.community_id, 'id', NEW.id,
            'kind', 13534, 'created_at', NEW.created_at)::text);
    END IF;
    RETURN NULL;
END
$$;
ALTER FUNCTION buzz_private.announce_list() OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.announce_list() FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.announce_list() IS
    'At COMMIT: NOTIFY buzz_membership for each list live then.';

-- A constraint trigger cannot be replaced in place; the whole file runs in one transaction.
DROP TRIGGER IF EXISTS member_lists_announce_at_commit ON buzz_private.member_lists;
CREATE CONSTRAINT TRIGGER member_lists_announce_at_commit
    AFTER INSERT OR UPDATE ON buzz_private.member_lists
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION buzz_private.announce_list();
