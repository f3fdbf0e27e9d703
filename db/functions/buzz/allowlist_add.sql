-- buzz.allowlist_add(p_community uuid, p_pubkey text, p_note text DEFAULT NULL) -> text
-- Puts a pubkey on the community's allowlist (see backfill_from_allowlist). Not a membership
-- write. Outcomes: 'added'; 'already_listed' (the note is left as it is).
-- Raises: BZIPK, 22023 (note over 1000 characters), BZNCM, BZARC.
CREATE OR REPLACE FUNCTION buzz.allowlist_add(
    p_community uuid, p_pubkey text, p_note text DEFAULT NULL)
RETURNS text
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_pubkey text := buzz_private.normalize_pubkey(p_pubkey, 'p_pubkey');
BEGIN
    IF pg_catalog.length(p_note) > 1000 THEN
        RAISE EXCEPTION 'p_note must be at most 1000 characters'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    PERFORM buzz_private.lock_community(p_community);
    INSERT INTO buzz_private.relay_allowlist (community_id, pubkey, note)
    VALUES (p_community, v_pubkey, p_note)
    ON CONFLICT (community_id, pubkey) DO NOTHING;
    RETURN CASE WHEN FOUND THEN 'added' ELSE 'already_listed' END;
END
$$;
ALTER FUNCTION buzz.allowlist_add(uuid, text, text) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.allowlist_add(uuid, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.allowlist_add(uuid, text, text) TO buzz_writer;
COMMENT ON FUNCTION buzz.allowlist_add(uuid, text, text) IS
    'Adds a pubkey to the allowlist: added | already_listed.';
