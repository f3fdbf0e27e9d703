-- buzz_private.normalize_host(p_host) -> text
-- A community host: a DNS name (RFC 1123 labels, at most 253 characters, no trailing dot)
-- with an optional :port (1-65535, no leading zero), lowercased. Raises BZHST otherwise.
CREATE OR REPLACE FUNCTION buzz_private.normalize_host(p_host text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_parts text[];
BEGIN
    -- ASCII classes before lower(), as for pubkeys. No backslash in the pattern: with
    -- standard_conforming_strings off a caller would turn '\.' into '.' (any character).
    v_parts := pg_catalog.regexp_match(p_host,
        '^([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?([.][A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*)(:([1-9][0-9]{0,4}))?$');
    IF v_parts IS NULL OR pg_catalog.length(v_parts[1]) > 253
       OR (v_parts[6] IS NOT NULL AND v_parts[6]::integer > 65535) THEN
        RAISE EXCEPTION 'p_host must be a DNS name with an optional :port, such as relay.example.org:8443'
            USING ERRCODE = 'BZHST',
                  HINT = 'No scheme, path, spaces or trailing dot; ports run from 1 to 65535.';
    END IF;
    RETURN pg_catalog.lower(p_host);
END
$$;
ALTER FUNCTION buzz_private.normalize_host(text) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.normalize_host(text) FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.normalize_host(text) IS
    'A lowercased host[:port], or BZHST.';
