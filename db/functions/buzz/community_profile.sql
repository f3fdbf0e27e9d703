-- buzz.community_profile(p_community uuid)
--   -> TABLE(name text, description text, icon text, join_policy text)
-- What the community shows to people, and its join policy ('invite' when never set). One
-- row for a community (archived included), none for an unknown one.
CREATE OR REPLACE FUNCTION buzz.community_profile(p_community uuid)
RETURNS TABLE (name text, description text, icon text, join_policy text)
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT p.name, p.description::text, p.icon, coalesce(p.join_policy, 'invite')
    FROM buzz_private.communities c
    LEFT JOIN buzz_private.community_profiles p ON p.community_id = c.community_id
    WHERE c.community_id = p_community;
END;
ALTER FUNCTION buzz.community_profile(uuid) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.community_profile(uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.community_profile(uuid) TO buzz_reader;
COMMENT ON FUNCTION buzz.community_profile(uuid) IS
    'The community''s name, description, icon and join policy.';
