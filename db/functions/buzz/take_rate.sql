-- buzz.take_rate(p_scope text, p_keys text[], p_limit integer, p_seconds integer) -> boolean
-- Counts one hit on each key of p_keys within the scope (an invite minted: its minter; a
-- failed claim: its pubkey and its address), unless one of them already has p_limit hits
-- within the last p_seconds: then false, and nothing is counted. One sliding window per
-- (scope, key), shared by every relay process of the database.
-- A key's row holds its hits within the window (at most p_limit) and is deleted by a later
-- call once the window has passed: each call deletes up to two expired rows, so the table
-- holds about the keys active within their windows, whatever the age of the database.
-- Raises: 22023 (buzz_private.rate_keys).
-- Locks: each key's row FOR UPDATE, in key order (so two calls with the same keys queue
-- rather than deadlock); up to two expired rows, skipping locked ones.
CREATE OR REPLACE FUNCTION buzz.take_rate(
    p_scope text, p_keys text[], p_limit integer, p_seconds integer)
RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_keys text[] := buzz_private.rate_keys(p_scope, p_keys, p_limit, p_seconds);
    v_now timestamptz := pg_catalog.now();
    v_since timestamptz := v_now - pg_catalog.make_interval(secs => p_seconds);
BEGIN
    DELETE FROM buzz_private.rate_windows r
    WHERE (r.scope, r.key) IN (SELECT w.scope, w.key FROM buzz_private.rate_windows w
                               WHERE w.expires_at < v_now
                               ORDER BY w.expires_at LIMIT 2
                               FOR UPDATE SKIP LOCKED);
    INSERT INTO buzz_private.rate_windows (scope, key, hits, expires_at)
    SELECT p_scope, k, '{}', v_now + pg_catalog.make_interval(secs => p_seconds)
    FROM pg_catalog.unnest(v_keys) k
    ORDER BY k
    ON CONFLICT (scope, key) DO NOTHING;
    PERFORM FROM buzz_private.rate_windows r
    WHERE r.scope = p_scope AND r.key = ANY (v_keys)
    ORDER BY r.key
    FOR UPDATE;
    -- A statement of its own, so it reads the rows as the locks above found them.
    IF buzz.rate_reached(p_scope, v_keys, p_limit, p_seconds) THEN
        RETURN false;
    END IF;
    UPDATE buzz_private.rate_windows r
    SET hits = ARRAY(SELECT h FROM pg_catalog.unnest(r.hits) h WHERE h > v_since ORDER BY h)
               || v_now,
        expires_at = v_now + pg_catalog.make_interval(secs => p_seconds)
    WHERE r.scope = p_scope AND r.key = ANY (v_keys);
    RETURN true;
END
$$;
ALTER FUNCTION buzz.take_rate(text, text[], integer, integer) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.take_rate(text, text[], integer, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.take_rate(text, text[], integer, integer) TO buzz_writer;
COMMENT ON FUNCTION buzz.take_rate(text, text[], integer, integer) IS
    'Counts a hit on each key unless one is at its limit within the window: true if counted.';
