-- buzz.prepare_membership_events(p_relay_pubkey text)
--   -> TABLE(community_id uuid, id text, kind integer, created_at bigint, serialized text)
-- Phase one of a list write: the relay key (recorded by the first prepare, BZKEY for another,
-- BZIPK for a malformed one), one 13534 per changed community in list-lock order, 8000/8001
-- by net effect, rows per community (list, 8000s, 8001s by pubkey, 33534s and kind 5s by role
-- id), serialized hashing to id, the tags, created_at = max(clock, newest list + 1, newest role
-- event + 1), a definition alone prepared without a list, republish re-signing every
-- definition, the lead bound (BZLAG), re-prepare replacing the earlier set, BZARC for a
-- community archived under a member or role change, deleted communities, direct SQL, and who
-- may call it.
-- BZISO is covered by pytest: this suite runs in one READ COMMITTED transaction.
BEGIN;
\ir lib/fixtures.sql

-- What prepare returns now as (community_id, kind, member of an 8000/8001 or NULL), in order.
CREATE FUNCTION pg_temp.prepared_rows() RETURNS TABLE (community_id uuid, kind integer, member text)
LANGUAGE sql
BEGIN ATOMIC
    SELECT p.community_id, p.kind,
           CASE WHEN p.kind <> 13534 THEN p.serialized::jsonb #>> '{4,1,1}' END
    FROM buzz.prepare_membership_events(pg_temp.relay_pubkey()) WITH ORDINALITY
         AS p (community_id, id, kind, created_at, serialized, ord)
    ORDER BY p.ord;
END;
CREATE FUNCTION pg_temp.prepared_rows_are(p_expected text, p_description text)
RETURNS text LANGUAGE sql
RETURN results_eq('SELECT * FROM pg_temp.prepared_rows()', p_expected, p_description);

-- A burst of p_lists lists of a new community in a row, within one clock second: for each,
-- how far ahead of the clock its created_at is, or 'BZLAG'. Retried if the second changed
-- meanwhile; everything it did is rolled back.
CREATE FUNCTION pg_temp.burst(p_lists integer) RETURNS text[] LANGUAGE plpgsql AS $$
DECLARE
    v_start bigint;
    v_out text[];
    v_c uuid;
BEGIN
    FOR v_try IN 1..20 LOOP
        BEGIN
            v_out := '{}';
            v_start := pg_temp.clock();
            SELECT x.community_id INTO v_c
            FROM buzz.create_community('burst.example.org', pg_temp.pk(0)) x;
            FOR i IN 1..p_lists LOOP
                IF i > 1 THEN
                    PERFORM buzz.add_relay_member(v_c, pg_temp.pk(100 + i));
                END IF;
                BEGIN
                    PERFORM pg_temp.flush();
                    v_out := v_out || ((SELECT l.created_at FROM buzz_private.member_lists l
                                        WHERE l.community_id = v_c) - v_start)::text;
                EXCEPTION WHEN SQLSTATE 'BZLAG' THEN
                    v_out := v_out || 'BZLAG'::text;
                END;
            END LOOP;
            IF pg_temp.clock() = v_start THEN
                RAISE SQLSTATE 'ZZDON';
            END IF;
            RAISE SQLSTATE 'ZZRTY';
        EXCEPTION
            WHEN SQLSTATE 'ZZDON' THEN RETURN v_out;
            WHEN SQLSTATE 'ZZRTY' THEN NULL;
        END;
    END LOOP;
    RAISE EXCEPTION 'the clock kept changing';
END
$$;

-- The next list of a community when its newest list is p_ahead seconds ahead of the clock:
-- how far ahead the new one is, or 'BZLAG'. Within one clock second (retried); rolled back.
CREATE FUNCTION pg_temp.lead_after(p_community uuid, p_ahead integer) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    v_start bigint;
    v_out text;
