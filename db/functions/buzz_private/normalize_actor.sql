-- buzz_private.normalize_actor(p_value, p_argument, p_required) -> text
-- Who did something (p_added_by, p_created_by): a pubkey, lowercased, or a short label such
-- as 'invite' (1-64 characters, no control characters). NULL passes unless p_required.
-- Raises 22023 (invalid_parameter_value) otherwise.
CREATE OR REPLACE FUNCTION buzz_private.normalize_actor(
    p_value text, p_argument text, p_required boolean DEFAULT false)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF p_value IS NULL AND NOT p_required THEN
        RETURN NULL;
    END IF;
    IF pg_catalog.length(p_value) = 64 AND p_value !~ '[^0-9A-Fa-f]' THEN
        RETURN pg_catalog.lower(p_value);
    END IF;
    IF p_value IS NULL OR pg_catalog.length(p_value) NOT BETWEEN 1 AND 64
       OR p_value ~ '[[:cntrl:]]' THEN
        RAISE EXCEPTION '% must be a pubkey or a label of 1 to 64 printable characters',
                p_argument
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    RETURN p_value;
END
$$;
ALTER FUNCTION buzz_private.normalize_actor(text, text, boolean) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.normalize_actor(text, text, boolean) FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.normalize_actor(text, text, boolean) IS
    'A pubkey (lowercased) or a short label naming who acted, else 22023.';
