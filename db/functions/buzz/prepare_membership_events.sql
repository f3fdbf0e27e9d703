-- buzz.prepare_membership_events(p_relay_pubkey text)
--   -> TABLE(community_id uuid, id text, kind integer, created_at bigint, serialized text)
--
-- Phase one of a list write, for every community this transaction changed (or marked for
-- republish): buzz_private.prepare_events says what it returns, raises and locks.
CREATE OR REPLACE FUNCTION buzz.prepare_membership_events(p_relay_pubkey text)
RETURNS TABLE (community_id uuid, id text, kind integer, created_at bigint, serialized text)
-- PL/pgSQL, whose plan of the call is kept for the session (an SQL function's is made anew
-- for each query that calls it).
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN QUERY SELECT * FROM buzz_private.prepare_events(p_relay_pubkey, NULL);
END
$$;
ALTER FUNCTION buzz.prepare_membership_events(text) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.prepare_membership_events(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.prepare_membership_events(text) TO buzz_writer;
COMMENT ON FUNCTION buzz.prepare_membership_events(text) IS
    'Phase one of a list write: takes the list locks and returns the unsigned events.';
