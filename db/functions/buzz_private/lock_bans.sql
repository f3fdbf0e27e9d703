-- buzz_private.lock_bans(p_community uuid, p_exclusive boolean) -> void
-- The community's ban lock, a transaction-scoped advisory lock: every path that makes a
-- member takes it shared (they never wait on each other), ban_pubkey exclusive. So a ban and a
-- join of the same pubkey never both commit unseen by the other: the join either committed
-- before the ban looked for the member (and the ban removes it), or it sees the ban and
-- refuses. Taken after the community lock and before any member row, as both sides take it.
-- Key: the two-integer advisory space (never equal to a list lock, which uses the bigint
-- space), 'BANS' and the first 32 bits of the community id; two communities sharing those bits
-- only share waits, never outcomes.
CREATE OR REPLACE FUNCTION buzz_private.lock_bans(p_community uuid, p_exclusive boolean)
RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_key integer := ('x' || pg_catalog.left(p_community::text, 8))::bit(32)::integer;
BEGIN
    IF p_exclusive THEN
        PERFORM pg_catalog.pg_advisory_xact_lock(1111576147, v_key);          -- 'BANS'
    ELSE
        PERFORM pg_catalog.pg_advisory_xact_lock_shared(1111576147, v_key);
    END IF;
END
$$;
ALTER FUNCTION buzz_private.lock_bans(uuid, boolean) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.lock_bans(uuid, boolean) FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.lock_bans(uuid, boolean) IS
    'The community''s ban lock: shared by every path that makes a member, exclusive for a ban.';
