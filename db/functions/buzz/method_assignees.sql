-- buzz.method_assignees(p_community uuid)
--   -> TABLE(pubkey text, method text, assigned_by text, assigned_at timestamptz)
-- The NIP-86 methods assigned to the community's members (assign_method), by pubkey and
-- method; an assignment whose holder is no longer a member is listed too (it is in force
-- again if they come back). No rows for an unknown community.
CREATE OR REPLACE FUNCTION buzz.method_assignees(p_community uuid)
RETURNS TABLE (pubkey text, method text, assigned_by text, assigned_at timestamptz)
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT a.pubkey::text, a.method::text, a.assigned_by, a.assigned_at
    FROM buzz_private.method_assignments a
    WHERE a.community_id = p_community
    ORDER BY a.pubkey, a.method;
END;
ALTER FUNCTION buzz.method_assignees(uuid) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.method_assignees(uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.method_assignees(uuid) TO buzz_reader;
COMMENT ON FUNCTION buzz.method_assignees(uuid) IS
    'The NIP-86 methods assigned to members, by pubkey and method.';
