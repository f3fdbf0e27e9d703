-- buzz_private.normalize_note(p_value, p_argument, p_max) -> text
-- Free text a person wrote (a reason, a note, a description): at most p_max characters, no
-- control character but tab and line breaks. NULL passes; so does '' (as NULL: nothing said).
-- Raises 22023 (invalid_parameter_value), naming the argument, never echoing the value.
CREATE OR REPLACE FUNCTION buzz_private.normalize_note(
    p_value text, p_argument text, p_max integer)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF p_value IS NULL OR p_value = '' THEN
        RETURN NULL;
    END IF;
    IF pg_catalog.char_length(p_value) > p_max
       OR p_value ~ '[\x01-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]' THEN
        RAISE EXCEPTION '% must be at most % characters, without control characters',
                p_argument, p_max
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    RETURN p_value;
END
$$;
ALTER FUNCTION buzz_private.normalize_note(text, text, integer) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.normalize_note(text, text, integer) FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.normalize_note(text, text, integer) IS
    'Free text of at most p_max characters without control characters, else 22023.';
