-- buzz.unassign_method(p_community uuid, p_pubkey text, p_method text) -> text
-- Takes an assigned NIP-86 method from a pubkey, member or not. Any method name of the right
-- shape is taken, so that an assignment outlives no change of what may be assigned.
-- Not a membership write: no list. Every relay process reloads the community's rules when it
-- commits (NOTIFY buzz_moderation).
-- Outcomes: 'unassigned'; 'not_assigned' (no change).
-- Raises: BZIPK, 22023 (p_method not 1-64 characters of a-z), BZNCM, BZARC.
-- Locks: community FOR KEY SHARE, the moderation lock (lock_moderation), the row.
CREATE OR REPLACE FUNCTION buzz.unassign_method(p_community uuid, p_pubkey text, p_method text)
RETURNS text
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_pubkey text := buzz_private.normalize_pubkey(p_pubkey, 'p_pubkey');
BEGIN
    IF p_method IS NULL OR p_method !~ '^[a-z]{1,64}$' THEN
        RAISE EXCEPTION 'p_method must be a NIP-86 method name: 1 to 64 characters of a-z'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    PERFORM buzz_private.lock_moderation(p_community);
    DELETE FROM buzz_private.method_assignments a
    WHERE a.community_id = p_community AND a.pubkey = v_pubkey AND a.method = p_method;
    IF NOT FOUND THEN
        RETURN 'not_assigned';
    END IF;
    PERFORM buzz_private.announce_moderation(p_community);
    RETURN 'unassigned';
END
$$;
ALTER FUNCTION buzz.unassign_method(uuid, text, text) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.unassign_method(uuid, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.unassign_method(uuid, text, text) TO buzz_writer;
COMMENT ON FUNCTION buzz.unassign_method(uuid, text, text) IS
    'Takes an assigned NIP-86 method from a pubkey: unassigned | not_assigned.';
