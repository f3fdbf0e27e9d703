-- buzz.rotate_relay_key(p_new_pubkey text, p_limit integer DEFAULT NULL) -> integer
-- Records the new key (prepare with the old one raises BZKEY from then on), marks up to
-- p_limit communities (all when NULL), archived ones included, whose live list or a live role
-- definition another key signed, returns how many, and 0 when none is left; the rotation
-- re-signs each marked community's list and every definition (13534 and 33534s, no 8000/8001,
-- by the new key), leaves kind 5 deletions alone, and obeys the lead bound; BZIPK, 22023 for
-- p_limit; and who may call it: buzz_key_admin alone, not buzz_writer nor buzz_reader.
-- BZISO is covered by pytest: this suite runs in one READ COMMITTED transaction.
BEGIN;
\ir lib/fixtures.sql

CREATE FUNCTION pg_temp.k1() RETURNS text LANGUAGE sql IMMUTABLE RETURN 'e493dbf1c10d80f3581e4904930b1404cc6c13900ee0758474fa94abe8c4cd13';
CREATE FUNCTION pg_temp.k2() RETURNS text LANGUAGE sql IMMUTABLE RETURN '2f8bde4d1a07209355b4a7250a5c5128e88b84bddc619ab7cba8d569b240efe4';
-- Communities whose live list or a live role definition is not signed by a key.
CREATE FUNCTION pg_temp.not_signed_by(p_key text) RETURNS bigint LANGUAGE sql
RETURN (SELECT count(*) FROM buzz_private.communities c
        WHERE EXISTS (SELECT FROM buzz_private.member_lists l
                      WHERE l.community_id = c.community_id AND l.pubkey <> p_key)
           OR EXISTS (SELECT FROM buzz_private.role_events r
                      WHERE r.community_id = c.community_id AND r.kind = 33534 AND r.pubkey <> p_key));
-- Live role definitions not signed by a key.
CREATE FUNCTION pg_temp.definitions_not_by(p_key text) RETURNS bigint LANGUAGE sql
RETURN (SELECT count(*) FROM buzz_private.role_events r WHERE r.kind = 33534 AND r.pubkey <> p_key);
CREATE FUNCTION pg_temp.marked_count() RETURNS bigint LANGUAGE sql
RETURN (SELECT count(*) FROM buzz_private.tx_pending_lists p
        WHERE p.xid = pg_current_xact_id_if_assigned());

SELECT plan(54);

SELECT pg_temp.community('a.example.org') AS a \gset
SELECT pg_temp.community('b.example.org') AS b \gset
SELECT buzz.define_role(:'b', 'tmp', 'Temporary') AS tmp_defined \gset
SELECT pg_temp.flush() AS tmp_published \gset
SELECT buzz.delete_role(:'b', 'tmp') AS tmp_deleted \gset
SELECT pg_temp.flush() AS tmp_deletion_published \gset
SELECT pg_temp.community('archived.example.org') AS arc \gset
SELECT buzz.archive_community(:'arc') AS archive_outcome \gset
SELECT community_id AS nolist FROM buzz.create_community('nolist.example.org', pg_temp.pk(1)) \gset
SELECT is(pg_temp.flush(), 5, 'four communities, one of them archived, all published');
DELETE FROM buzz_private.member_lists WHERE community_id = :'nolist';
SELECT is((SELECT count(*) FROM buzz_private.member_lists l
           WHERE l.community_id IN (:'a', :'b', :'arc') AND l.pubkey = pg_temp.relay_pubkey()),
          3::bigint, 'three of them have a live list by the old key, the fourth none');
SELECT pg_temp.not_signed_by(pg_temp.k1()) AS todo \gset
SELECT is(:todo::integer, 4, '... all four have definitions by the old key');

-- Rotation in batches
SELECT is(buzz.rotate_relay_key(pg_temp.k1(), 2), 2, 'rotate with p_limit 2: two communities marked');
SELECT is((SELECT k.pubkey::text FROM buzz_private.relay_key k), pg_temp.k1(), '... the new key is recorded');
SELECT is(pg_temp.marked_count(), 2::bigint, '... two lists owed');
SELECT is(pg_temp.guard(), 'BZUNS', '... which must be published before COMMIT');
SELECT throws_ok($$SELECT * FROM buzz.prepare_membership_events(pg_temp.relay_pubkey())$$, 'BZKEY', NULL,
                 '... prepare with the old key: BZKEY');
SELECT results_eq($$SELECT p.kind, p.serialized::jsonb ->> 1, count(*)::integer
                    FROM buzz.prepare_membership_events(pg_temp.k1()) p GROUP BY 1, 2 ORDER BY 1$$,
                  format($$VALUES (13534, %1$L, 2), (33534, %1$L, 6)$$, pg_temp.k1()),
                  '... with the new key: two lists and their six definitions by the new key, no 8000 nor 8001');
