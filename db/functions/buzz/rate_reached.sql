-- buzz.rate_reached(p_scope text, p_keys text[], p_limit integer, p_seconds integer) -> boolean
-- True when a key of p_keys already has p_limit hits (take_rate) within the last p_seconds:
-- to refuse before an act that is counted only when it fails (a claim, counted if the code
-- was wrong). Counts nothing.
-- Raises: 22023 (buzz_private.rate_keys).
CREATE OR REPLACE FUNCTION buzz.rate_reached(
    p_scope text, p_keys text[], p_limit integer, p_seconds integer)
RETURNS boolean
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_keys text[] := buzz_private.rate_keys(p_scope, p_keys, p_limit, p_seconds);
    v_since timestamptz := pg_catalog.now() - pg_catalog.make_interval(secs => p_seconds);
BEGIN
    RETURN EXISTS (SELECT FROM buzz_private.rate_windows r
                   WHERE r.scope = p_scope AND r.key = ANY (v_keys)
                     AND (SELECT pg_catalog.count(*) FROM pg_catalog.unnest(r.hits) h
                          WHERE h > v_since) >= p_limit);
END
$$;
ALTER FUNCTION buzz.rate_reached(text, text[], integer, integer) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.rate_reached(text, text[], integer, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.rate_reached(text, text[], integer, integer) TO buzz_writer;
COMMENT ON FUNCTION buzz.rate_reached(text, text[], integer, integer) IS
    'Whether a key has reached its limit within the window (take_rate); counts nothing.';
