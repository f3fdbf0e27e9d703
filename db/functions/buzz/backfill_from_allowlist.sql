-- buzz.backfill_from_allowlist(p_community uuid) -> integer
-- Seeds a new community: when its only member is its owner (or it has none), every allowlisted
-- pubkey joins as 'member' (added_by 'allowlist'), with one list; banned pubkeys are skipped. Returns the number added;
-- 0 (no change) when the community already has other members or the allowlist adds nobody.
-- Raises: BZISO, BZNCM, BZARC.
CREATE OR REPLACE FUNCTION buzz.backfill_from_allowlist(p_community uuid)
RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_added integer;
BEGIN
    PERFORM buzz_private.require_read_committed();
    PERFORM buzz_private.lock_community(p_community);
    PERFORM buzz_private.lock_bans(p_community, false);
    IF EXISTS (SELECT FROM buzz_private.relay_members m
               WHERE m.community_id = p_community AND m.role <> 'owner') THEN
        RETURN 0;
    END IF;
    -- Two backfills at once: the second waits on the first's rows and then skips them.
    -- In pubkey order, as add_relay_members inserts: a batch sharing pubkeys with the
    -- allowlist cannot deadlock with it. The community named as the constant it is, and the
    -- rows counted by what the INSERT returns, for Citus (add_relay_members says why).
    WITH added AS (
        INSERT INTO buzz_private.relay_members (community_id, pubkey, role, added_by)
        SELECT p_community, a.pubkey, 'member', 'allowlist'
        FROM buzz_private.relay_allowlist a
        WHERE a.community_id = p_community
          AND NOT EXISTS (SELECT FROM buzz_private.banned_pubkeys b
                          WHERE b.community_id = p_community AND b.pubkey = a.pubkey)
        ORDER BY a.pubkey::text COLLATE "C"
        ON CONFLICT (community_id, pubkey) DO NOTHING
        RETURNING 1
    )
    SELECT pg_catalog.count(*)::integer INTO v_added FROM added;
    RETURN v_added;
END
$$;
ALTER FUNCTION buzz.backfill_from_allowlist(uuid) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.backfill_from_allowlist(uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.backfill_from_allowlist(uuid) TO buzz_writer;
COMMENT ON FUNCTION buzz.backfill_from_allowlist(uuid) IS
    'Copies the allowlist into members of a community that has only its owner.';
