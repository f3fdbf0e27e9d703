-- buzz_private.rate_keys(p_scope, p_keys, p_limit, p_seconds) -> text[]
-- The arguments of take_rate and rate_reached checked: their keys, distinct and sorted (the
-- order in which take_rate locks them). Raises 22023 naming what is wrong: a scope is 1 to
-- 32 of [a-z_]; 1 to 8 keys of 1 to 200 characters; a limit of 1 to 1,000; a window of 1 to
-- 86,400 seconds.
CREATE OR REPLACE FUNCTION buzz_private.rate_keys(
    p_scope text, p_keys text[], p_limit integer, p_seconds integer)
RETURNS text[]
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF p_scope IS NULL OR p_scope !~ '^[a-z_]{1,32}$' THEN
        RAISE EXCEPTION 'p_scope must be 1 to 32 of a-z and _'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF p_keys IS NULL OR pg_catalog.cardinality(p_keys) NOT BETWEEN 1 AND 8
       OR EXISTS (SELECT FROM pg_catalog.unnest(p_keys) k
                  WHERE k IS NULL OR pg_catalog.length(k) NOT BETWEEN 1 AND 200) THEN
        RAISE EXCEPTION 'p_keys must be 1 to 8 keys of 1 to 200 characters'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF p_limit IS NULL OR p_limit NOT BETWEEN 1 AND 1000 THEN
        RAISE EXCEPTION 'p_limit must be 1 to 1000' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF p_seconds IS NULL OR p_seconds NOT BETWEEN 1 AND 86400 THEN
        RAISE EXCEPTION 'p_seconds must be 1 to 86400' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    RETURN ARRAY(SELECT DISTINCT k COLLATE "C" FROM pg_catalog.unnest(p_keys) k ORDER BY 1);
END
$$;
ALTER FUNCTION buzz_private.rate_keys(text, text[], integer, integer) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.rate_keys(text, text[], integer, integer) FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.rate_keys(text, text[], integer, integer) IS
    'The keys of a rate call, distinct and sorted, its arguments checked (22023).';
