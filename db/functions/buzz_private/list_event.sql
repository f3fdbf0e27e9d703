-- buzz_private.list_event(p_community) -> json
-- The live kind 13534 list of a community as a signed NIP-01 event: its stored header and the
-- exact tag bytes that were signed. NULL when the community has no list.
CREATE OR REPLACE FUNCTION buzz_private.list_event(p_community uuid)
RETURNS json
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
-- A quoted body: list_tags is created after this file, and only quoted bodies wait until call.
AS $$
    SELECT buzz_private.event_json(l.id, l.pubkey, l.created_at, 13534,
                                   buzz_private.list_tags(l.community_id), l.sig)
    FROM buzz_private.member_lists l
    WHERE l.community_id = p_community
$$;
ALTER FUNCTION buzz_private.list_event(uuid) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.list_event(uuid) FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.list_event(uuid) IS
    'The live signed membership list of a community, or NULL.';
