-- buzz_private.member_event_tags(p_member) -> text
-- Tags of a kind 8000/8001 event as NIP-01 JSON text: [["-"],["p","<pubkey>"]].
CREATE OR REPLACE FUNCTION buzz_private.member_event_tags(p_member text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN '[["-"],["p",' || pg_catalog.to_json(p_member)::text || ']]';
END
$$;
ALTER FUNCTION buzz_private.member_event_tags(text) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.member_event_tags(text) FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.member_event_tags(text) IS
    'NIP-01 tags of an 8000/8001 event naming one member.';
