-- buzz_private.cached_list(p_community) -> jsonb
-- The live list of a community as insert_signed_events built it (live_list_cache), or NULL
-- when there is no such copy: none written since a crash emptied the cache, a copy built for
-- another header than the stored one (id, pubkey, created_at, sig), or a standby (unlogged
-- tables cannot be read during recovery).
CREATE OR REPLACE FUNCTION buzz_private.cached_list(p_community uuid)
RETURNS jsonb
-- PL/pgSQL: the cache is planned only off a standby, where planning it would fail.
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF pg_catalog.pg_is_in_recovery() THEN
        RETURN NULL;
    END IF;
    RETURN (SELECT c.event
            FROM buzz_private.live_list_cache c
            JOIN buzz_private.member_lists l ON l.community_id = c.community_id
            WHERE c.community_id = p_community
              AND (c.id, c.pubkey, c.created_at, c.sig) = (l.id, l.pubkey, l.created_at, l.sig));
END
$$;
ALTER FUNCTION buzz_private.cached_list(uuid) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.cached_list(uuid) FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.cached_list(uuid) IS
    'The kept jsonb of a community''s live list, or NULL when there is none to trust.';