BEGIN
    FOR v_try IN 1..20 LOOP
        BEGIN
            v_start := pg_temp.clock();
            UPDATE buzz_private.member_lists l SET created_at = v_start + p_ahead
            WHERE l.community_id = p_community;
            PERFORM buzz.republish_member_list(p_community);
            BEGIN
                PERFORM pg_temp.flush();
                v_out := ((SELECT l.created_at FROM buzz_private.member_lists l
                           WHERE l.community_id = p_community) - v_start)::text;
            EXCEPTION WHEN SQLSTATE 'BZLAG' THEN
                v_out := 'BZLAG';
            END;
            IF pg_temp.clock() = v_start THEN
                RAISE SQLSTATE 'ZZDON';
            END IF;
            RAISE SQLSTATE 'ZZRTY';
        EXCEPTION
            WHEN SQLSTATE 'ZZDON' THEN RETURN v_out;
            WHEN SQLSTATE 'ZZRTY' THEN NULL;
        END;
    END LOOP;
    RAISE EXCEPTION 'the clock kept changing';
END
$$;

SELECT plan(95);

-- The relay key
DELETE FROM buzz_private.relay_key;
SELECT is_empty($$SELECT * FROM buzz.prepare_membership_events(pg_temp.relay_pubkey())$$,
                'nothing changed: no rows');
SELECT is((SELECT k.pubkey::text FROM buzz_private.relay_key k), pg_temp.relay_pubkey(),
          '... and the first prepare recorded its key anyway');
SELECT throws_ok(format('SELECT * FROM buzz.prepare_membership_events(%L)', repeat('cd', 32)),
                 'BZKEY', NULL, 'another key: BZKEY');
SELECT lives_ok(format('SELECT * FROM buzz.prepare_membership_events(%L)',
                       upper(pg_temp.relay_pubkey())),
                'the recorded key in uppercase is the same key');
SELECT throws_ok('SELECT * FROM buzz.prepare_membership_events(NULL)',
                 'BZIPK', NULL, 'NULL key: BZIPK');
SELECT throws_ok(format('SELECT * FROM buzz.prepare_membership_events(%L)', repeat('a', 63)),
                 'BZIPK', NULL, '63 hex characters: BZIPK');
SELECT throws_ok(format('SELECT * FROM buzz.prepare_membership_events(%L)', repeat('g', 64)),
                 'BZIPK', NULL, 'not hex: BZIPK');
SELECT throws_ok($$SELECT * FROM buzz.prepare_membership_events(
                      'npub1sg6plzptd64u62a878hep2kev88swjh3tw00gjsfl8f237lmu63q0uf63m')$$,
                 'BZIPK', NULL, 'an npub: BZIPK');

SELECT pg_temp.community() AS c \gset
SELECT pg_temp.community('second.example.org') AS c2 \gset
SELECT is_empty($$SELECT * FROM buzz.prepare_membership_events(pg_temp.relay_pubkey())$$,
                'after a publish nothing is owed: no rows');

-- One list and the 8000s of a batch
SELECT is(buzz.add_relay_members(:'c', ARRAY[pg_temp.pk(1), pg_temp.pk(2)]), 2, 'two added');
SELECT pg_temp.prepared_rows_are(
    format($$VALUES (%1$L::uuid, 13534, NULL::text), (%1$L, 8000, %2$L), (%1$L, 8000, %3$L)$$,
           :'c', least(pg_temp.pk(1), pg_temp.pk(2)), greatest(pg_temp.pk(1), pg_temp.pk(2))),
    '... prepared as the list, then one 8000 per new member by pubkey');
SELECT ok((SELECT bool_and(p.id = buzz_private.event_id(p.serialized)
                           AND p.id = encode(sha256(convert_to(p.serialized, 'UTF8')), 'hex'))
           FROM pg_temp.prepared() p),
          'every id is the sha256 of its serialized');
SELECT ok((SELECT bool_and(p.id ~ '^[0-9a-f]{64}$') FROM pg_temp.prepared() p),
          'ids are lowercase hex');
SELECT is((SELECT p.serialized FROM pg_temp.prepared() p WHERE p.kind = 13534),
          format('[0,"%s",%s,13534,%s,""]', pg_temp.relay_pubkey(),
                 (SELECT p.created_at FROM pg_temp.prepared() p WHERE p.kind = 13534),
                 pg_temp.expected_tags(:'c')),
          'the list is [0,key,created_at,13534,tags,""]: ["-"], then every member by pubkey');
