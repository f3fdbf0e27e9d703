-- buzz_private.lock_bans(p_community uuid, p_exclusive boolean) -> void
-- The community's ban lock, a transaction-scoped advisory lock: every path that makes a
-- member or locks a member's row takes it shared (they never wait on each other), ban_pubkey
-- exclusive. A path that locked a member's row without it could deadlock with a ban: the ban
-- holds this lock and waits for the row, the path holds the row and, later in its
-- transaction, waits for this lock (to add a member, say). So a ban and a
-- join of the same pubkey never both commit unseen by the other: the join either committed
-- before the ban looked for the member (and the ban removes it), or it sees the ban and
-- refuses. Taken after the community lock and before any member row, as both sides take it.
-- Key: class 5 of the two-integer advisory space, hashtext(community_id::text), as the
-- ownership lock's class 1 (docs/operations.md); two communities of one hash share waits,
-- never outcomes.
CREATE OR REPLACE FUNCTION buzz_private.lock_bans(p_community uuid, p_exclusive boolean)
RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF p_exclusive THEN
        PERFORM pg_catalog.pg_advisory_xact_lock(5, pg_catalog.hashtext(p_community::text));
    ELSE
        PERFORM pg_catalog.pg_advisory_xact_lock_shared(5, pg_catalog.hashtext(p_community::text));
    END IF;
END
$$;
ALTER FUNCTION buzz_private.lock_bans(uuid, boolean) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.lock_bans(uuid, boolean) FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.lock_bans(uuid, boolean) IS
    'The community''s ban lock: shared by every path that makes a member, exclusive for a ban.';
