-- buzz_private.check_display_text(p_value text, p_argument text, p_max integer,
--                                  p_lines boolean) -> text
-- A name a person reads (SPEC §10, "Names a person reads": the community's name and
-- description, role labels and descriptions), returned as it was given: 1 to p_max
-- characters, not only whitespace, and none of Unicode's control (Cc), format (Cf: the
-- bidirectional overrides and isolates, zero-width characters, the byte order mark, tag
-- characters), line separator (Zl) or paragraph separator (Zp) characters; with p_lines, a
-- line break (\n, \r) is allowed (a description). Nothing is trimmed or altered: what would
-- show other than it reads is refused. NULL passes (the callers say what NULL means).
-- The Cf ranges are Unicode 15's (PostgreSQL's regular expressions have no \p{Cf}).
-- Raises 22023 (invalid_parameter_value), naming the argument, never echoing the value.
CREATE OR REPLACE FUNCTION buzz_private.check_display_text(
    p_value text, p_argument text, p_max integer, p_lines boolean)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF p_value IS NULL THEN
        RETURN NULL;
    END IF;
    IF pg_catalog.char_length(p_value) NOT BETWEEN 1 AND p_max THEN
        RAISE EXCEPTION '% must be 1 to % characters', p_argument, p_max
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF p_value ~ '^[\u0009-\u000d\u0020\u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*$' THEN
        RAISE EXCEPTION '% must hold more than whitespace', p_argument
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF (CASE WHEN p_lines THEN pg_catalog.regexp_replace(p_value, '[\n\r]', '', 'g') ELSE p_value END)
       ~ ('[\u0001-\u001f\u007f-\u009f\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2'
          '\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb'
          '\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3'
          '\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f]') THEN
        RAISE EXCEPTION '% must not hold control, format (bidirectional, zero-width) or separator characters%',
                p_argument, CASE WHEN p_lines THEN ' but line breaks' ELSE '' END
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    RETURN p_value;
END
$$;
ALTER FUNCTION buzz_private.check_display_text(text, text, integer, boolean) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.check_display_text(text, text, integer, boolean) FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.check_display_text(text, text, integer, boolean) IS
    'A name a person reads, as given: 1 to p_max characters, not blank, no Cc/Cf/Zl/Zp, else 22023.';
