-- buzz_private.normalize_pubkey(p_value, p_argument) -> text
-- A pubkey as 64 lowercase hex characters; uppercase input is lowercased.
-- Raises BZIPK, naming the argument (never echoing the value), for NULL or anything else.
CREATE OR REPLACE FUNCTION buzz_private.normalize_pubkey(p_value text, p_argument text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    -- ASCII classes before lower(): some non-ASCII letters (U+212A KELVIN SIGN) lower to ASCII.
    -- A length and a character class: much cheaper than the bounded repetition {64}.
    IF p_value IS NULL OR pg_catalog.length(p_value) <> 64 OR p_value ~ '[^0-9A-Fa-f]' THEN
        RAISE EXCEPTION '% must be a pubkey: 64 hexadecimal characters', p_argument
            USING ERRCODE = 'BZIPK', HINT = 'Decode npub keys to hex before calling.';
    END IF;
    RETURN pg_catalog.lower(p_value);
END
$$;
ALTER FUNCTION buzz_private.normalize_pubkey(text, text) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.normalize_pubkey(text, text) FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.normalize_pubkey(text, text) IS
    'A pubkey as lowercase hex, or BZIPK naming the argument.';
