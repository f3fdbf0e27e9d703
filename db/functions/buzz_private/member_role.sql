-- buzz_private.member_role(p_community, p_pubkey) -> text
-- The role of a pubkey in a community, NULL when it is not a member: how a write that changed
-- nothing tells not_member from is_owner and the rest.
CREATE OR REPLACE FUNCTION buzz_private.member_role(p_community uuid, p_pubkey text)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN (SELECT m.role FROM buzz_private.relay_members m
            WHERE m.community_id = p_community AND m.pubkey = p_pubkey);
END
$$;
ALTER FUNCTION buzz_private.member_role(uuid, text) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.member_role(uuid, text) FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.member_role(uuid, text) IS
    'The role of a pubkey in a community, or NULL.';
