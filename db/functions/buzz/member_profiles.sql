-- buzz.member_profiles(p_community uuid, p_authors text[] DEFAULT NULL, p_since bigint
--     DEFAULT NULL, p_until bigint DEFAULT NULL, p_limit integer DEFAULT 500, p_ids text[]
--     DEFAULT NULL) -> SETOF text
-- A REQ filter on the current members' own profiles (kind 0, set_member_profile): each as
-- its NIP-01 JSON text, of the events p_ids by the authors p_authors, with created_at from
-- p_since to p_until (each NULL: no condition), newest first, at most p_limit of them. By
-- the index on ids for the ids, by the primary key for the authors, else back in time by
-- member_profiles_newest, stopping at the limit. p_ids is last so that the calls made
-- before it existed keep their meaning.
-- Raises: 22023 (p_limit negative, or an array of over 1,000 values).
CREATE OR REPLACE FUNCTION buzz.member_profiles(
    p_community uuid, p_authors text[] DEFAULT NULL, p_since bigint DEFAULT NULL,
    p_until bigint DEFAULT NULL, p_limit integer DEFAULT 500, p_ids text[] DEFAULT NULL)
RETURNS SETOF text
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_since bigint := coalesce(p_since, 0);
    v_until bigint := coalesce(p_until, 9223372036854775807);
BEGIN
    IF p_limit < 0 THEN
        RAISE EXCEPTION 'p_limit must not be negative' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF pg_catalog.cardinality(p_authors) > 1000 THEN
        RAISE EXCEPTION 'p_authors holds at most 1000 values'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF pg_catalog.cardinality(p_ids) > 1000 THEN
        RAISE EXCEPTION 'p_ids holds at most 1000 values'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF p_ids IS NOT NULL THEN
        RETURN QUERY
        SELECT p.event FROM buzz_private.member_profiles p
        WHERE p.community_id = p_community AND p.id = ANY (p_ids)
          AND (p_authors IS NULL OR p.pubkey = ANY (p_authors))
          AND p.created_at BETWEEN v_since AND v_until
        ORDER BY p.created_at DESC, p.pubkey
        LIMIT coalesce(p_limit, 500);
    ELSIF p_authors IS NOT NULL THEN
        RETURN QUERY
        SELECT p.event FROM buzz_private.member_profiles p
        WHERE p.community_id = p_community AND p.pubkey = ANY (p_authors)
          AND p.created_at BETWEEN v_since AND v_until
        ORDER BY p.created_at DESC, p.pubkey
        LIMIT coalesce(p_limit, 500);
    ELSE
        RETURN QUERY
        SELECT p.event FROM buzz_private.member_profiles p
        WHERE p.community_id = p_community AND p.created_at BETWEEN v_since AND v_until
        ORDER BY p.created_at DESC, p.pubkey
        LIMIT coalesce(p_limit, 500);
    END IF;
END
$$;
ALTER FUNCTION buzz.member_profiles(uuid, text[], bigint, bigint, integer, text[])
    OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.member_profiles(uuid, text[], bigint, bigint, integer, text[])
    FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.member_profiles(uuid, text[], bigint, bigint, integer, text[])
    TO buzz_reader;
COMMENT ON FUNCTION buzz.member_profiles(uuid, text[], bigint, bigint, integer, text[]) IS
    'The current members'' own kind 0 profiles for one REQ filter, newest first.';
