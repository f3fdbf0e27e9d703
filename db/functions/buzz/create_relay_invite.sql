-- buzz.create_relay_invite(p_community uuid, p_created_by text, p_max_uses integer DEFAULT 1,
--                          p_ttl interval DEFAULT '72 hours', p_code text DEFAULT NULL,
--                          p_sealed text DEFAULT NULL)
--   -> TABLE(invite_id uuid, code text, expires_at timestamptz)
-- Makes an invite. Its code is the caller's p_code (8-128 characters of [A-Za-z0-9_-], as a
-- client such as Flotilla chooses them), or, when NULL, 128 random bits drawn here (32 hex
-- characters). Codes are compared without regard to case, so only the sha256 of the
-- lower-cased code is stored, and the code is returned this once. p_sealed is opaque text
-- kept with the invite and returned by relay_invites: the relay keeps there the code sealed to
-- its own key, so that it can list its codes while the database never holds a readable one.
-- A code equal to an invite of the community that is expired or used up replaces that
-- invite; equal to a live one, it is refused. Not a membership write.
-- p_max_uses: NULL for unlimited, else 1..10000. p_ttl: 60 seconds .. 30 days.
-- Invite quotas: a p_created_by that is a pubkey brings members in on its own quota
-- (invites_left: none for a non-member, no limit for the owner and, by default, admins); one
-- without invites left, or asking for more uses than it has left (unlimited uses are more
-- than any quota), gets BZQTA. A label (an operator's or a service's invite) has no quota.
-- Raises: BZINV (uses or ttl out of range, a malformed code, a code equal to a live invite's),
-- 22023 (p_created_by, p_sealed), BZNCM, BZARC, BZQTA.
-- Locks: community FOR KEY SHARE; when the creator's role has a quota, the quota lock: the
-- creator's member row FOR NO KEY UPDATE (two invites of one creator are counted one after the
-- other, and a change of its role or its removal waits or is waited for); an expired invite
-- row with the same code.
CREATE OR REPLACE FUNCTION buzz.create_relay_invite(
    p_community uuid, p_created_by text, p_max_uses integer DEFAULT 1,
    p_ttl interval DEFAULT '72 hours', p_code text DEFAULT NULL, p_sealed text DEFAULT NULL)
RETURNS TABLE (invite_id uuid, code text, expires_at timestamptz)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_created_by text := buzz_private.normalize_actor(p_created_by, 'p_created_by', true);
    v_sha256 bytea;
    v_now timestamptz;
    v_left integer;
BEGIN
    IF p_max_uses NOT BETWEEN 1 AND 10000 THEN
        RAISE EXCEPTION 'p_max_uses must be NULL (unlimited) or 1 to 10000'
            USING ERRCODE = 'BZINV';
    END IF;
    IF p_ttl IS NULL OR p_ttl < interval '60 seconds' OR p_ttl > interval '30 days' THEN
        RAISE EXCEPTION 'p_ttl must be between 60 seconds and 30 days'
            USING ERRCODE = 'BZINV';
    END IF;
    IF p_code IS NOT NULL
       AND (pg_catalog.length(p_code) NOT BETWEEN 8 AND 128 OR p_code ~ '[^A-Za-z0-9_-]') THEN
        RAISE EXCEPTION 'p_code must be 8 to 128 characters of A-Z, a-z, 0-9, _ and -'
            USING ERRCODE = 'BZINV', HINT = 'Pass NULL to have a code drawn.';
    END IF;
    IF p_sealed IS NOT NULL AND pg_catalog.length(p_sealed) NOT BETWEEN 1 AND 1000 THEN
        RAISE EXCEPTION 'p_sealed must be 1 to 1000 characters'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    PERFORM buzz_private.lock_community(p_community);
    IF v_created_by !~ '[^0-9a-f]' AND pg_catalog.length(v_created_by) = 64 THEN
        IF buzz_private.invite_quota(p_community,
                                     buzz_private.member_role(p_community, v_created_by))
           IS NOT NULL THEN
            PERFORM FROM buzz_private.relay_members m
            WHERE m.community_id = p_community AND m.pubkey = v_created_by
            FOR NO KEY UPDATE;
        END IF;
        v_left := buzz_private.invites_left(p_community, v_created_by);
        IF v_left = 0 AND buzz_private.member_role(p_community, v_created_by) IS NULL THEN
            RAISE EXCEPTION 'p_created_by is not a member of this community, so it has no invites'
                USING ERRCODE = 'BZQTA',
                      HINT = 'Only members bring others in: create the invite as a member, '
                             'an admin or the owner, or as an operator with a label.';
        ELSIF v_left = 0 THEN
            RAISE EXCEPTION 'p_created_by has no invites left in this community'
                USING ERRCODE = 'BZQTA',
                      HINT = 'Revoke one of its unused invites, or ask an owner or admin to '
                             'raise its role''s quota (set_invite_quota).';
        ELSIF v_left < coalesce(p_max_uses, 10001) THEN
            RAISE EXCEPTION 'p_created_by has % invites left in this community; p_max_uses asks for %',
                    v_left, coalesce(p_max_uses::text, 'unlimited uses')
                USING ERRCODE = 'BZQTA',
                      HINT = pg_catalog.format('Ask for at most %s uses.', v_left);
        END IF;
    END IF;
    -- gen_random_uuid() draws from the server's strong random source; sha256 of two of them
    -- (244 random bits) cut to 128 bits gives a plain hex code without an extension.
    code := coalesce(p_code,
                     pg_catalog.left(pg_catalog.encode(pg_catalog.sha256(
                         pg_catalog.uuid_send(pg_catalog.gen_random_uuid())
                         || pg_catalog.uuid_send(pg_catalog.gen_random_uuid())), 'hex'), 32));
    v_sha256 := pg_catalog.sha256(pg_catalog.convert_to(pg_catalog.lower(code), 'UTF8'));
    -- Read once, as a value: Citus refuses a volatile function in the WHERE of a DELETE on a
    -- distributed table.
    v_now := pg_catalog.clock_timestamp();
    IF p_code IS NOT NULL THEN
        DELETE FROM buzz_private.relay_invites i
        WHERE i.community_id = p_community AND i.code_sha256 = v_sha256
          AND (i.expires_at <= v_now OR i.use_count = i.max_uses);
    END IF;
    INSERT INTO buzz_private.relay_invites AS i
        (community_id, code_sha256, created_by, expires_at, max_uses, sealed)
    VALUES (p_community, v_sha256, v_created_by, v_now + p_ttl, p_max_uses, p_sealed)
    ON CONFLICT (community_id, code_sha256) DO NOTHING
    RETURNING i.invite_id, i.expires_at INTO invite_id, expires_at;
    IF NOT FOUND THEN
        -- Only a chosen code can meet another (drawn ones carry 128 random bits).
        RAISE EXCEPTION 'p_code is already a live invite of this community'
            USING ERRCODE = 'BZINV', HINT = 'Choose another code.';
    END IF;
    RETURN NEXT;
END
$$;
ALTER FUNCTION buzz.create_relay_invite(uuid, text, integer, interval, text, text)
    OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.create_relay_invite(uuid, text, integer, interval, text, text)
    FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.create_relay_invite(uuid, text, integer, interval, text, text)
    TO buzz_writer;
COMMENT ON FUNCTION buzz.create_relay_invite(uuid, text, integer, interval, text, text) IS
    'Makes an invite with a drawn or chosen code, shown once and stored only as its sha256.';