SELECT is((SELECT array_agg(t ->> 1 ORDER BY i)
           FROM pg_temp.prepared() p,
                jsonb_array_elements(p.serialized::jsonb -> 4) WITH ORDINALITY AS e (t, i)
           WHERE p.kind = 13534 AND i > 1),
          (SELECT array_agg(m ORDER BY m COLLATE "C")
           FROM unnest(ARRAY[pg_temp.pk(0), pg_temp.pk(1), pg_temp.pk(2)]) m),
          '... the member tags in pubkey order');
SELECT is((SELECT (p.serialized::jsonb -> 4 -> 0)
           FROM pg_temp.prepared() p WHERE p.kind = 13534),
          '["-"]'::jsonb, '... ["-"] first');
SELECT is((SELECT array_agg(p.serialized ORDER BY p.serialized COLLATE "C")
           FROM pg_temp.prepared() p WHERE p.kind = 8000),
          (SELECT array_agg(format('[0,"%s",%s,8000,[["-"],["p","%s"]],""]',
                                   pg_temp.relay_pubkey(), p.created_at, m) ORDER BY m COLLATE "C")
           FROM pg_temp.prepared() p, unnest(ARRAY[pg_temp.pk(1), pg_temp.pk(2)]) m
           WHERE p.kind = 13534),
          'an 8000 is [0,key,created_at,8000,[["-"],["p",pubkey]],""] with the list''s created_at');
SELECT is((SELECT count(DISTINCT p.created_at) FROM pg_temp.prepared() p), 1::bigint,
          'every event of the write carries the list''s created_at');
SELECT is((SELECT p.serialized::jsonb ->> 1 FROM pg_temp.prepared() p WHERE p.kind = 13534),
          pg_temp.relay_pubkey(), 'the events are the relay key''s');

-- Re-prepare replaces the earlier set
SELECT pg_temp.prepared_ids() AS first_ids \gset
SELECT is(pg_temp.prepared_ids(), :'first_ids'::text[], 'prepare again, nothing new: the same events');
SELECT is((SELECT count(*) FROM buzz_private.tx_prepared_events e
           WHERE e.xid = pg_current_xact_id()), 3::bigint,
          '... replacing the earlier set, not adding to it');
SELECT is((SELECT count(*) FROM buzz.insert_signed_events(:'first_ids'::text[], pg_temp.signatures(:'first_ids'::text[]))),
          3::bigint, '... whose signatures are taken');
SELECT results_eq(format('SELECT * FROM pg_temp.listed(%L)', :'c'),
                  format('SELECT m.pubkey, m.role FROM buzz.relay_members(%L) m', :'c'),
                  '... and the live list names the members');
SELECT pg_temp.settle();

-- Net effect
SELECT is(buzz.add_relay_member(:'c', pg_temp.pk(4)), 'added', 'added ...');
SELECT is(buzz.remove_relay_member(:'c', pg_temp.pk(4)), 'removed', '... and removed again');
SELECT is((SELECT count(*) FROM pg_temp.prepared_rows() e WHERE e.kind <> 13534), 0::bigint,
          '... neither 8000 nor 8001');
SELECT is(buzz.remove_relay_member(:'c', pg_temp.pk(1)), 'removed', 'removed ...');
SELECT is(buzz.add_relay_member(:'c', pg_temp.pk(1)), 'added', '... and added back');
SELECT pg_temp.prepared_rows_are(format($$VALUES (%L::uuid, 13534, NULL::text)$$, :'c'),
                          '... the list alone, still no 8000 nor 8001');
SELECT is(buzz.update_relay_member_role(:'c', pg_temp.pk(2), 'admin'), 'updated', 'a role changes');
SELECT pg_temp.prepared_rows_are(format($$VALUES (%L::uuid, 13534, NULL::text)$$, :'c'),
                          '... the list alone');
SELECT is((SELECT (p.serialized::jsonb -> 4) @> jsonb_build_array(jsonb_build_array('member', pg_temp.pk(2), 'admin'))
           FROM pg_temp.prepared() p WHERE p.kind = 13534),
          true, '... naming the new role');
SELECT is(pg_temp.flush(), 1, '... published');

