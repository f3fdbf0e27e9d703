-- buzz_private.announce_moderation(p_community uuid) -> void
-- NOTIFY buzz_moderation with the community's id as the payload, in the caller's transaction:
-- PostgreSQL delivers it when that transaction commits, and never for one that rolls back, so
-- every relay process reloads the community's rules exactly when a change of them commits
-- (several changes of one community in one transaction are one notification). Called by each
-- moderation write that changed something.
CREATE OR REPLACE FUNCTION buzz_private.announce_moderation(p_community uuid)
RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM pg_catalog.pg_notify('buzz_moderation', p_community::text);
END
$$;
ALTER FUNCTION buzz_private.announce_moderation(uuid) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.announce_moderation(uuid) FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.announce_moderation(uuid) IS
    'NOTIFY buzz_moderation (payload: the community id) at the commit of a moderation change.';
