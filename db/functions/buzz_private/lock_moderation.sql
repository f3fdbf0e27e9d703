-- buzz_private.lock_moderation(p_community uuid) -> void
-- What every moderation write (ban_event, the kind rules, block_ip, assign_method and their
-- inverses) takes first: the community lock (lock_community: BZNCM, BZARC), then the
-- community's moderation lock, a transaction-scoped advisory lock taken exclusive. The
-- moderation writes of one community so run one at a time, and a bound (10,000 banned events,
-- 1,000 blocked addresses, 1,000 assigned methods) counted under it holds against concurrent
-- writers. No membership write takes it.
-- Key: class 6 of the two-integer advisory space, hashtext(community_id::text), as the ban
-- lock's class 5 (docs/operations.md); two communities of one hash share waits, never outcomes.
CREATE OR REPLACE FUNCTION buzz_private.lock_moderation(p_community uuid)
RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM buzz_private.lock_community(p_community);
    PERFORM pg_catalog.pg_advisory_xact_lock(6, pg_catalog.hashtext(p_community::text));
END
$$;
ALTER FUNCTION buzz_private.lock_moderation(uuid) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.lock_moderation(uuid) FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.lock_moderation(uuid) IS
    'The community lock, then the community''s moderation lock (exclusive).';
