-- buzz.clear_kind_rule(p_community uuid, p_kind integer) -> text
-- Takes a kind off the community's allowed and disallowed kinds: it is neither. (With an
-- empty allow list such a kind goes upstream; with a non-empty one it does not.)
-- Not a membership write: no list. Every relay process reloads the community's rules when it
-- commits (NOTIFY buzz_moderation).
-- Outcomes: 'updated'; 'unchanged' (it was neither already).
-- Raises: 22023 (p_kind not 0..65535), BZNCM, BZARC.
-- Locks: community FOR KEY SHARE, the moderation lock (lock_moderation), the kind's row.
CREATE OR REPLACE FUNCTION buzz.clear_kind_rule(p_community uuid, p_kind integer)
RETURNS text
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN buzz_private.set_kind_rule(p_community, p_kind, NULL);
END
$$;
ALTER FUNCTION buzz.clear_kind_rule(uuid, integer) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.clear_kind_rule(uuid, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.clear_kind_rule(uuid, integer) TO buzz_writer;
COMMENT ON FUNCTION buzz.clear_kind_rule(uuid, integer) IS
    'Takes a kind off the allowed and disallowed kinds: updated | unchanged.';
