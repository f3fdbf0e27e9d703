-- buzz.set_invite_quota(p_community uuid, p_role text, p_quota integer) -> text
-- How many members a holder of base role p_role ('admin' or 'member') may bring in, by its
-- invites (invites_left, create_relay_invite); NULL for no limit. The defaults are admin NULL
-- and member 0; the owner has no quota. A lower quota revokes no invite and removes nobody:
-- those over it simply have no invites left. Not a membership write: no list.
-- Outcomes: 'updated'; 'unchanged' (the role's quota was that already).
-- Raises: BZIRL (the owner, or no base role), 22023 (a negative quota), BZNCM, BZARC.
-- Locks: community FOR KEY SHARE, the role's quota row.
CREATE OR REPLACE FUNCTION buzz.set_invite_quota(p_community uuid, p_role text, p_quota integer)
RETURNS text
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_quota integer;
    -- A value, not a call: Citus plans no function but IMMUTABLE ones in DO UPDATE SET.
    v_now timestamptz := pg_catalog.now();
BEGIN
    IF p_role IS NULL OR p_role NOT IN ('admin', 'member') THEN
        RAISE EXCEPTION 'p_role must be admin or member'
            USING ERRCODE = 'BZIRL', HINT = 'The owner brings members in without a quota.';
    END IF;
    IF p_quota < 0 THEN
        RAISE EXCEPTION 'p_quota must be NULL (no limit) or at least 0'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    PERFORM buzz_private.lock_community(p_community);
    SELECT q.quota INTO v_quota
    FROM buzz_private.invite_quotas q
    WHERE q.community_id = p_community AND q.role = p_role
    FOR NO KEY UPDATE;
    IF NOT FOUND THEN
        v_quota := buzz_private.invite_quota(p_community, p_role);
    END IF;
    IF v_quota IS NOT DISTINCT FROM p_quota THEN
        RETURN 'unchanged';
    END IF;
    -- A concurrent first setter may make the row: then this one updates it, if it differs.
    INSERT INTO buzz_private.invite_quotas AS q (community_id, role, quota)
    VALUES (p_community, p_role, p_quota)
    ON CONFLICT (community_id, role) DO UPDATE
        SET quota = excluded.quota, updated_at = v_now
        WHERE q.quota IS DISTINCT FROM excluded.quota;
    RETURN CASE WHEN FOUND THEN 'updated' ELSE 'unchanged' END;
END
$$;
ALTER FUNCTION buzz.set_invite_quota(uuid, text, integer) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.set_invite_quota(uuid, text, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.set_invite_quota(uuid, text, integer) TO buzz_writer;
COMMENT ON FUNCTION buzz.set_invite_quota(uuid, text, integer) IS
    'Sets how many members an admin or a member may bring in (NULL: no limit): updated | unchanged.';