SELECT is(buzz.add_relay_member(:'c', pg_temp.pk(5)), 'added', 'one added ...');
SELECT is(buzz.remove_relay_member(:'c', pg_temp.pk(2)), 'removed', '... one removed');
SELECT is(buzz.remove_relay_member(:'c', pg_temp.pk(1)), 'removed', '... another removed');
SELECT pg_temp.prepared_rows_are(
    format($$VALUES (%1$L::uuid, 13534, NULL::text), (%1$L, 8000, %2$L), (%1$L, 8001, %3$L),
                    (%1$L, 8001, %4$L)$$,
           :'c', pg_temp.pk(5), least(pg_temp.pk(1), pg_temp.pk(2)),
           greatest(pg_temp.pk(1), pg_temp.pk(2))),
    '... the list, the 8000, then the 8001s by pubkey');

-- One list per changed community, in list-lock order
SELECT is(buzz.add_relay_member(:'c2', pg_temp.pk(6)), 'added', 'a second community changes too');
SELECT is((SELECT array_agg(e.community_id ORDER BY o) FROM pg_temp.prepared_rows() WITH ORDINALITY AS e (community_id, kind, member, o)
           WHERE e.kind = 13534),
          (SELECT array_agg(x ORDER BY buzz_private.list_lock_key(x), x)
           FROM unnest(ARRAY[:'c', :'c2']::uuid[]) x),
          '... one list per community, in list-lock order');
SELECT is((SELECT array_agg(e.kind ORDER BY o) FROM pg_temp.prepared_rows() WITH ORDINALITY AS e (community_id, kind, member, o)
           WHERE e.community_id = :'c2'),
          ARRAY[13534, 8000], '... each community''s events after its list');
SELECT is(pg_temp.flush(), 6, '... published together');

-- created_at
SELECT pg_temp.clock() AS s1 \gset
UPDATE buzz_private.member_lists SET created_at = :s1 - 100 WHERE community_id = :'c';
UPDATE buzz_private.role_events SET created_at = :s1 - 100 WHERE community_id = :'c';
SELECT is(buzz.add_relay_member(:'c', pg_temp.pk(7)), 'added', 'the newest list and role event are 100 s old ...');
SELECT created_at AS t FROM pg_temp.prepared() WHERE kind = 13534 \gset
SELECT pg_temp.clock() AS s2 \gset
SELECT ok(:t BETWEEN :s1 AND :s2, '... the new list is at the clock');
UPDATE buzz_private.member_lists SET created_at = :s2 + 10 WHERE community_id = :'c';
SELECT is((SELECT p.created_at FROM pg_temp.prepared() p WHERE p.kind = 13534), :s2 + 11::bigint,
          'the newest list 10 s ahead: one second past it');
UPDATE buzz_private.role_events SET created_at = :s2 + 20 WHERE community_id = :'c' AND role_id = 'member';
SELECT is((SELECT p.created_at FROM pg_temp.prepared() p WHERE p.kind = 13534), :s2 + 21::bigint,
          'a role event 20 s ahead, newer than the newest list: one second past it');
UPDATE buzz_private.role_events SET created_at = :s2 + 20 WHERE community_id = :'c2' AND role_id = 'member';
SELECT is(pg_temp.flush(), 2, '... published');

-- A, B, A within one transaction: three created_at, three ids
SELECT is(buzz.add_relay_member(:'c', pg_temp.pk(8)), 'added', 'members go A ...');
SELECT pg_temp.flush() AS n \gset
SELECT (buzz.member_list(:'c') ->> 'created_at')::bigint AS a1_at, buzz.member_list(:'c') ->> 'id' AS a1_id \gset
SELECT is(buzz.remove_relay_member(:'c', pg_temp.pk(8)), 'removed', '... B ...');
SELECT pg_temp.flush() AS n \gset
SELECT (buzz.member_list(:'c') ->> 'created_at')::bigint AS b_at, buzz.member_list(:'c') ->> 'id' AS b_id \gset
SELECT is(buzz.add_relay_member(:'c', pg_temp.pk(8)), 'added', '... A again');
SELECT created_at AS a2_at, id AS a2_id FROM pg_temp.prepared() WHERE kind = 13534 \gset
SELECT ok(:a1_at < :b_at AND :b_at < :a2_at, '... their created_at only grow, past the replaced lists');
SELECT ok(:'a2_id' NOT IN (:'a1_id', :'b_id'), '... and the third list has its own id');
SELECT is(pg_temp.flush(), 2, '... published');

