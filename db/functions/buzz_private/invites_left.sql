-- buzz_private.invites_left(p_community uuid, p_pubkey text) -> integer
-- How many more members p_pubkey (lowercase hex) may bring in: NULL when its role has no
-- quota (the owner, admins by default); else the quota less the members it brought in who
-- are still members (added_by), less the uses left on its live invites (an unlimited live
-- invite takes them all), never below 0. A non-member (an unknown community included): 0.
-- Reads what is committed; create_relay_invite takes the quota lock first (the creator's
-- member row), so that two invites of one creator are counted one after the other.
CREATE OR REPLACE FUNCTION buzz_private.invites_left(p_community uuid, p_pubkey text)
RETURNS integer
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_role text := buzz_private.member_role(p_community, p_pubkey);
    v_quota integer;
    v_brought_in bigint;
    v_unlimited boolean;
    v_uses_left bigint;
    -- A value: Citus plans no volatile function in a query of a distributed table.
    v_now timestamptz := pg_catalog.statement_timestamp();
BEGIN
    IF v_role IS NULL THEN
        RETURN 0;
    END IF;
    v_quota := buzz_private.invite_quota(p_community, v_role);
    IF v_quota IS NULL THEN
        RETURN NULL;
    END IF;
    SELECT pg_catalog.count(*) INTO v_brought_in
    FROM buzz_private.relay_members m
    WHERE m.community_id = p_community AND m.added_by = p_pubkey AND m.pubkey <> p_pubkey;
    SELECT pg_catalog.bool_or(i.max_uses IS NULL), pg_catalog.sum(i.max_uses - i.use_count)
    INTO v_unlimited, v_uses_left
    FROM buzz_private.relay_invites i
    WHERE i.community_id = p_community AND i.created_by = p_pubkey
      AND i.expires_at > v_now AND (i.max_uses IS NULL OR i.use_count < i.max_uses);
    IF v_unlimited THEN
        RETURN 0;
    END IF;
    RETURN GREATEST(v_quota - v_brought_in - coalesce(v_uses_left, 0), 0)::integer;
END
$$;
ALTER FUNCTION buzz_private.invites_left(uuid, text) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.invites_left(uuid, text) FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.invites_left(uuid, text) IS
    'How many more members a pubkey may bring in (NULL: no limit; a non-member: 0).';
