-- buzz_private.announce_routed() -> trigger
-- On the coordinator, at COMMIT: NOTIFY buzz_membership for each list and role event this
-- transaction made live on a worker (insert_signed_events records them in tx_announcements,
-- the last of each address replacing the ones before), with the payload a single server's
-- buzz_private.announce_list and announce_role_event send. Listeners LISTEN on the
-- coordinator, as on one server; PostgreSQL delivers the notification only if the
-- coordinator commits, which it does only once every worker has.
CREATE OR REPLACE FUNCTION buzz_private.announce_routed()
RETURNS trigger
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    DELETE FROM buzz_private.tx_announcements a
    WHERE a.xid = NEW.xid AND a.community_id = NEW.community_id AND a.address = NEW.address
      AND a.id = NEW.id;
    IF FOUND THEN
        PERFORM pg_catalog.pg_notify('buzz_membership', pg_catalog.jsonb_build_object(
            'community_id', NEW.community_id, 'id', NEW.id,
            'kind', NEW.kind, 'created_at', NEW.created_at)::text);
    END IF;
    RETURN NULL;
END
$$;
ALTER FUNCTION buzz_private.announce_routed() OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.announce_routed() FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.announce_routed() IS
    'Coordinator, at COMMIT: NOTIFY buzz_membership for each event made live on a worker.';

DROP TRIGGER IF EXISTS tx_announcements_at_commit ON buzz_private.tx_announcements;
CREATE CONSTRAINT TRIGGER tx_announcements_at_commit
    AFTER INSERT OR UPDATE ON buzz_private.tx_announcements
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION buzz_private.announce_routed();
