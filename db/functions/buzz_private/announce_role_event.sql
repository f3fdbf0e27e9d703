-- buzz_private.announce_role_event() -> trigger
-- NOTIFY buzz_membership for each role event (33534 definition or kind 5 deletion) that is
-- live when its transaction commits, as announce_list does for lists: a deferred constraint
-- trigger, so only a commit delivers it. Payload: {"community_id": "<uuid>", "id": "<hex>",
-- "kind": 33534 or 5, "created_at": <seconds>}.
CREATE OR REPLACE FUNCTION buzz_private.announce_role_event()
RETURNS trigger
-- It runs at COMMIT as whoever commits (a buzz_writer login has no access to buzz_private).
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF EXISTS (SELECT FROM buzz_private.role_events r
               WHERE r.community_id = NEW.community_id AND r.role_id = NEW.role_id
                 AND r.id = NEW.id) THEN
        PERFORM pg_catalog.pg_notify('buzz_membership', pg_catalog.jsonb_build_object(
            'community_id', NEW.community_id, 'id', NEW.id,
            'kind', NEW.kind, 'created_at', NEW.created_at)::text);
    END IF;
    RETURN NULL;
END
$$;
ALTER FUNCTION buzz_private.announce_role_event() OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.announce_role_event() FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.announce_role_event() IS
    'At COMMIT: NOTIFY buzz_membership for each role event live then.';

-- A constraint trigger cannot be replaced in place; the whole file runs in one transaction.
DROP TRIGGER IF EXISTS role_events_announce_at_commit ON buzz_private.role_events;
CREATE CONSTRAINT TRIGGER role_events_announce_at_commit
    AFTER INSERT OR UPDATE ON buzz_private.role_events
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION buzz_private.announce_role_event();
