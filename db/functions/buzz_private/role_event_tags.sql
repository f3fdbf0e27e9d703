-- buzz_private.role_event_tags(p_role, p_label, p_description, p_color, p_order) -> text
-- Tags of a kind 33534 role definition as NIP-01 JSON text: ["-"], ["d", id], then label,
-- description, color and order for those that are set (SPEC §6). The text fields go through
-- to_json, which escapes as JSON.stringify does; the numbers are integers, written as strings.
-- SQL with no SET clause, STABLE as to_json is: the planner inlines it.
CREATE OR REPLACE FUNCTION buzz_private.role_event_tags(
    p_role text, p_label text, p_description text, p_color integer, p_order integer)
RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
-- concat skips NULLs, and each || with a NULL field is NULL: unset fields leave no tag.
RETURN pg_catalog.concat(
    '[["-"],["d",', pg_catalog.to_json(p_role), ']',
    ',["label",' || pg_catalog.to_json(p_label) || ']',
    ',["description",' || pg_catalog.to_json(p_description) || ']',
    ',["color","' || p_color || '"]',
    ',["order","' || p_order || '"]',
    ']');
ALTER FUNCTION buzz_private.role_event_tags(text, text, text, integer, integer) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.role_event_tags(text, text, text, integer, integer) FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.role_event_tags(text, text, text, integer, integer) IS
    'NIP-01 tags of a kind 33534 role definition.';
