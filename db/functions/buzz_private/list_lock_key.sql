-- buzz_private.list_lock_key(p_community) -> bigint
-- The key of a community's list lock: a transaction-scoped advisory lock in the bigint key
-- space, the first 64 bits of the community id. Prepare takes these in ascending key order.
-- An operator can hold a list by hand: SELECT pg_advisory_xact_lock(buzz_private.list_lock_key(id)).
-- SQL with no SET clause, so that the planner inlines it into the query that calls it.
CREATE OR REPLACE FUNCTION buzz_private.list_lock_key(p_community uuid)
RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
RETURN ('x' || pg_catalog.translate(pg_catalog.left(p_community::text, 18), '-', ''))
       ::bit(64)::bigint;
ALTER FUNCTION buzz_private.list_lock_key(uuid) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.list_lock_key(uuid) FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.list_lock_key(uuid) IS
    'Advisory lock key (bigint space) of a community''s list lock.';
