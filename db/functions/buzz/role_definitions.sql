-- buzz.role_definitions(p_community uuid) -> SETOF json
-- The live kind 33534 role definitions of a community, by role id, as compact NIP-01 JSON
-- objects whose tags are the signed bytes. No rows for an unknown community.
CREATE OR REPLACE FUNCTION buzz.role_definitions(p_community uuid)
RETURNS SETOF json
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT buzz_private.event_json(r.id, r.pubkey, r.created_at, r.kind, r.tags, r.sig)
    FROM buzz_private.role_events r
    WHERE r.community_id = p_community AND r.kind = 33534
    ORDER BY r.role_id;
END;
ALTER FUNCTION buzz.role_definitions(uuid) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.role_definitions(uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.role_definitions(uuid) TO buzz_reader;
COMMENT ON FUNCTION buzz.role_definitions(uuid) IS
    'The live signed kind 33534 role definitions of a community, by role id.';
