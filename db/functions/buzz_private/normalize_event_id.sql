-- buzz_private.normalize_event_id(p_value, p_argument) -> text
-- An event id as 64 lowercase hex characters; uppercase input is lowercased.
-- Raises 22023 (invalid_parameter_value), naming the argument, for NULL or anything else.
CREATE OR REPLACE FUNCTION buzz_private.normalize_event_id(p_value text, p_argument text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF p_value IS NULL OR pg_catalog.length(p_value) <> 64 OR p_value ~ '[^0-9A-Fa-f]' THEN
        RAISE EXCEPTION '% must be an event id: 64 hexadecimal characters', p_argument
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    RETURN pg_catalog.lower(p_value);
END
$$;
ALTER FUNCTION buzz_private.normalize_event_id(text, text) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.normalize_event_id(text, text) FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.normalize_event_id(text, text) IS
    'An event id as lowercase hex, or 22023 naming the argument.';
