-- buzz.define_role(p_community uuid, p_role text, p_label text, p_description text DEFAULT NULL,
--                  p_color integer DEFAULT NULL, p_order integer DEFAULT NULL) -> text
-- Defines a role of a community, or changes its definition: its label, description, color
-- (a hue, 0-360) and order. Base roles (owner, admin, member) may be redefined. The role's
-- new kind 33534 event is signed in the same transaction (prepare); no member changes, so
-- no list is written.
-- Outcomes: 'defined' (new role), 'updated'; 'unchanged' (the same definition: no change).
-- p_label and p_description are names a person reads (check_display_text: not blank, no
-- control, format or separator character, no line break).
-- Raises: BZIRL (malformed role id), 22023 (label not 1-64, description not 1-500, either
-- refused by check_display_text; color outside 0-360), BZISO, BZNCM, BZARC.
-- Locks: community FOR KEY SHARE, the role's row.
CREATE OR REPLACE FUNCTION buzz.define_role(
    p_community uuid, p_role text, p_label text, p_description text DEFAULT NULL,
    p_color integer DEFAULT NULL, p_order integer DEFAULT NULL)
RETURNS text
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_role text := buzz_private.normalize_role_id(p_role, true);
BEGIN
    IF p_label IS NULL THEN
        RAISE EXCEPTION 'p_label must be 1-64 characters, not NULL'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    PERFORM buzz_private.check_display_text(p_label, 'p_label', 64, false);
    -- Single-line, as SPEC §6 wants a role's description (printable); the community's may
    -- hold line breaks.
    PERFORM buzz_private.check_display_text(p_description, 'p_description', 500, false);
    IF p_color NOT BETWEEN 0 AND 360 THEN
        RAISE EXCEPTION 'p_color must be a hue from 0 to 360, or NULL'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    PERFORM buzz_private.require_read_committed();
    PERFORM buzz_private.lock_community(p_community);
    LOOP
        UPDATE buzz_private.roles r
        SET label = p_label, description = p_description, color = p_color, sort_order = p_order
        WHERE r.community_id = p_community AND r.role_id = v_role
          AND (r.label, r.description, r.color, r.sort_order)
              IS DISTINCT FROM (p_label, p_description, p_color, p_order);
        IF FOUND THEN
            RETURN 'updated';
        END IF;
        -- Not there, or there as given (then the insert does nothing). A concurrent definer of
        -- the same role makes the insert wait for it; after its commit, compare again.
        INSERT INTO buzz_private.roles (community_id, role_id, label, description, color, sort_order)
        VALUES (p_community, v_role, p_label, p_description, p_color, p_order)
        ON CONFLICT (community_id, role_id) DO NOTHING;
        IF FOUND THEN
            RETURN 'defined';
        END IF;
        EXIT WHEN EXISTS (SELECT FROM buzz_private.roles r
                          WHERE r.community_id = p_community AND r.role_id = v_role
                            AND (r.label, r.description, r.color, r.sort_order)
                                IS NOT DISTINCT FROM (p_label, p_description, p_color, p_order));
    END LOOP;
    RETURN 'unchanged';
END
$$;
ALTER FUNCTION buzz.define_role(uuid, text, text, text, integer, integer) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.define_role(uuid, text, text, text, integer, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.define_role(uuid, text, text, text, integer, integer) TO buzz_writer;
COMMENT ON FUNCTION buzz.define_role(uuid, text, text, text, integer, integer) IS
    'Defines or redefines a role (its 33534 is signed): defined | updated | unchanged.';
