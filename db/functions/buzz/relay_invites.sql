-- buzz.relay_invites(p_community uuid)
--   -> TABLE(invite_id uuid, created_by text, created_at timestamptz, expires_at timestamptz,
--            max_uses integer, use_count integer, sealed text)
-- The invites of a community, oldest first, expired and used-up ones included (an operator's
-- view); never their codes, which are stored only as hashes. sealed is what the invite's maker
-- kept with it (create_relay_invite's p_sealed: the relay's sealed copy of the code), NULL for
-- the others. No rows for an unknown community. For writers only: who invited whom is not for
-- readers.
CREATE OR REPLACE FUNCTION buzz.relay_invites(p_community uuid)
RETURNS TABLE (invite_id uuid, created_by text, created_at timestamptz, expires_at timestamptz,
               max_uses integer, use_count integer, sealed text)
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT i.invite_id, i.created_by, i.created_at, i.expires_at, i.max_uses, i.use_count,
           i.sealed
    FROM buzz_private.relay_invites i
    WHERE i.community_id = p_community
    ORDER BY i.created_at, i.invite_id;
END;
ALTER FUNCTION buzz.relay_invites(uuid) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.relay_invites(uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.relay_invites(uuid) TO buzz_writer;
COMMENT ON FUNCTION buzz.relay_invites(uuid) IS
    'Invites of a community, oldest first, without codes (with their sealed copies).';
