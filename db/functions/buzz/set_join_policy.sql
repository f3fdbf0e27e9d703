-- buzz.set_join_policy(p_community uuid, p_policy text) -> text
-- How someone without an invite may join: 'invite' (the default: a claim is needed),
-- 'request' (they may ask; an owner or admin approves, approve_join_request) or 'open'
-- (anyone who asks joins at once, request_membership). Pending requests stay as they are
-- whatever the new policy. Not a membership write: no list.
-- Outcomes: 'updated'; 'unchanged'.
-- Raises: 22023 (another policy), BZNCM, BZARC. Locks: community FOR KEY SHARE, the profile row.
CREATE OR REPLACE FUNCTION buzz.set_join_policy(p_community uuid, p_policy text)
RETURNS text
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_policy text;
    -- A value, not a call: Citus plans no function but IMMUTABLE ones in DO UPDATE SET.
    v_now timestamptz := pg_catalog.now();
BEGIN
    IF p_policy IS NULL OR p_policy NOT IN ('invite', 'request', 'open') THEN
        RAISE EXCEPTION 'p_policy must be invite, request or open'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    PERFORM buzz_private.lock_community(p_community);
    SELECT p.join_policy INTO v_policy
    FROM buzz_private.community_profiles p
    WHERE p.community_id = p_community
    FOR NO KEY UPDATE;
    IF coalesce(v_policy, 'invite') = p_policy THEN
        RETURN 'unchanged';
    END IF;
    -- A concurrent first setter may make the row: then this one updates it, if it differs.
    INSERT INTO buzz_private.community_profiles AS p (community_id, join_policy)
    VALUES (p_community, p_policy)
    ON CONFLICT (community_id) DO UPDATE
        SET join_policy = excluded.join_policy, updated_at = v_now
        WHERE p.join_policy IS DISTINCT FROM excluded.join_policy;
    RETURN CASE WHEN FOUND THEN 'updated' ELSE 'unchanged' END;
END
$$;
ALTER FUNCTION buzz.set_join_policy(uuid, text) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.set_join_policy(uuid, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.set_join_policy(uuid, text) TO buzz_writer;
COMMENT ON FUNCTION buzz.set_join_policy(uuid, text) IS
    'Sets the join policy (invite | request | open): updated | unchanged.';
