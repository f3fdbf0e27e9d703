-- buzz_private.track_member_changes() -> trigger
-- Statement triggers on relay_members (INSERT, UPDATE, DELETE, through the API or by direct
-- SQL): record the first touch of each pubkey in this transaction (was it a member before?)
-- and mark the community for a new list. Statements that change no row mark nothing.
CREATE OR REPLACE FUNCTION buzz_private.track_member_changes()
RETURNS trigger
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_xid xid8 := pg_catalog.pg_current_xact_id();
    v_communities uuid[];
BEGIN
    -- One statement per kind of change, each recording the pubkeys and naming the
    -- communities. Old rows before new ones: a pubkey whose role was updated was a member.
    IF TG_OP = 'INSERT' THEN
        WITH recorded AS (
            INSERT INTO buzz_private.tx_member_changes (xid, community_id, pubkey, was_member)
            SELECT v_xid, n.community_id, n.pubkey, false FROM new_rows n
            ON CONFLICT DO NOTHING
        )
        SELECT pg_catalog.array_agg(DISTINCT n.community_id) INTO v_communities FROM new_rows n;
    ELSIF TG_OP = 'DELETE' THEN
        WITH recorded AS (
            INSERT INTO buzz_private.tx_member_changes (xid, community_id, pubkey, was_member)
            SELECT v_xid, o.community_id, o.pubkey, true FROM old_rows o
            ON CONFLICT DO NOTHING
        )
        SELECT pg_catalog.array_agg(DISTINCT o.community_id) INTO v_communities FROM old_rows o;
    ELSE
        WITH recorded AS (
            INSERT INTO buzz_private.tx_member_changes (xid, community_id, pubkey, was_member)
            SELECT DISTINCT ON (r.community_id, r.pubkey) v_xid, r.community_id, r.pubkey, r.was_member
            FROM (SELECT o.community_id, o.pubkey, true FROM old_rows o
                  UNION ALL
                  SELECT n.community_id, n.pubkey, false FROM new_rows n)
                     AS r (community_id, pubkey, was_member)
            ORDER BY r.community_id, r.pubkey, r.was_member DESC
            ON CONFLICT DO NOTHING
        )
        SELECT pg_catalog.array_agg(DISTINCT c.community_id) INTO v_communities
        FROM (SELECT o.community_id FROM old_rows o
              UNION ALL SELECT n.community_id FROM new_rows n) AS c (community_id);
    END IF;
    PERFORM buzz_private.mark_for_list(v_communities, false);
    RETURN NULL;
END
$$;
ALTER FUNCTION buzz_private.track_member_changes() OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.track_member_changes() FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.track_member_changes() IS
    'relay_members statement trigger: records changed pubkeys and marks their community.';

CREATE OR REPLACE TRIGGER relay_members_track_insert
    AFTER INSERT ON buzz_private.relay_members
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION buzz_private.track_member_changes();
CREATE OR REPLACE TRIGGER relay_members_track_update
    AFTER UPDATE ON buzz_private.relay_members
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION buzz_private.track_member_changes();
CREATE OR REPLACE TRIGGER relay_members_track_delete
    AFTER DELETE ON buzz_private.relay_members
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION buzz_private.track_member_changes();
