-- buzz.set_community_profile(p_community uuid, p_field text, p_value text) -> text
-- Sets one field of what the community shows to people (NIP-11, its page): 'name' (1-64
-- characters), 'description' (at most 2,000 characters; line breaks allowed), each a name a
-- person reads (check_display_text: not blank, no control, format or separator character), or
-- 'icon' (an https:// URL of at most 500 characters, without spaces, quotes, angle
-- brackets or backslashes, as the table's check says). NULL clears the field. Not a
-- membership write: no list.
-- Outcomes: 'updated'; 'unchanged' (the field held that value already).
-- Raises: 22023 (an unknown field, a value out of its bounds: nothing changes), BZNCM, BZARC.
-- Locks: community FOR KEY SHARE, the profile row.
CREATE OR REPLACE FUNCTION buzz.set_community_profile(
    p_community uuid, p_field text, p_value text)
RETURNS text
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_name text;
    v_description text;
    v_icon text;
BEGIN
    IF p_field IS NULL OR p_field NOT IN ('name', 'description', 'icon') THEN
        RAISE EXCEPTION 'p_field must be name, description or icon'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF p_value IS NOT NULL THEN
        IF p_field = 'name' THEN
            PERFORM buzz_private.check_display_text(p_value, 'a name', 64, false);
        ELSIF p_field = 'description' THEN
            PERFORM buzz_private.check_display_text(p_value, 'a description', 2000, true);
        ELSIF p_field = 'icon' AND (pg_catalog.char_length(p_value) > 500
                                    OR p_value !~ '^https://[^/?#[:space:][:cntrl:]"<>\\]+([/?#][^[:space:][:cntrl:]"<>\\]*)?$') THEN
            RAISE EXCEPTION 'an icon must be an https:// URL of at most 500 characters'
                USING ERRCODE = 'invalid_parameter_value';
        END IF;
    END IF;
    PERFORM buzz_private.lock_community(p_community);
    SELECT p.name, p.description::text, p.icon INTO v_name, v_description, v_icon
    FROM buzz_private.community_profiles p
    WHERE p.community_id = p_community
    FOR NO KEY UPDATE;
    IF NOT FOUND THEN
        IF p_value IS NULL THEN
            RETURN 'unchanged';
        END IF;
        -- A concurrent first setter may make the row: then update it as if it had been there.
        INSERT INTO buzz_private.community_profiles (community_id) VALUES (p_community)
        ON CONFLICT (community_id) DO NOTHING;
    ELSIF (CASE p_field WHEN 'name' THEN v_name WHEN 'description' THEN v_description
                        ELSE v_icon END) IS NOT DISTINCT FROM p_value THEN
        RETURN 'unchanged';
    END IF;
    UPDATE buzz_private.community_profiles p
    SET name = CASE WHEN p_field = 'name' THEN p_value ELSE p.name END,
        description = CASE WHEN p_field = 'description' THEN p_value ELSE p.description END,
        icon = CASE WHEN p_field = 'icon' THEN p_value ELSE p.icon END,
        updated_at = pg_catalog.now()
    WHERE p.community_id = p_community
      -- A searched CASE: Citus deparses a simple one with its parameter folded into
      -- 'name' = true (text = boolean) when it sends the statement to the shard.
      AND (CASE WHEN p_field = 'name' THEN p.name
                WHEN p_field = 'description' THEN p.description::text
                ELSE p.icon END) IS DISTINCT FROM p_value;
    RETURN CASE WHEN FOUND THEN 'updated' ELSE 'unchanged' END;
END
$$;
ALTER FUNCTION buzz.set_community_profile(uuid, text, text) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.set_community_profile(uuid, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.set_community_profile(uuid, text, text) TO buzz_writer;
COMMENT ON FUNCTION buzz.set_community_profile(uuid, text, text) IS
    'Sets or clears the community''s name, description or icon: updated | unchanged.';