-- Role events: a definition alone is its 33534 alone (no list), with the created_at rule
SELECT is(buzz.define_role(:'c2', 'mod', 'Moderator'), 'defined', 'a role defined (the newest role event 20 s ahead) ...');
SELECT pg_temp.prepared_rows_are(format($$VALUES (%L::uuid, 33534, 'mod')$$, :'c2'),
                                 '... prepared as its 33534 alone: no member tag changed, no list');
SELECT is((SELECT p.created_at FROM pg_temp.prepared() p), :s2 + 21::bigint,
          '... one second past the community''s newest role event');
SELECT is((SELECT p.serialized FROM pg_temp.prepared() p),
          format('[0,"%s",%s,33534,[["-"],["d","mod"],["label","Moderator"]],""]', pg_temp.relay_pubkey(), :s2 + 21),
          '... [0,key,created_at,33534,[["-"],["d",id],["label",..]],""]');
SELECT is(pg_temp.flush(), 1, '... published');
UPDATE buzz_private.role_events SET created_at = :s2 - 50 WHERE community_id = :'c2';
UPDATE buzz_private.member_lists SET created_at = :s2 + 30 WHERE community_id = :'c2';
SELECT is(buzz.define_role(:'c2', 'mod', 'Moderator', p_color => 5), 'updated', 'redefined (the list 30 s ahead) ...');
SELECT is((SELECT p.created_at FROM pg_temp.prepared() p), :s2 + 31::bigint,
          '... its 33534 one second past the community''s newest list, though no list is written');
SELECT is(pg_temp.flush(), 1, '... published');
-- All kinds in one transaction, in order: the list, 8000s, 8001s, 33534s by role id, kind 5s by role id
SELECT is(buzz.define_role(:'c2', 'old-b', 'B') || buzz.define_role(:'c2', 'old-a', 'A'), 'defineddefined',
          'two more roles defined');
SELECT is(pg_temp.flush(), 2, '... published');
SELECT is(buzz.add_relay_member(:'c2', pg_temp.pk(11)) || buzz.remove_relay_member(:'c2', pg_temp.pk(6)),
          'addedremoved', 'in one transaction: a member added, one removed ...');
SELECT is(buzz.define_role(:'c2', 'zz', 'Z') || buzz.define_role(:'c2', '0a', 'Zero')
          || buzz.define_role(:'c2', 'mod', 'Mod'), 'defineddefinedupdated', '... roles defined and one redefined ...');
SELECT is(buzz.delete_role(:'c2', 'old-b') || buzz.delete_role(:'c2', 'old-a'), 'deleteddeleted', '... two deleted');
SELECT pg_temp.prepared_rows_are(
    format($$VALUES (%1$L::uuid, 13534, NULL::text), (%1$L, 8000, %2$L), (%1$L, 8001, %3$L),
                    (%1$L, 33534, '0a'), (%1$L, 33534, 'mod'), (%1$L, 33534, 'zz'),
                    (%1$L, 5, '33534:%4$s:old-a'), (%1$L, 5, '33534:%4$s:old-b')$$,
           :'c2', pg_temp.pk(11), pg_temp.pk(6), pg_temp.relay_pubkey()),
    '... the list, the 8000, the 8001, the 33534s by role id, the kind 5s by role id');
SELECT is((SELECT count(DISTINCT p.created_at) FROM pg_temp.prepared() p), 1::bigint, '... all with one created_at');
SELECT is((SELECT p.serialized FROM pg_temp.prepared() p WHERE p.kind = 5 ORDER BY p.serialized COLLATE "C" LIMIT 1),
          format('[0,"%1$s",%2$s,5,[["-"],["a","33534:%1$s:old-a"],["k","33534"]],""]', pg_temp.relay_pubkey(),
                 (SELECT p.created_at FROM pg_temp.prepared() p LIMIT 1)),
          '... a kind 5 is [0,key,created_at,5,[["-"],["a","33534:<key>:<role>"],["k","33534"]],""]');
SELECT ok((SELECT bool_and(p.id = encode(sha256(convert_to(p.serialized, 'UTF8')), 'hex')) FROM pg_temp.prepared() p),
          '... every id the sha256 of its serialized');
