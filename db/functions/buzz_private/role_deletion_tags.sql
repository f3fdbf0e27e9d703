-- buzz_private.role_deletion_tags(p_relay_pubkey, p_role) -> text
-- Tags of the kind 5 (NIP-09) deletion of a role definition as NIP-01 JSON text:
-- [["-"],["a","33534:<relay pubkey>:<role id>"],["k","33534"]]. Pubkeys are CHECKed hex and
-- role ids [a-z0-9_-]: nothing needs escaping.
-- SQL with no SET clause: the planner inlines it.
CREATE OR REPLACE FUNCTION buzz_private.role_deletion_tags(p_relay_pubkey text, p_role text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN '[["-"],["a","33534:' || p_relay_pubkey || ':' || p_role || '"],["k","33534"]]';
ALTER FUNCTION buzz_private.role_deletion_tags(text, text) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.role_deletion_tags(text, text) FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.role_deletion_tags(text, text) IS
    'NIP-01 tags of the kind 5 deletion of a role definition.';
