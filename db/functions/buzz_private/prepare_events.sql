-- buzz_private.prepare_events(p_relay_pubkey text, p_community uuid)
--   -> TABLE(community_id uuid, id text, kind integer, created_at bigint, serialized text)
--
-- buzz.prepare_membership_events, for the communities this transaction changed (p_community
-- NULL) or for one of them (on a Citus worker, where each community's call runs apart).
--
-- Phase one of a list write. For every community this transaction changed (or marked for
-- republish), in ascending list-lock-key order: takes the community's list lock, the last lock
-- of the transaction, then reads the members and roles and returns, unsigned:
--   - when members (or the roles they hold) changed, or on republish: the new kind 13534 list
--     and the kind 8000/8001 events for pubkeys that became or stopped being members (net
--     effect within the transaction);
--   - the kind 33534 definition of each role defined or changed (of every role on republish),
--     and the kind 5 deletion of each deleted role whose 33534 was live (on republish, of
--     every live 33534 whose role is not defined);
-- all with one created_at. `serialized` is the exact NIP-01 array whose sha256 is `id`. Rows
-- per community: the list, 8000s, 8001s (each by pubkey), 33534s, kind 5s (each by role id).
-- No rows when nothing changed. A second call replaces the first call's unsigned set (of
-- p_community, when given). A
-- community with nothing to publish (a role defined and deleted again) owes nothing more.
--
-- created_at: the later of the clock (whole seconds) and one second past the community's
-- newest list or role event. More than max_list_lead_seconds ahead of the clock (settings,
-- default 300): BZLAG. Records the relay key on first use; another key: BZKEY.
--
-- Raises: BZIPK (malformed key), BZISO (not READ COMMITTED), BZKEY, BZLAG, BZARC (members of
-- a community archived before its list lock was granted were changed).
-- Locks: relay-key lock shared, list locks (advisory, transaction scope); waits and idleness
-- bounded by buzz_private.bound_waits; its statements' plans kept for the session
-- (buzz_private.use_generic_plans).
--
-- Each statement reads either the scratch tables (tx_*) or the community's tables, never
-- both: on a Citus worker the scratch tables are local and the others distributed, and Citus
-- plans no statement that joins the two (docs/scale-out.md). What passes between them is
-- carried in arrays.
CREATE OR REPLACE FUNCTION buzz_private.prepare_events(p_relay_pubkey text, p_community uuid)
RETURNS TABLE (community_id uuid, id text, kind integer, created_at bigint, serialized text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_pubkey text := buzz_private.normalize_pubkey(p_relay_pubkey, 'p_relay_pubkey');
    v_xid xid8;
    v_max_lead integer;
    v_communities uuid[];      -- the communities this call prepares, in lock order ...
    v_rebuilds boolean[];      -- ... and whether each is rebuilt from every member row
    v_community uuid;
    v_rebuild boolean;
    v_archived boolean;
    v_clock bigint;
    v_created_at bigint;
    v_tags text;
    v_serialized text;
    v_list_id text;
    v_position integer := 0;
    v_added integer;
    v_members_changed boolean;  -- members, or the roles they hold
    v_roles_changed boolean;    -- role definitions
    v_list boolean;             -- whether this community gets a new list
    -- Pubkeys changed, then those whose membership changed: whether each was a member, and
    -- the event each gets (8000 or 8001). Roles changed, then those of the role events and
    -- their tags. Ordered as the scratch tables' text (COLLATE "C").
    v_pubkeys text[] COLLATE "C";
    v_was_member boolean[];
    v_kinds integer[];
    v_role_ids text[] COLLATE "C";
    v_role_tags text[];
BEGIN
    PERFORM buzz_private.require_read_committed();
    PERFORM buzz_private.bound_waits();
    PERFORM buzz_private.use_generic_plans();
    v_xid := pg_catalog.pg_current_xact_id_if_assigned();
    SELECT pg_catalog.array_agg(p.community_id ORDER BY buzz_private.list_lock_key(p.community_id),
                                                        p.community_id),
           pg_catalog.array_agg(p.rebuild ORDER BY buzz_private.list_lock_key(p.community_id),
                                                   p.community_id)
    INTO v_communities, v_rebuilds
    FROM buzz_private.tx_pending_lists p
    WHERE p.xid = v_xid AND (p_community IS NULL OR p.community_id = p_community);
    -- Only a prepare with lists to write holds the relay-key lock: one with nothing to do
    -- (say, after delete_community, whose cascade holds list rows a rotation may wait for)
    -- must not wait behind a rotation.
    IF v_communities IS NOT NULL THEN
        PERFORM buzz_private.lock_relay_key(false);
    END IF;
    PERFORM buzz_private.check_relay_key(v_pubkey);
    IF v_xid IS NULL THEN
        RETURN;  -- this transaction has written nothing
    END IF;
    DELETE FROM buzz_private.tx_prepared_events e
    WHERE e.xid = v_xid AND (p_community IS NULL OR e.community_id = p_community);
    SELECT s.max_list_lead_seconds INTO v_max_lead FROM buzz_private.settings s;

    FOR v_i IN 1 .. coalesce(pg_catalog.cardinality(v_communities), 0) LOOP
        v_community := v_communities[v_i];
        v_rebuild := v_rebuilds[v_i];
        PERFORM pg_catalog.pg_advisory_xact_lock(buzz_private.list_lock_key(v_community));
        -- Every statement from here on sees whatever committed before the lock was granted.
        SELECT c.archived_at IS NOT NULL INTO v_archived
        FROM buzz_private.communities c
        WHERE c.community_id = v_community;
        IF NOT FOUND THEN
            -- Deleted in this transaction: no list and no 8001 events.
            PERFORM buzz_private.forget_community_changes(v_xid, v_community);
            CONTINUE;
        END IF;
        -- The pubkeys changed and whether each was a member; the roles changed.
        SELECT pg_catalog.array_agg(ch.pubkey), pg_catalog.array_agg(ch.was_member),
               (SELECT pg_catalog.array_agg(r.role_id) FROM buzz_private.tx_role_changes r
                WHERE r.xid = v_xid AND r.community_id = v_community)
        INTO v_pubkeys, v_was_member, v_role_ids
        FROM buzz_private.tx_member_changes ch
        WHERE ch.xid = v_xid AND ch.community_id = v_community;
        v_members_changed := v_pubkeys IS NOT NULL;
        v_roles_changed := v_role_ids IS NOT NULL;
        v_list := v_members_changed OR v_rebuild;
        IF v_archived AND (v_members_changed OR v_roles_changed) THEN
            RAISE EXCEPTION 'community % was archived; its members and roles cannot change',
                    v_community
                USING ERRCODE = 'BZARC', HINT = 'Unarchive it with buzz.unarchive_community first.';
        END IF;

        v_clock := pg_catalog.floor(pg_catalog.date_part('epoch', pg_catalog.clock_timestamp()))::bigint;
        v_created_at := greatest(
            v_clock,
            (SELECT pg_catalog.max(l.created_at) + 1 FROM buzz_private.member_lists l
             WHERE l.community_id = v_community),
            (SELECT pg_catalog.max(r.created_at) + 1 FROM buzz_private.role_events r
             WHERE r.community_id = v_community));
        IF v_created_at - v_clock > v_max_lead THEN
            RAISE EXCEPTION 'the list of community % would be % s ahead of the clock (at most % s)',
                    v_community, v_created_at - v_clock, v_max_lead
                USING ERRCODE = 'BZLAG',
                      HINT = 'Batch changes into one transaction (one list), or retry later.';
        END IF;

        IF v_list THEN
            PERFORM buzz_private.rebuild_list_pieces(v_xid, v_community, v_rebuild);
            v_tags := buzz_private.list_tags(v_community);
            v_serialized := buzz_private.serialize_event(v_pubkey, v_created_at, 13534, v_tags);
            v_list_id := buzz_private.event_id(v_serialized);
            -- insert_signed_events returns the list: it finds these tags by the id, not building
            -- them again.
            PERFORM buzz_private.keep_list_tags(v_list_id, v_tags);
            -- The list, then the 8000/8001 events by net effect (a pubkey added and removed again
            -- in this transaction gets neither), each serialized once: kept (without the text)
            -- for insert_signed_events and returned.
            SELECT pg_catalog.array_agg(c.pubkey ORDER BY c.kind, c.pubkey),
                   pg_catalog.array_agg(c.kind ORDER BY c.kind, c.pubkey)
            INTO v_pubkeys, v_kinds
            FROM (SELECT ch.pubkey, CASE WHEN ch.was_member THEN 8001 ELSE 8000 END AS kind
                  FROM ROWS FROM (pg_catalog.unnest(v_pubkeys), pg_catalog.unnest(v_was_member))
                           AS ch (pubkey, was_member)
                  -- A probe of the primary key per pubkey (LIMIT keeps the subquery a
                  -- parameterized scan). An EXISTS here may be planned as a hashed subplan,
                  -- which reads every member of the community: in a plan kept for the session,
                  -- on a relay of few communities, every row of the table.
                  LEFT JOIN LATERAL (
                      SELECT true AS is_member
                      FROM buzz_private.relay_members m
                      WHERE m.community_id = v_community AND m.pubkey = ch.pubkey
                      LIMIT 1) AS present ON true
                  WHERE ch.was_member <> (present.is_member IS NOT NULL)) AS c;
            RETURN QUERY
                WITH member_events AS (
                    SELECT e.n, e.kind, e.member,
                           buzz_private.serialize_event(v_pubkey, v_created_at, e.kind,
                                                        buzz_private.member_event_tags(e.member))
                               AS serialized
                    FROM ROWS FROM (pg_catalog.unnest(v_pubkeys), pg_catalog.unnest(v_kinds))
                             WITH ORDINALITY AS e (member, kind, n)
                ), identified AS (
                    -- The list's text stays in v_serialized: carried here, it would be copied.
                    SELECT 0::bigint AS n, 13534 AS kind, NULL::text AS member,
                           NULL::text AS serialized, v_list_id AS id
                    UNION ALL
                    SELECT me.*, buzz_private.event_id(me.serialized) FROM member_events me
                ), kept AS (
                    INSERT INTO buzz_private.tx_prepared_events
                        (xid, position, community_id, id, pubkey, kind, created_at, member_pubkey)
                    SELECT v_xid, v_position + 1 + i.n::integer, v_community, i.id,
                           v_pubkey, i.kind, v_created_at, i.member
                    FROM identified i
                )
                SELECT v_community, i.id, i.kind, v_created_at,
                       coalesce(i.serialized, v_serialized)
                FROM identified i
                ORDER BY i.n;
            GET DIAGNOSTICS v_added = ROW_COUNT;
            v_position := v_position + v_added;
        END IF;

        IF NOT (v_roles_changed OR v_rebuild) THEN
            CONTINUE;
        END IF;
        -- The role events: the definition of each role changed (every role on republish), and
        -- the deletion of each role deleted whose definition was published.
        SELECT pg_catalog.array_agg(w.role_id ORDER BY w.kind DESC, w.role_id),
               pg_catalog.array_agg(w.kind ORDER BY w.kind DESC, w.role_id),
               pg_catalog.array_agg(w.tags ORDER BY w.kind DESC, w.role_id)
        INTO v_role_ids, v_kinds, v_role_tags
        FROM (
            SELECT r.role_id::text AS role_id, 33534 AS kind,
                   buzz_private.role_event_tags(r.role_id, r.label, r.description,
                                                r.color, r.sort_order) AS tags
            FROM buzz_private.roles r
            WHERE r.community_id = v_community
              AND (v_rebuild OR r.role_id = ANY (v_role_ids))
            UNION ALL
            -- Live definitions of roles no longer defined: those this transaction deleted,
            -- and on republish any (a definition deleted with triggers off).
            SELECT e.role_id, 5, buzz_private.role_deletion_tags(v_pubkey, e.role_id)
            FROM buzz_private.role_events e
            WHERE e.community_id = v_community AND e.kind = 33534
              AND NOT EXISTS (SELECT FROM buzz_private.roles r
                              WHERE r.community_id = e.community_id
                                AND r.role_id = e.role_id)
              AND (v_rebuild OR e.role_id = ANY (v_role_ids))
        ) AS w;
        RETURN QUERY
            WITH serialized AS (
                SELECT w.n, w.role_id, w.kind, w.tags,
                       buzz_private.serialize_event(v_pubkey, v_created_at, w.kind, w.tags)
                           AS serialized
                FROM ROWS FROM (pg_catalog.unnest(v_role_ids), pg_catalog.unnest(v_kinds),
                                pg_catalog.unnest(v_role_tags))
                         WITH ORDINALITY AS w (role_id, kind, tags, n)
            ), identified AS (
                SELECT se.*, buzz_private.event_id(se.serialized) AS id FROM serialized se
            ), kept AS (
                INSERT INTO buzz_private.tx_prepared_events
                    (xid, position, community_id, id, pubkey, kind, created_at, role_id, tags)
                SELECT v_xid, v_position + i.n::integer, v_community, i.id,
                       v_pubkey, i.kind, v_created_at, i.role_id, i.tags
                FROM identified i
            )
            SELECT v_community, i.id, i.kind, v_created_at, i.serialized
            FROM identified i
            ORDER BY i.n;
        GET DIAGNOSTICS v_added = ROW_COUNT;
        v_position := v_position + v_added;
        IF NOT v_list AND v_added = 0 THEN
            -- Nothing to sign: the guard has nothing to hold this transaction to.
            DELETE FROM buzz_private.tx_pending_lists p
            WHERE p.xid = v_xid AND p.community_id = v_community;
        END IF;
    END LOOP;
END
$$;
ALTER FUNCTION buzz_private.prepare_events(text, uuid) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.prepare_events(text, uuid) FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.prepare_events(text, uuid) IS
    'prepare_membership_events, of the transaction''s communities or of one of them.';
