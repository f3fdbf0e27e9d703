-- buzz_private.check_policy_version(p_policy_version) -> text
-- A policy version as given: NULL, or 1-64 printable characters; 22023 otherwise. Checked with
-- the other arguments, before any outcome.
CREATE OR REPLACE FUNCTION buzz_private.check_policy_version(p_policy_version text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF pg_catalog.length(p_policy_version) NOT BETWEEN 1 AND 64
       OR p_policy_version ~ '[[:cntrl:]]' THEN
        RAISE EXCEPTION 'p_policy_version must be 1 to 64 printable characters'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    RETURN p_policy_version;
END
$$;
ALTER FUNCTION buzz_private.check_policy_version(text) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.check_policy_version(text) FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.check_policy_version(text) IS
    'A policy version (NULL or 1-64 printable characters), else 22023.';
