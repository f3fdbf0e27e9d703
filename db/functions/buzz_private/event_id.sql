-- buzz_private.event_id(p_serialized) -> text
-- sha256 of the UTF-8 bytes, lowercase hex. convert_to, never ::bytea, which reads backslashes.
-- SQL with no SET clause, so that the planner inlines it into the query that calls it; STABLE
-- because convert_to is (an IMMUTABLE declaration over a STABLE body is never inlined).
CREATE OR REPLACE FUNCTION buzz_private.event_id(p_serialized text)
RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE STRICT
RETURN pg_catalog.encode(pg_catalog.sha256(pg_catalog.convert_to(p_serialized, 'UTF8')), 'hex');
ALTER FUNCTION buzz_private.event_id(text) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.event_id(text) FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.event_id(text) IS 'NIP-01 event id of a serialization.';
