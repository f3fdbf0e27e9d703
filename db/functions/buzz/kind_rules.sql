-- buzz.kind_rules(p_community uuid) -> TABLE(kind integer, allowed boolean)
-- The community's kind rules, by kind: allowed true (allow_kind) or false (disallow_kind); a
-- kind without a row is neither. No rows for an unknown community.
CREATE OR REPLACE FUNCTION buzz.kind_rules(p_community uuid)
RETURNS TABLE (kind integer, allowed boolean)
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT k.kind, k.allowed
    FROM buzz_private.kind_rules k
    WHERE k.community_id = p_community
    ORDER BY k.kind;
END;
ALTER FUNCTION buzz.kind_rules(uuid) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.kind_rules(uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.kind_rules(uuid) TO buzz_reader;
COMMENT ON FUNCTION buzz.kind_rules(uuid) IS
    'The community''s allowed (true) and disallowed (false) kinds, by kind.';
