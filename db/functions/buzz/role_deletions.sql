-- buzz.role_deletions(p_community uuid) -> SETOF json
-- The kind 5 deletions of the community's deleted role definitions (one per role id, the
-- newest; a role defined again is live in role_definitions instead), by role id, as compact
-- NIP-01 JSON objects. A client that kept a deleted 33534 learns of its deletion from these.
-- No rows for an unknown community.
CREATE OR REPLACE FUNCTION buzz.role_deletions(p_community uuid)
RETURNS SETOF json
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT buzz_private.event_json(r.id, r.pubkey, r.created_at, r.kind, r.tags, r.sig)
    FROM buzz_private.role_events r
    WHERE r.community_id = p_community AND r.kind = 5
    ORDER BY r.role_id;
END;
ALTER FUNCTION buzz.role_deletions(uuid) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.role_deletions(uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.role_deletions(uuid) TO buzz_reader;
COMMENT ON FUNCTION buzz.role_deletions(uuid) IS
    'The signed kind 5 deletions of a community''s deleted role definitions, by role id.';
