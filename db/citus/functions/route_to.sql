-- buzz_private.route_to(p_community uuid) -> void
-- On the coordinator, before a write of p_community: on a cluster a transaction writes one
-- community. Citus runs each write on the community's worker, pinned to that community
-- (force_delegation); a second community's write in the same transaction was cancelled by
-- Citus as a distributed deadlock (docs/scale-out.md). Raises feature_not_supported (0A000)
-- for a second community instead, before anything of it is written.
-- A NULL community raises BZNCM here, as lock_community does on one server: Citus 13.2
-- crashes the server process on a delegated call whose distribution argument is NULL.
CREATE OR REPLACE FUNCTION buzz_private.route_to(p_community uuid)
RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_routed text := pg_catalog.current_setting('buzz.routed_community', true);
BEGIN
    IF p_community IS NULL THEN
        RAISE EXCEPTION 'no community NULL'
            USING ERRCODE = 'BZNCM', HINT = 'Look the id up with buzz.community_id(host).';
    END IF;
    IF v_routed = p_community::text THEN
        RETURN;
    END IF;
    IF v_routed <> '' THEN
        RAISE EXCEPTION 'this transaction wrote community %; on a Citus cluster a transaction '
                        'writes one community', v_routed
            USING ERRCODE = 'feature_not_supported',
                  HINT = 'Write each community in a transaction of its own.';
    END IF;
    PERFORM pg_catalog.set_config('buzz.routed_community', p_community::text, true);
END
$$;
ALTER FUNCTION buzz_private.route_to(uuid) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.route_to(uuid) FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.route_to(uuid) IS
    'Coordinator: a transaction writes one community (0A000 for a second).';
