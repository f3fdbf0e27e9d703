-- buzz_private.track_role_changes() -> trigger
-- Statement triggers on roles (INSERT, UPDATE, DELETE, through the API or by direct SQL):
-- record each role id this transaction defined, changed or deleted, and mark its community,
-- so that prepare signs the role's new 33534 (or its kind 5 deletion). A role id that is gone
-- (deleted, or renamed by direct SQL) is taken from every member holding it, so no member
-- tag names an undefined role; not in a community being deleted, whose members go with it.
-- Statements that change no row mark nothing.
CREATE OR REPLACE FUNCTION buzz_private.track_role_changes()
RETURNS trigger
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_xid xid8 := pg_catalog.pg_current_xact_id();
    v_communities uuid[];
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        INSERT INTO buzz_private.tx_role_changes (xid, community_id, role_id)
        SELECT DISTINCT v_xid, o.community_id, o.role_id FROM old_rows o
        ON CONFLICT DO NOTHING;
        SELECT pg_catalog.array_agg(DISTINCT o.community_id) INTO v_communities FROM old_rows o;
    END IF;
    IF TG_OP IN ('UPDATE', 'INSERT') THEN
        INSERT INTO buzz_private.tx_role_changes (xid, community_id, role_id)
        SELECT DISTINCT v_xid, n.community_id, n.role_id FROM new_rows n
        ON CONFLICT DO NOTHING;
        SELECT pg_catalog.array_agg(DISTINCT c.community_id) INTO v_communities
        FROM (SELECT n.community_id FROM new_rows n
              UNION SELECT pg_catalog.unnest(v_communities)) AS c (community_id);
    END IF;
    PERFORM buzz_private.mark_for_list(v_communities, false);
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        WITH gone AS (
            SELECT o.community_id, o.role_id::text AS role_id FROM old_rows o
            EXCEPT
            SELECT n.community_id, n.role_id::text FROM buzz_private.roles n
            WHERE n.community_id IN (SELECT o.community_id FROM old_rows o)
        ), gone_by_community AS (
            SELECT g.community_id, pg_catalog.array_agg(g.role_id) AS role_ids
            FROM gone g
            WHERE EXISTS (SELECT FROM buzz_private.communities c
                          WHERE c.community_id = g.community_id)
            GROUP BY g.community_id
        )
        UPDATE buzz_private.relay_members m
        SET roles = ARRAY(SELECT r.role_id
                          FROM pg_catalog.unnest(m.roles) WITH ORDINALITY AS r (role_id, n)
                          WHERE r.role_id <> ALL (g.role_ids)
                          ORDER BY r.n)
        FROM gone_by_community g
        WHERE m.community_id = g.community_id AND m.roles && g.role_ids;
    END IF;
    RETURN NULL;
END
$$;
ALTER FUNCTION buzz_private.track_role_changes() OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.track_role_changes() FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.track_role_changes() IS
    'roles statement trigger: records changed role ids, marks their community, and takes a '
    'deleted role from its holders.';

CREATE OR REPLACE TRIGGER roles_track_insert
    AFTER INSERT ON buzz_private.roles
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION buzz_private.track_role_changes();
CREATE OR REPLACE TRIGGER roles_track_update
    AFTER UPDATE ON buzz_private.roles
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION buzz_private.track_role_changes();
CREATE OR REPLACE TRIGGER roles_track_delete
    AFTER DELETE ON buzz_private.roles
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION buzz_private.track_role_changes();
