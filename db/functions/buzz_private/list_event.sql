-- buzz_private.list_event(p_community) -> json
-- The live kind 13534 list of a community as a signed NIP-01 event: its stored header and the
-- exact tag bytes that were signed. NULL when the community has no list.
CREATE OR REPLACE FUNCTION buzz_private.list_event(p_community uuid)
RETURNS json
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_list record;
BEGIN
    -- The header, then the tags by a statement of their own: on a Citus cluster a statement
    -- that reads a community's tables must not call a function that reads more of them.
    SELECT l.id, l.pubkey, l.created_at, l.sig INTO v_list
    FROM buzz_private.member_lists l
    WHERE l.community_id = p_community;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    RETURN buzz_private.event_json(v_list.id, v_list.pubkey, v_list.created_at, 13534,
                                   buzz_private.list_tags(p_community), v_list.sig);
END
$$;
ALTER FUNCTION buzz_private.list_event(uuid) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.list_event(uuid) FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.list_event(uuid) IS
    'The live signed membership list of a community, or NULL.';
