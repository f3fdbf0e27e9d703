-- buzz_private.use_generic_plans() -> void, as a Citus cluster runs it
--
-- Replaces the one-server form (buzz_signer/citus.py) with one that changes nothing: Citus
-- routes a statement to a community's shard by the value of its parameter, and makes no
-- generic plan of most of the write path's statements ("could not create distributed plan").
-- The cluster keeps PostgreSQL's own choice.
CREATE OR REPLACE FUNCTION buzz_private.use_generic_plans()
RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
END
$$;
ALTER FUNCTION buzz_private.use_generic_plans() OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.use_generic_plans() FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.use_generic_plans() IS
    'On a Citus cluster: nothing (Citus plans the write path''s statements for their values).';
