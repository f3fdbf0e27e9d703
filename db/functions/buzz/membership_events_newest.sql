-- buzz.membership_events_newest(p_community uuid, p_kinds integer[] DEFAULT NULL,
--     p_ids text[] DEFAULT NULL, p_members text[] DEFAULT NULL, p_since bigint DEFAULT NULL,
--     p_until bigint DEFAULT NULL, p_limit integer DEFAULT 500) -> SETOF json
-- A REQ filter on the signed kind 8000/8001 events of a community, answered in the database
-- (SPEC section 10, "Reads cost what they answer"): the events of kinds p_kinds, ids p_ids,
-- whose `p` tag (the member added or removed) is one of p_members, with created_at from
-- p_since to p_until (each NULL: no condition), newest first, at most p_limit of them. Each
-- way in reads by an index and stops at the limit: by id, by member, or back in time (the
-- primary key); a filter for the newest one reads one row however many are stored.
-- Raises: 22023 (p_limit negative, or an array of over 1,000 values).
CREATE OR REPLACE FUNCTION buzz.membership_events_newest(
    p_community uuid, p_kinds integer[] DEFAULT NULL, p_ids text[] DEFAULT NULL,
    p_members text[] DEFAULT NULL, p_since bigint DEFAULT NULL, p_until bigint DEFAULT NULL,
    p_limit integer DEFAULT 500)
RETURNS SETOF json
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
    IF pg_catalog.cardinality(p_ids) > 1000 OR pg_catalog.cardinality(p_members) > 1000
       OR pg_catalog.cardinality(p_kinds) > 1000 THEN
        RAISE EXCEPTION 'p_ids, p_members and p_kinds hold at most 1000 values each'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    -- One index probe per id (membership_events_by_id) or per member, newest first
    -- (membership_events_by_member), each stopping at the limit: never a scan of the rest.
    IF p_ids IS NOT NULL THEN
        RETURN QUERY
        SELECT buzz_private.event_json(e.id, e.pubkey, e.created_at, e.kind,
                                       buzz_private.member_event_tags(e.member_pubkey), e.sig)
        FROM (SELECT DISTINCT v.id FROM pg_catalog.unnest(p_ids) v (id)) v
        CROSS JOIN LATERAL (
            SELECT x.* FROM buzz_private.membership_events x
            WHERE x.community_id = p_community AND x.id = v.id
              AND (p_members IS NULL OR x.member_pubkey = ANY (p_members))
              AND (p_kinds IS NULL OR x.kind = ANY (p_kinds))
              AND x.created_at BETWEEN v_since AND v_until) e
        ORDER BY e.created_at DESC, e.member_pubkey DESC
        LIMIT coalesce(p_limit, 500);
    ELSIF p_members IS NOT NULL THEN
        RETURN QUERY
        SELECT buzz_private.event_json(e.id, e.pubkey, e.created_at, e.kind,
                                       buzz_private.member_event_tags(e.member_pubkey), e.sig)
        FROM (SELECT DISTINCT v.pubkey FROM pg_catalog.unnest(p_members) v (pubkey)) v
        CROSS JOIN LATERAL (
            SELECT x.* FROM buzz_private.membership_events x
            WHERE x.community_id = p_community AND x.member_pubkey = v.pubkey
              AND (p_kinds IS NULL OR x.kind = ANY (p_kinds))
              AND x.created_at BETWEEN v_since AND v_until
            ORDER BY x.created_at DESC
            LIMIT coalesce(p_limit, 500)) e
        ORDER BY e.created_at DESC, e.member_pubkey DESC
        LIMIT coalesce(p_limit, 500);
    ELSE
        -- The primary key (community_id, created_at, member_pubkey), read back from p_until.
        RETURN QUERY
        SELECT buzz_private.event_json(e.id, e.pubkey, e.created_at, e.kind,
                                       buzz_private.member_event_tags(e.member_pubkey), e.sig)
        FROM buzz_private.membership_events e
        WHERE e.community_id = p_community AND e.created_at BETWEEN v_since AND v_until
          AND (p_kinds IS NULL OR e.kind = ANY (p_kinds))
        ORDER BY e.created_at DESC, e.member_pubkey DESC
        LIMIT coalesce(p_limit, 500);
    END IF;
END
$$;
ALTER FUNCTION buzz.membership_events_newest(uuid, integer[], text[], text[], bigint, bigint, integer)
    OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.membership_events_newest(uuid, integer[], text[], text[], bigint, bigint, integer)
    FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.membership_events_newest(uuid, integer[], text[], text[], bigint, bigint, integer)
    TO buzz_reader;
COMMENT ON FUNCTION buzz.membership_events_newest(uuid, integer[], text[], text[], bigint, bigint, integer) IS
    'A REQ filter on the 8000/8001 events, newest first, limited, read by an index.';
