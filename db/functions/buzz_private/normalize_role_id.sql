-- buzz_private.normalize_role_id(p_role, p_base) -> text
-- A role id (SPEC §6: 1-64 characters of [a-z0-9_-]) as given; BZIRL for anything else,
-- NULL included. p_base: whether the calling function accepts a base role (owner, admin,
-- member): define_role does, the others take defined roles only. Nothing is lower-cased:
-- 'Mod' is not a role id, and changing it silently would name another role.
CREATE OR REPLACE FUNCTION buzz_private.normalize_role_id(p_role text, p_base boolean)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF p_role IS NULL OR p_role !~ '^[a-z0-9_-]{1,64}$' THEN
        RAISE EXCEPTION 'p_role must be a role id: 1-64 characters of a-z, 0-9, _ and -'
            USING ERRCODE = 'BZIRL';
    END IF;
    IF NOT p_base AND p_role IN ('owner', 'admin', 'member') THEN
        RAISE EXCEPTION 'p_role must be a defined role, not a base role (owner, admin, member)'
            USING ERRCODE = 'BZIRL',
                  HINT = 'Base roles change with update_relay_member_role or transfer_ownership.';
    END IF;
    RETURN p_role;
END
$$;
ALTER FUNCTION buzz_private.normalize_role_id(text, boolean) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.normalize_role_id(text, boolean) FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.normalize_role_id(text, boolean) IS
    'The role id if well-formed (and not a base role unless p_base), else BZIRL.';
