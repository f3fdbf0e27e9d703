-- buzz_private.serialize_event(p_pubkey, p_created_at, p_kind, p_tags) -> text
-- The NIP-01 serialization [0,<pubkey>,<created_at>,<kind>,<tags>,""] of a membership event,
-- with no whitespace; p_tags is already JSON text. Content is always empty for these kinds.
-- STABLE and not STRICT, as concat and to_json are: else it would not be inlined.
-- SQL with no SET clause, so that the planner inlines it into the query that calls it.
CREATE OR REPLACE FUNCTION buzz_private.serialize_event(
    p_pubkey text, p_created_at bigint, p_kind integer, p_tags text)
RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
RETURN pg_catalog.concat('[0,', pg_catalog.to_json(p_pubkey), ',', p_created_at, ',', p_kind,
                         ',', p_tags, ',""]');
ALTER FUNCTION buzz_private.serialize_event(text, bigint, integer, text) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.serialize_event(text, bigint, integer, text) FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.serialize_event(text, bigint, integer, text) IS
    'NIP-01 serialization of a membership event (empty content).';
