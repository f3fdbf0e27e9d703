-- buzz_private.invite_quota(p_community uuid, p_role text) -> integer
-- How many members a holder of base role p_role may bring in (SPEC §3, invitations), NULL for
-- no limit: the community's invite_quotas row, else the default (admin: no limit, member: 0).
-- The owner has no limit; so has a role that is no base role (NULL: not a member).
CREATE OR REPLACE FUNCTION buzz_private.invite_quota(p_community uuid, p_role text)
RETURNS integer
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_quota integer;
BEGIN
    IF p_role IS NULL OR p_role NOT IN ('admin', 'member') THEN
        RETURN NULL;
    END IF;
    SELECT q.quota INTO v_quota
    FROM buzz_private.invite_quotas q
    WHERE q.community_id = p_community AND q.role = p_role;
    IF FOUND THEN
        RETURN v_quota;
    END IF;
    RETURN CASE p_role WHEN 'member' THEN 0 END;
END
$$;
ALTER FUNCTION buzz_private.invite_quota(uuid, text) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.invite_quota(uuid, text) FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.invite_quota(uuid, text) IS
    'The invite quota of a base role in a community (NULL: no limit).';
