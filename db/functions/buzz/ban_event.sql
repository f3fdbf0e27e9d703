-- buzz.ban_event(p_community uuid, p_event_id text, p_reason text DEFAULT NULL,
--                p_banned_by text DEFAULT NULL) -> text
-- Bans an event from the community behind the gate: every relay process drops it from the
-- upstream relay's answers (stored and live) and refuses it when a client publishes it. The
-- upstream keeps what it stored. Not a membership write: no list. Every relay process reloads
-- the community's rules when it commits (NOTIFY buzz_moderation).
-- p_reason: at most 1,000 characters; p_banned_by: who banned (a pubkey or a short label).
-- At most 10,000 banned events per community: each relay process holds them all in memory.
-- Outcomes: 'banned'; 'already_banned' (no change: the first reason is kept).
-- Raises: 22023 (p_event_id, p_reason, p_banned_by), 54000 (the community has 10,000 banned
-- events already), BZNCM, BZARC.
-- Locks: community FOR KEY SHARE, the moderation lock (lock_moderation), the new row.
CREATE OR REPLACE FUNCTION buzz.ban_event(
    p_community uuid, p_event_id text, p_reason text DEFAULT NULL, p_banned_by text DEFAULT NULL)
RETURNS text
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_event_id text := buzz_private.normalize_event_id(p_event_id, 'p_event_id');
    v_reason text := buzz_private.normalize_note(p_reason, 'p_reason', 1000);
    v_banned_by text := buzz_private.normalize_actor(p_banned_by, 'p_banned_by');
BEGIN
    PERFORM buzz_private.lock_moderation(p_community);
    IF EXISTS (SELECT FROM buzz_private.banned_events b
               WHERE b.community_id = p_community AND b.event_id = v_event_id) THEN
        RETURN 'already_banned';
    END IF;
    IF (SELECT count(*) FROM buzz_private.banned_events b
        WHERE b.community_id = p_community) >= 10000 THEN
        RAISE EXCEPTION 'the community has 10000 banned events, the most it may have'
            USING ERRCODE = 'program_limit_exceeded',
                  HINT = 'Unban events that no longer need it (the upstream relay may delete them).';
    END IF;
    INSERT INTO buzz_private.banned_events (community_id, event_id, reason, banned_by)
    VALUES (p_community, v_event_id, v_reason, v_banned_by);
    PERFORM buzz_private.announce_moderation(p_community);
    RETURN 'banned';
END
$$;
ALTER FUNCTION buzz.ban_event(uuid, text, text, text) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.ban_event(uuid, text, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.ban_event(uuid, text, text, text) TO buzz_writer;
COMMENT ON FUNCTION buzz.ban_event(uuid, text, text, text) IS
    'Bans an event from the gate''s answers and writes: banned | already_banned.';
