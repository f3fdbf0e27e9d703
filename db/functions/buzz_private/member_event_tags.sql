-- buzz_private.member_event_tags(p_member) -> text
-- Tags of a kind 8000/8001 event as NIP-01 JSON text: [["-"],["p","<pubkey>"]].
-- STABLE, as to_json is: else it would not be inlined.
-- SQL with no SET clause, so that the planner inlines it into the query that calls it.
CREATE OR REPLACE FUNCTION buzz_private.member_event_tags(p_member text)
RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
RETURN pg_catalog.concat('[["-"],["p",', pg_catalog.to_json(p_member), ']]');
ALTER FUNCTION buzz_private.member_event_tags(text) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.member_event_tags(text) FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.member_event_tags(text) IS
    'NIP-01 tags of an 8000/8001 event naming one member.';
