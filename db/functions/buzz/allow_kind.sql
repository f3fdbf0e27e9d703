-- buzz.allow_kind(p_community uuid, p_kind integer) -> text
-- Allows a kind: once a community allows any kind, only its allowed kinds go upstream through
-- the gate (membership kinds are the relay's own and never ruled).
-- A kind is allowed, disallowed or neither (clear_kind_rule); this call moves it to allowed.
-- Not a membership write: no list. Every relay process reloads the community's rules when it
-- commits (NOTIFY buzz_moderation).
-- Outcomes: 'updated'; 'unchanged' (it was allowed already).
-- Raises: 22023 (p_kind not 0..65535), BZNCM, BZARC.
-- Locks: community FOR KEY SHARE, the moderation lock (lock_moderation), the kind's row.
CREATE OR REPLACE FUNCTION buzz.allow_kind(p_community uuid, p_kind integer)
RETURNS text
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN buzz_private.set_kind_rule(p_community, p_kind, true);
END
$$;
ALTER FUNCTION buzz.allow_kind(uuid, integer) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.allow_kind(uuid, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.allow_kind(uuid, integer) TO buzz_writer;
COMMENT ON FUNCTION buzz.allow_kind(uuid, integer) IS
    'Moves a kind to the community''s allowed kinds: updated | unchanged.';
