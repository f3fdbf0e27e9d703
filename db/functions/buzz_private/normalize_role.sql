-- buzz_private.normalize_role(p_role, p_accepted) -> text
-- The role if it is one of p_accepted; BZIRL otherwise (NULL and unknown roles included).
CREATE OR REPLACE FUNCTION buzz_private.normalize_role(p_role text, p_accepted text[])
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF p_role IS NULL OR NOT p_role = ANY (p_accepted) THEN
        RAISE EXCEPTION 'p_role must be one of: %', pg_catalog.array_to_string(p_accepted, ', ')
            USING ERRCODE = 'BZIRL',
                  HINT = 'Ownership changes go through bootstrap_owner or transfer_ownership.';
    END IF;
    RETURN p_role;
END
$$;
ALTER FUNCTION buzz_private.normalize_role(text, text[]) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.normalize_role(text, text[]) FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.normalize_role(text, text[]) IS
    'The role if accepted by the calling function, else BZIRL.';
