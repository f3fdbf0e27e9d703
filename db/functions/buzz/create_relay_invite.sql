-- buzz.create_relay_invite(p_community uuid, p_created_by text, p_max_uses integer DEFAULT 1,
--                          p_ttl interval DEFAULT '72 hours')
--   -> TABLE(invite_id uuid, code text, expires_at timestamptz)
-- Mints an invite code (128 random bits, 32 hex characters). The code is returned this once;
-- only its sha256 is stored. Not a membership write.
-- p_max_uses: NULL for unlimited, else 1..10000. p_ttl: 60 seconds .. 30 days.
-- Raises: BZINV (uses or ttl out of range), 22023 (p_created_by), BZNCM, BZARC.
CREATE OR REPLACE FUNCTION buzz.create_relay_invite(
    p_community uuid, p_created_by text, p_max_uses integer DEFAULT 1,
    p_ttl interval DEFAULT '72 hours')
RETURNS TABLE (invite_id uuid, code text, expires_at timestamptz)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_created_by text := buzz_private.normalize_actor(p_created_by, 'p_created_by', true);
BEGIN
    IF p_max_uses NOT BETWEEN 1 AND 10000 THEN
        RAISE EXCEPTION 'p_max_uses must be NULL (unlimited) or 1 to 10000'
            USING ERRCODE = 'BZINV';
    END IF;
    IF p_ttl IS NULL OR p_ttl < interval '60 seconds' OR p_ttl > interval '30 days' THEN
        RAISE EXCEPTION 'p_ttl must be between 60 seconds and 30 days'
            USING ERRCODE = 'BZINV';
    END IF;
    PERFORM buzz_private.lock_community(p_community);
    -- gen_random_uuid() draws from the server's strong random source; sha256 of two of them
    -- (244 random bits) cut to 128 bits gives a plain hex code without an extension.
    code := pg_catalog.left(pg_catalog.encode(pg_catalog.sha256(
                pg_catalog.uuid_send(pg_catalog.gen_random_uuid())
                || pg_catalog.uuid_send(pg_catalog.gen_random_uuid())), 'hex'), 32);
    INSERT INTO buzz_private.relay_invites AS i
        (community_id, code_sha256, created_by, expires_at, max_uses)
    VALUES (p_community, pg_catalog.sha256(pg_catalog.convert_to(code, 'UTF8')), v_created_by,
            pg_catalog.clock_timestamp() + p_ttl, p_max_uses)
    RETURNING i.invite_id, i.expires_at INTO invite_id, expires_at;
    RETURN NEXT;
END
$$;
ALTER FUNCTION buzz.create_relay_invite(uuid, text, integer, interval) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.create_relay_invite(uuid, text, integer, interval) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.create_relay_invite(uuid, text, integer, interval) TO buzz_writer;
COMMENT ON FUNCTION buzz.create_relay_invite(uuid, text, integer, interval) IS
    'Mints an invite; the code is shown once and stored only as its sha256.';
