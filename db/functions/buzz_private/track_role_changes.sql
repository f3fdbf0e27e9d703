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
    v_old_communities uuid[];
    v_old_role_ids text[] COLLATE "C";
    v_community uuid;
    v_gone text[] COLLATE "C";
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
        -- Role ids no longer defined, taken from their holders, a community at a time. The
        -- transition table is read on its own: on a Citus worker no statement may join it
        -- with the community's tables (docs/scale-out.md).
        SELECT pg_catalog.array_agg(o.community_id), pg_catalog.array_agg(o.role_id::text)
        INTO v_old_communities, v_old_role_ids
        FROM old_rows o;
        FOR v_community IN
            SELECT DISTINCT c.community_id FROM pg_catalog.unnest(v_old_communities) AS c (community_id)
        LOOP
            v_gone := ARRAY(SELECT o.role_id
                            FROM ROWS FROM (pg_catalog.unnest(v_old_communities),
                                            pg_catalog.unnest(v_old_role_ids))
                                     AS o (community_id, role_id)
                            WHERE o.community_id = v_community
                            EXCEPT
                            SELECT n.role_id::text FROM buzz_private.roles n
                            WHERE n.community_id = v_community);
            IF pg_catalog.cardinality(v_gone) > 0
               AND EXISTS (SELECT FROM buzz_private.communities c
                           WHERE c.community_id = v_community) THEN
                -- The holders' rows in pubkey order first, as every write that takes several
                -- member rows takes them: the UPDATE alone would take them in the table's
                -- order, and deadlock with a transfer between two holders.
                PERFORM FROM buzz_private.relay_members m
                WHERE m.community_id = v_community AND m.roles && v_gone
                ORDER BY m.pubkey
                FOR NO KEY UPDATE;
                UPDATE buzz_private.relay_members m
                SET roles = ARRAY(SELECT r.role_id
                                  FROM pg_catalog.unnest(m.roles) WITH ORDINALITY AS r (role_id, n)
                                  WHERE r.role_id <> ALL (v_gone)
                                  ORDER BY r.n)
                WHERE m.community_id = v_community AND m.roles && v_gone;
            END IF;
        END LOOP;
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