SELECT is((SELECT count(*) FROM pg_temp.publish_with(pg_temp.k1())), 8::bigint, '... published');
SELECT is(pg_temp.not_signed_by(pg_temp.k1()), :todo - 2::bigint, '... two lists are now signed by the new key');
SELECT is(buzz.rotate_relay_key(pg_temp.k1(), 2), (:todo - 2)::integer, 'again: the rest is marked');
SELECT is((SELECT count(*) FROM pg_temp.publish_with(pg_temp.k1())), 4 * (:todo - 2)::bigint,
          '... published: a list and three definitions each');
SELECT ok(buzz.member_list(:'arc') ->> 'pubkey' = pg_temp.k1(),
          '... the archived community''s list included');
SELECT is(buzz.rotate_relay_key(pg_temp.k1(), 2), 0, 'again: 0, none left');
SELECT is(buzz.rotate_relay_key(pg_temp.k1()), 0, '... also without a limit');
SELECT is(buzz.rotate_relay_key(upper(pg_temp.k1())), 0, '... also in uppercase');
SELECT is((SELECT k.pubkey::text FROM buzz_private.relay_key k), pg_temp.k1(), '... the key stays recorded in lowercase');
SELECT ok(NOT pg_temp.marked(), '... nothing owed');
SELECT is(pg_temp.guard(), NULL, '... the commit guard passes');
SELECT is(buzz.member_list(:'nolist') ->> 'pubkey', pg_temp.k1(),
          'a community without a live list was marked for its definitions: its list is rebuilt too');
SELECT is(pg_temp.definitions_not_by(pg_temp.k1()), 0::bigint, 'every live 33534 is by the new key');
SELECT results_eq(format('SELECT * FROM pg_temp.role_events(%L)', :'b'),
                  $$VALUES ('admin', 33534), ('member', 33534), ('owner', 33534), ('tmp', 5)$$,
                  '... the kind 5 of a deleted role stays live');
SELECT is((SELECT r.pubkey::text FROM buzz_private.role_events r WHERE r.community_id = :'b' AND r.kind = 5),
          pg_temp.relay_pubkey(), '... signed by the old key (deletions are not re-signed, and mark nothing)');
SELECT results_eq(format('SELECT * FROM pg_temp.listed(%L)', :'a'),
                  format('SELECT m.pubkey, m.role FROM buzz.relay_members(%L) m', :'a'),
                  'the rotated lists name the members');
SELECT is_empty(format('SELECT * FROM buzz.member_list_drift(%L)', :'a'), '... no drift');
-- A list by the new key, a definition by another: marked
UPDATE buzz_private.role_events SET pubkey = pg_temp.relay_pubkey() WHERE community_id = :'a' AND role_id = 'member';
SELECT is(buzz.rotate_relay_key(pg_temp.k1()), 1, 'a definition by another key, the list by the new one: marked');
SELECT results_eq($$SELECT p.community_id, p.kind, count(*)::integer
                    FROM buzz.prepare_membership_events(pg_temp.k1()) p GROUP BY 1, 2 ORDER BY 2$$,
                  format($$VALUES (%1$L::uuid, 13534, 1), (%1$L, 33534, 3)$$, :'a'),
                  '... its list and every definition re-signed');
SELECT is((SELECT count(*) FROM pg_temp.publish_with(pg_temp.k1())), 4::bigint, '... published');
SELECT is(pg_temp.definitions_not_by(pg_temp.k1()), 0::bigint, '... every live 33534 by the new key again');

-- All at once, with a member change in the same transaction
SELECT is(buzz.rotate_relay_key(pg_temp.k2()), :todo::integer, 'rotate without a limit: every list is marked');
SELECT is(buzz.add_relay_member(:'a', pg_temp.pk(5)), 'added', '... a member added in the same transaction');
SELECT results_eq($$SELECT p.community_id, p.kind FROM buzz.prepare_membership_events(pg_temp.k2()) p
                    WHERE p.community_id = $$ || quote_literal(:'a'),
                  format($$VALUES (%L::uuid, 13534), (%1$L, 8000), (%1$L, 33534), (%1$L, 33534), (%1$L, 33534)$$, :'a'),
                  '... its community gets one list, the 8000 and its definitions');
SELECT is((SELECT count(*) FROM pg_temp.publish_with(pg_temp.k2())), (4 * :todo + 1)::bigint, '... all published');
SELECT is(pg_temp.definitions_not_by(pg_temp.k2()), 0::bigint, '... every live 33534 by the new key');
SELECT is(buzz.rotate_relay_key(pg_temp.k2()), 0, '... none left');

