-- buzz.member_list(p_community uuid) -> jsonb
-- The live signed kind 13534 membership list of a community, NULL if it has none (or the
-- community is unknown). One statement, one snapshot: the list matches the committed members.
-- Served from the copy insert_signed_events kept (buzz_private.cached_list) when there is one;
-- otherwise built from the stored pieces, which are the record.
CREATE OR REPLACE FUNCTION buzz.member_list(p_community uuid)
RETURNS jsonb
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
RETURN coalesce(buzz_private.cached_list(p_community), buzz_private.list_event(p_community));
ALTER FUNCTION buzz.member_list(uuid) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.member_list(uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.member_list(uuid) TO buzz_reader;
COMMENT ON FUNCTION buzz.member_list(uuid) IS 'The live signed membership list, or NULL.';
