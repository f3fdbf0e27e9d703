-- buzz.accept_auth_event(p_event_id text, p_fresh_until timestamptz) -> boolean
-- Records a NIP-98 authorization accepted for a change: true the first time its id is seen,
-- false for a replay, in every relay process of this database. It is kept until
-- p_fresh_until (its created_at plus the window in which it is fresh), then deleted by a
-- later call: each call deletes up to two expired ones, so the table holds about what was
-- accepted within the window, whatever the age of the database.
-- Raises: 22023 (p_event_id not an event id; p_fresh_until NULL or more than a day ahead).
-- Locks: the row (its primary key), and up to two expired rows, skipping locked ones.
CREATE OR REPLACE FUNCTION buzz.accept_auth_event(p_event_id text, p_fresh_until timestamptz)
RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_id text := buzz_private.normalize_event_id(p_event_id, 'p_event_id');
BEGIN
    IF p_fresh_until IS NULL OR p_fresh_until > pg_catalog.now() + interval '1 day' THEN
        RAISE EXCEPTION 'p_fresh_until must be a time within a day from now'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    DELETE FROM buzz_private.accepted_auth_events a
    WHERE a.event_id IN (SELECT e.event_id FROM buzz_private.accepted_auth_events e
                         WHERE e.expires_at < pg_catalog.now()
                         ORDER BY e.expires_at LIMIT 2
                         FOR UPDATE SKIP LOCKED);
    INSERT INTO buzz_private.accepted_auth_events (event_id, expires_at)
    VALUES (v_id, p_fresh_until)
    ON CONFLICT (event_id) DO NOTHING;
    RETURN FOUND;
END
$$;
ALTER FUNCTION buzz.accept_auth_event(text, timestamptz) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.accept_auth_event(text, timestamptz) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.accept_auth_event(text, timestamptz) TO buzz_writer;
COMMENT ON FUNCTION buzz.accept_auth_event(text, timestamptz) IS
    'A NIP-98 authorization accepted once across every relay process: true the first time.';