-- The lead bound
UPDATE buzz_private.member_lists SET created_at = pg_temp.clock() + 1000 WHERE community_id = :'b';
SELECT is(buzz.rotate_relay_key(pg_temp.k1(), 100), :todo::integer, 'rotate back, one list 1000 s ahead');
SELECT throws_ok($$SELECT * FROM buzz.prepare_membership_events(pg_temp.k1())$$, 'BZLAG', NULL,
                 '... its rotation list obeys the lead bound: BZLAG');
UPDATE buzz_private.member_lists SET created_at = pg_temp.clock() - 1 WHERE community_id = :'b';
SELECT is((SELECT count(*) FROM pg_temp.publish_with(pg_temp.k1())), 4 * :todo::bigint, '... published once it is not');

-- Arguments
SELECT throws_ok('SELECT buzz.rotate_relay_key(NULL)', 'BZIPK', NULL, 'a NULL key: BZIPK');
SELECT throws_ok(format('SELECT buzz.rotate_relay_key(%L)', repeat('x', 64)), 'BZIPK', NULL, 'a malformed key: BZIPK');
SELECT throws_ok(format('SELECT buzz.rotate_relay_key(%L, 0)', pg_temp.k2()), '22023', NULL, 'p_limit 0: 22023');
SELECT throws_ok(format('SELECT buzz.rotate_relay_key(%L, -1)', pg_temp.k2()), '22023', NULL, 'p_limit -1: 22023');

-- A live 33534 by another key whose role is no longer defined (deleted with triggers off)
SELECT is(buzz.define_role(:'a', 'orphan', 'Orphan'), 'defined', 'a role defined ...');
SELECT is((SELECT count(*) FROM pg_temp.publish_with(pg_temp.k1())), 1::bigint, '... published');
SET LOCAL session_replication_role = replica;
DELETE FROM buzz_private.roles WHERE community_id = :'a' AND role_id = 'orphan';
SET LOCAL session_replication_role = origin;
-- As if signed by the key before: its community has a definition by another key.
UPDATE buzz_private.role_events SET pubkey = pg_temp.k2() WHERE community_id = :'a' AND role_id = 'orphan';
SELECT is(buzz.rotate_relay_key(pg_temp.k1()), 1, '... its definition deleted with triggers off: the community is marked');
SELECT cmp_ok((SELECT count(*) FROM pg_temp.publish_with(pg_temp.k1())), '>=', 4::bigint,
              '... its list and three definitions re-signed and the orphan''s kind 5');
SELECT is(buzz.rotate_relay_key(pg_temp.k1()), 0, '... then none is left (rotation ends)');
DELETE FROM buzz_private.role_events WHERE community_id = :'a' AND role_id = 'orphan';

-- A rotation after prepare in the same transaction voids what was prepared with the old key
-- (with no live list or definition left to mark, so that the rotation itself voids nothing)
DELETE FROM buzz_private.member_lists;
DELETE FROM buzz_private.role_events;
SELECT community_id AS late FROM buzz.create_community('late.example.org', pg_temp.pk(2)) \gset
SELECT array_agg(p.id ORDER BY p.ord) AS late_ids
FROM buzz.prepare_membership_events(pg_temp.k1()) WITH ORDINALITY
     AS p (community_id, id, kind, created_at, serialized, ord) \gset
SELECT is(buzz.rotate_relay_key(pg_temp.k2()), 0, 'rotate to k2 while a list by k1 is prepared');
SELECT throws_ok(format('SELECT * FROM buzz.insert_signed_events(%L, %L)',
                        :'late_ids', pg_temp.sigs(cardinality(:'late_ids'::text[]))),
                 'BZSTL', NULL, '... its signatures are refused: BZSTL');
SELECT is(buzz.rotate_relay_key(pg_temp.k1()), 0, '... (back to k1)');
SELECT count(*) AS late_published FROM pg_temp.publish_with(pg_temp.k1()) \gset

-- Who may call it
SET LOCAL ROLE buzz_reader;
SELECT throws_ok(format('SELECT buzz.rotate_relay_key(%L)', pg_temp.k1()), '42501', NULL,
                 'buzz_reader may not rotate');
SET LOCAL ROLE buzz_writer;
SELECT throws_ok(format('SELECT buzz.rotate_relay_key(%L)', pg_temp.k1()), '42501', NULL,
                 'buzz_writer may not rotate (a service that writes members cannot re-point the relay)');
SET LOCAL ROLE buzz_key_admin;
SELECT is(buzz.rotate_relay_key(pg_temp.k1()), 0, 'buzz_key_admin may');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
