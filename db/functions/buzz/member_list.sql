-- buzz.member_list(p_community uuid) -> json
-- The live signed kind 13534 membership list of a community as its compact NIP-01 text, NULL
-- if it has none (or the community is unknown). One statement, one snapshot: the list matches
-- the committed members. Built from the stored header and pieces, which are the record: the
-- same bytes after a crash, on a standby and after a restore.
CREATE OR REPLACE FUNCTION buzz.member_list(p_community uuid)
RETURNS json
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
RETURN buzz_private.list_event(p_community);
ALTER FUNCTION buzz.member_list(uuid) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.member_list(uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.member_list(uuid) TO buzz_reader;
COMMENT ON FUNCTION buzz.member_list(uuid) IS 'The live signed membership list, or NULL.';
