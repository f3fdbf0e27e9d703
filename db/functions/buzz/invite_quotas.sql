-- buzz.invite_quotas(p_community uuid) -> TABLE(role text, quota integer)
-- The invite quota of each base role that has one to set, 'admin' then 'member' (NULL: no
-- limit), the defaults (admin NULL, member 0) where set_invite_quota never set it; no rows for
-- an unknown community. The owner has no quota.
CREATE OR REPLACE FUNCTION buzz.invite_quotas(p_community uuid)
RETURNS TABLE (role text, quota integer)
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT r.role, CASE WHEN q.role IS NULL THEN r.quota ELSE q.quota END
    FROM buzz_private.communities c
    CROSS JOIN (VALUES ('admin'::text, NULL::integer), ('member'::text, 0)) AS r (role, quota)
    LEFT JOIN buzz_private.invite_quotas q
           ON q.community_id = c.community_id AND q.role = r.role
    WHERE c.community_id = p_community
    ORDER BY r.role;
END;
ALTER FUNCTION buzz.invite_quotas(uuid) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.invite_quotas(uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.invite_quotas(uuid) TO buzz_reader;
COMMENT ON FUNCTION buzz.invite_quotas(uuid) IS
    'The invite quota of admins and members (NULL: no limit).';
