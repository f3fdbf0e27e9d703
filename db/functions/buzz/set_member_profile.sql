-- buzz.set_member_profile(p_community uuid, p_event text) -> text
-- Keeps a current member's own profile (SPEC sections 7 and 8): p_event is their kind 0
-- event as NIP-01 JSON, at most 16,384 bytes. It is checked here, whoever sends it: its
-- shape (id, pubkey, created_at, kind 0, tags of strings, content, sig), its id computed
-- again from its content and its BIP-340 signature by its pubkey, so that no writer can
-- make an event live that a client could not verify. Replaceable, as NIP-01 says: the newest
-- created_at is kept, and of two at the same second the lower id. Stored compact, as the
-- relay serves it; a member's removal, ban or leave deletes it in its transaction
-- (release_departed). Not a membership write: no list. Every relay process hears
-- of a stored profile when it commits (NOTIFY buzz_profiles, payload '<community> <pubkey>').
-- Text with control characters other than tab, line breaks, backspace and form feed is
-- refused: NIP-01 writes them as they are, JSON cannot.
-- Outcomes: 'stored'; 'not_member' (the author is not a member), 'older' (a newer profile,
-- or this one, is kept) (no change).
-- Raises: 22023 (not a kind 0 event of that shape and size, or its id does not match its
-- content), BZSIG (its signature does not verify), BZISO, BZNCM, BZARC.
-- Locks: community FOR KEY SHARE; the member's row FOR KEY SHARE (a removal under way
-- finishes first, and then the profile is refused; a removal that comes later waits for this
-- and deletes the profile), the profile's row.
CREATE OR REPLACE FUNCTION buzz.set_member_profile(p_community uuid, p_event text)
RETURNS text
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_event json;
    v_tags text;
    v_serialized text;
    v_compact text;
    v_stored boolean;
BEGIN
    IF p_event IS NULL OR pg_catalog.octet_length(p_event) > 16384 THEN
        RAISE EXCEPTION 'p_event must be an event of at most 16384 bytes'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    BEGIN
        v_event := p_event::json;
        IF pg_catalog.json_typeof(v_event) <> 'object'
           OR pg_catalog.json_typeof(v_event -> 'created_at') IS DISTINCT FROM 'number'
           OR pg_catalog.json_typeof(v_event -> 'kind') IS DISTINCT FROM 'number'
           OR pg_catalog.json_typeof(v_event -> 'tags') IS DISTINCT FROM 'array'
           OR pg_catalog.json_typeof(v_event -> 'content') IS DISTINCT FROM 'string'
           OR (v_event ->> 'kind') <> '0'
           OR (v_event ->> 'created_at') !~ '^[0-9]{1,15}$'
           OR (v_event ->> 'id') !~ '^[0-9a-f]{64}$'
           OR (v_event ->> 'pubkey') !~ '^[0-9a-f]{64}$'
           OR (v_event ->> 'sig') !~ '^[0-9a-f]{128}$'
           OR (v_event ->> 'content') ~ '[\x01-\x07\x0b\x0e-\x1f]'
           OR EXISTS (SELECT FROM pg_catalog.json_array_elements(v_event -> 'tags') t
                      WHERE pg_catalog.json_typeof(t.value) <> 'array'
                         OR EXISTS (SELECT FROM pg_catalog.json_array_elements(t.value) x
                                    WHERE pg_catalog.json_typeof(x.value) <> 'string'
                                       OR (x.value #>> '{}') ~ '[\x01-\x07\x0b\x0e-\x1f]'))
        THEN
            RAISE EXCEPTION 'p_event is not a kind 0 event' USING ERRCODE = 'invalid_parameter_value';
        END IF;
    EXCEPTION
        WHEN invalid_text_representation OR untranslatable_character THEN
            RAISE EXCEPTION 'p_event is not a JSON event' USING ERRCODE = 'invalid_parameter_value';
    END;
    -- NIP-01's serialization, built from the parsed event: to_json escapes as NIP-01 does
    -- once the control characters above are refused.
    SELECT coalesce('[' || pg_catalog.string_agg(
               coalesce((SELECT '[' || pg_catalog.string_agg(pg_catalog.to_json(x.value)::text, ','
                                                             ORDER BY x.n) || ']'
                         FROM pg_catalog.json_array_elements_text(t.value) WITH ORDINALITY x (value, n)),
                        '[]'), ',' ORDER BY t.n) || ']', '[]')
    INTO v_tags
    FROM pg_catalog.json_array_elements(v_event -> 'tags') WITH ORDINALITY t (value, n);
    v_serialized := pg_catalog.concat(
        '[0,', pg_catalog.to_json(v_event ->> 'pubkey'), ',', v_event ->> 'created_at', ',0,',
        v_tags, ',', pg_catalog.to_json(v_event ->> 'content'), ']');
    IF buzz_private.event_id(v_serialized) <> v_event ->> 'id' THEN
        RAISE EXCEPTION 'the id of p_event does not match its content'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF NOT buzz_private.bip340_verify(pg_catalog.decode(v_event ->> 'sig', 'hex'),
                                      pg_catalog.decode(v_event ->> 'id', 'hex'),
                                      pg_catalog.decode(v_event ->> 'pubkey', 'hex')) THEN
        RAISE EXCEPTION 'the signature of p_event does not verify' USING ERRCODE = 'BZSIG';
    END IF;
    PERFORM buzz_private.require_read_committed();
    PERFORM buzz_private.lock_community(p_community);
    v_compact := pg_catalog.concat(
        '{"id":', pg_catalog.to_json(v_event ->> 'id'),
        ',"pubkey":', pg_catalog.to_json(v_event ->> 'pubkey'),
        ',"created_at":', v_event ->> 'created_at', ',"kind":0,"tags":', v_tags,
        ',"content":', pg_catalog.to_json(v_event ->> 'content'),
        ',"sig":', pg_catalog.to_json(v_event ->> 'sig'), '}');
    -- The member's row: a removal under way finishes first, a later one waits for this.
    PERFORM FROM buzz_private.relay_members m
    WHERE m.community_id = p_community AND m.pubkey = v_event ->> 'pubkey'
    FOR KEY SHARE;
    IF NOT FOUND THEN
        RETURN 'not_member';
    END IF;
    INSERT INTO buzz_private.member_profiles AS p (community_id, pubkey, id, created_at, event)
    VALUES (p_community, v_event ->> 'pubkey', v_event ->> 'id',
            (v_event ->> 'created_at')::bigint, v_compact)
    ON CONFLICT (community_id, pubkey) DO UPDATE
        SET id = excluded.id, created_at = excluded.created_at, event = excluded.event
        WHERE excluded.created_at > p.created_at
           OR (excluded.created_at = p.created_at AND excluded.id < p.id)
    RETURNING true INTO v_stored;
    IF v_stored IS NULL THEN
        RETURN 'older';
    END IF;
    PERFORM pg_catalog.pg_notify('buzz_profiles', p_community::text || ' ' || (v_event ->> 'pubkey'));
    RETURN 'stored';
END
$$;
ALTER FUNCTION buzz.set_member_profile(uuid, text) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.set_member_profile(uuid, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.set_member_profile(uuid, text) TO buzz_writer;
COMMENT ON FUNCTION buzz.set_member_profile(uuid, text) IS
    'Keeps a member''s own kind 0 profile, checked and verified: stored | not_member | older.';
