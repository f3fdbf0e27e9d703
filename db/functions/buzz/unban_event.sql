-- buzz.unban_event(p_community uuid, p_event_id text) -> text
-- Lifts an event's ban: the gate passes it on again (the upstream still has it if it kept it).
-- Not a membership write: no list. Every relay process reloads the community's rules when it
-- commits (NOTIFY buzz_moderation).
-- Outcomes: 'unbanned'; 'not_banned' (no change).
-- Raises: 22023 (p_event_id), BZNCM, BZARC.
-- Locks: community FOR KEY SHARE, the moderation lock (lock_moderation), the row.
CREATE OR REPLACE FUNCTION buzz.unban_event(p_community uuid, p_event_id text)
RETURNS text
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_event_id text := buzz_private.normalize_event_id(p_event_id, 'p_event_id');
BEGIN
    PERFORM buzz_private.lock_moderation(p_community);
    DELETE FROM buzz_private.banned_events b
    WHERE b.community_id = p_community AND b.event_id = v_event_id;
    IF NOT FOUND THEN
        RETURN 'not_banned';
    END IF;
    PERFORM buzz_private.announce_moderation(p_community);
    RETURN 'unbanned';
END
$$;
ALTER FUNCTION buzz.unban_event(uuid, text) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.unban_event(uuid, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.unban_event(uuid, text) TO buzz_writer;
COMMENT ON FUNCTION buzz.unban_event(uuid, text) IS 'Lifts an event''s ban: unbanned | not_banned.';
