-- buzz.membership_events(p_community uuid, p_since bigint DEFAULT 0) -> SETOF json
-- The signed kind 8000/8001 events of a community with created_at >= p_since, oldest first
-- (events of one list in the order they were prepared: 8000s, then 8001s, each by pubkey).
CREATE OR REPLACE FUNCTION buzz.membership_events(p_community uuid, p_since bigint DEFAULT 0)
RETURNS SETOF json
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT buzz_private.event_json(e.id, e.pubkey, e.created_at, e.kind,
                                   buzz_private.member_event_tags(e.member_pubkey), e.sig)
    FROM buzz_private.membership_events e
    WHERE e.community_id = p_community AND e.created_at >= coalesce(p_since, 0)
    ORDER BY e.created_at, e.kind, e.member_pubkey;
END;
ALTER FUNCTION buzz.membership_events(uuid, bigint) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.membership_events(uuid, bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.membership_events(uuid, bigint) TO buzz_reader;
COMMENT ON FUNCTION buzz.membership_events(uuid, bigint) IS
    'Signed 8000/8001 events since a created_at, oldest first.';
