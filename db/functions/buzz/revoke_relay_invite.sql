-- buzz.revoke_relay_invite(p_community uuid, p_invite_id uuid) -> text
-- Deletes an invite; its code is 'invalid' from then on. Works on archived communities.
-- Outcomes: 'revoked'; 'not_found' (no such invite in this community).
-- Raises: BZNCM.
CREATE OR REPLACE FUNCTION buzz.revoke_relay_invite(p_community uuid, p_invite_id uuid)
RETURNS text
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM buzz_private.lock_community(p_community, p_allow_archived => true);
    DELETE FROM buzz_private.relay_invites i
    WHERE i.community_id = p_community AND i.invite_id = p_invite_id;
    RETURN CASE WHEN FOUND THEN 'revoked' ELSE 'not_found' END;
END
$$;
ALTER FUNCTION buzz.revoke_relay_invite(uuid, uuid) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.revoke_relay_invite(uuid, uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.revoke_relay_invite(uuid, uuid) TO buzz_writer;
COMMENT ON FUNCTION buzz.revoke_relay_invite(uuid, uuid) IS
    'Revokes an invite: revoked | not_found.';