SELECT is(pg_temp.flush(), 8, '... published');
SELECT is(buzz.republish_member_list(:'c2')::text, '', 'a republish ...');
SELECT pg_temp.prepared_rows_are(
    format($$VALUES (%1$L::uuid, 13534, NULL::text), (%1$L, 33534, '0a'), (%1$L, 33534, 'admin'),
                    (%1$L, 33534, 'member'), (%1$L, 33534, 'mod'), (%1$L, 33534, 'owner'), (%1$L, 33534, 'zz')$$, :'c2'),
    '... re-signs the list and every definition, no deletion');
SELECT is(pg_temp.flush(), 7, '... published');
SELECT is(buzz.define_role(:'c2', 'mod', 'Mod'), 'unchanged', 'an unchanged definition ...');
SELECT is_empty('SELECT * FROM pg_temp.prepared()', '... prepares nothing');

-- The lead bound
UPDATE buzz_private.settings SET max_list_lead_seconds = 2;
SELECT is(pg_temp.burst(4), ARRAY['0', '1', '2', 'BZLAG'],
          'lead bound 2: lists in a row run 0, 1, 2 s ahead; the next one raises BZLAG');
UPDATE buzz_private.settings SET max_list_lead_seconds = 300;
SELECT is(pg_temp.lead_after(:'c', 299), '300', 'default bound: exactly 300 s ahead is allowed');
SELECT is(pg_temp.lead_after(:'c', 300), 'BZLAG', '... 301 s ahead raises BZLAG');

-- Archived under a change
SELECT is(buzz.add_relay_member(:'c', pg_temp.pk(9)), 'added', 'a member added ...');
SELECT is(buzz.archive_community(:'c'), 'archived', '... then the community archived');
SELECT throws_ok($$SELECT * FROM buzz.prepare_membership_events(pg_temp.relay_pubkey())$$,
                 'BZARC', NULL, '... prepare raises BZARC');
SELECT is(buzz.unarchive_community(:'c'), 'unarchived', 'unarchived');
SELECT is(pg_temp.flush(), 2, '... the change publishes');
SELECT is(buzz.define_role(:'c', 'late', 'Late'), 'defined', 'a role defined ...');
SELECT is(buzz.archive_community(:'c'), 'archived', '... then the community archived');
SELECT throws_ok($$SELECT * FROM buzz.prepare_membership_events(pg_temp.relay_pubkey())$$,
                 'BZARC', NULL, '... prepare raises BZARC for a role change too');
SELECT is(buzz.unarchive_community(:'c'), 'unarchived', 'unarchived');
SELECT is(pg_temp.flush(), 1, '... the definition publishes');

-- Deleted in the same transaction; direct SQL
SELECT is(buzz.add_relay_member(:'c2', pg_temp.pk(9)), 'added', 'a member added ...');
SELECT is(buzz.delete_community(:'c2'), 'deleted', '... then the community deleted');
SELECT is_empty($$SELECT * FROM pg_temp.prepared()$$, '... it gets no list and no event');
INSERT INTO buzz_private.relay_members (community_id, pubkey, role) VALUES (:'c', pg_temp.pk(10), 'member');
SELECT pg_temp.prepared_rows_are(format($$VALUES (%1$L::uuid, 13534, NULL::text), (%1$L, 8000, %2$L)$$,
                                 :'c', pg_temp.pk(10)),
                          'a direct INSERT is prepared like an API write');
INSERT INTO buzz_private.roles (community_id, role_id, label) VALUES (:'c', 'direct', 'Direct');
SELECT pg_temp.prepared_rows_are(format($$VALUES (%1$L::uuid, 13534, NULL::text), (%1$L, 8000, %2$L),
                                                (%1$L, 33534, 'direct')$$, :'c', pg_temp.pk(10)),
                                 '... a direct INSERT of a role too');

-- Who may call it
SET LOCAL ROLE buzz_reader;
SELECT throws_ok($$SELECT * FROM buzz.prepare_membership_events(pg_temp.relay_pubkey())$$,
                 '42501', NULL, 'buzz_reader may not prepare');
SET LOCAL ROLE buzz_writer;
SELECT is((SELECT count(*) FROM pg_temp.prepared()), 3::bigint, 'buzz_writer may');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
