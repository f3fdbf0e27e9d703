-- The relay_members triggers and the deferred commit guard.
-- A transaction that changed members (through the API or by direct SQL) or asked for a
-- republish, and did not insert the signatures of its lists, fails at COMMIT with BZUNS. A
-- suite cannot COMMIT, but SET CONSTRAINTS ALL IMMEDIATE fires the deferred guard at once
-- (inside throws_ok/lives_ok, in a subtransaction); constraints are deferred again after each
-- check that passes. Also: statements that change nothing, rolled-back savepoints, triggers
-- off (replica), communities deleted in the same transaction, TRUNCATE refused (55000), and a
-- change after prepare (BZSTL). Role definitions alike: define_role, a direct UPDATE, INSERT
-- or DELETE of buzz_private.roles owe their signed 33534 (or kind 5); a role defined and
-- deleted again owes nothing once prepare has found nothing to sign; TRUNCATE of roles and
-- role_events is refused; role events are announced by a deferred constraint trigger.
BEGIN;
\ir lib/fixtures.sql

CREATE FUNCTION pg_temp.unsigned(p_description text) RETURNS text LANGUAGE sql
RETURN throws_ok('SET CONSTRAINTS ALL IMMEDIATE', 'BZUNS', NULL, p_description);
CREATE FUNCTION pg_temp.signed(p_description text) RETURNS text LANGUAGE sql
RETURN lives_ok('SET CONSTRAINTS ALL IMMEDIATE', p_description);
-- What prepare returns now as (community_id, kind, member of an 8000/8001 or NULL).
CREATE FUNCTION pg_temp.prepared_rows() RETURNS TABLE (community_id uuid, kind integer, member text)
LANGUAGE sql
BEGIN ATOMIC
    SELECT p.community_id, p.kind, CASE WHEN p.kind <> 13534 THEN p.serialized::jsonb #>> '{4,1,1}' END
    FROM pg_temp.prepared() p;
END;

SELECT plan(102);

-- The triggers
SELECT trigger_is('buzz_private', 'relay_members', 'relay_members_track_insert',
                  'buzz_private', 'track_member_changes', 'relay_members: INSERT trigger');
SELECT trigger_is('buzz_private', 'relay_members', 'relay_members_track_update',
                  'buzz_private', 'track_member_changes', 'relay_members: UPDATE trigger');
SELECT trigger_is('buzz_private', 'relay_members', 'relay_members_track_delete',
                  'buzz_private', 'track_member_changes', 'relay_members: DELETE trigger');
SELECT trigger_is('buzz_private', 'relay_members', 'relay_members_refuse_truncate',
                  'buzz_private', 'refuse_truncate', 'relay_members: TRUNCATE trigger');
SELECT ok((SELECT t.tgdeferrable AND t.tginitdeferred AND t.tgconstraint <> 0
           FROM pg_trigger t WHERE t.tgrelid = 'buzz_private.tx_pending_lists'::regclass
             AND t.tgname = 'tx_pending_lists_signed_at_commit'),
          'the commit guard is a constraint trigger, deferrable, initially deferred');
SELECT trigger_is('buzz_private', 'roles', 'roles_track_insert',
                  'buzz_private', 'track_role_changes', 'roles: INSERT trigger');
SELECT trigger_is('buzz_private', 'roles', 'roles_track_update',
                  'buzz_private', 'track_role_changes', 'roles: UPDATE trigger');
SELECT trigger_is('buzz_private', 'roles', 'roles_track_delete',
                  'buzz_private', 'track_role_changes', 'roles: DELETE trigger');
SELECT trigger_is('buzz_private', 'roles', 'roles_refuse_truncate',
                  'buzz_private', 'refuse_truncate', 'roles: TRUNCATE trigger');
SELECT trigger_is('buzz_private', 'role_events', 'role_events_refuse_truncate',
                  'buzz_private', 'refuse_truncate', 'role_events: TRUNCATE trigger');
SELECT ok((SELECT t.tgdeferrable AND t.tginitdeferred AND t.tgconstraint <> 0
                  AND t.tgfoid = 'buzz_private.announce_role_event()'::regprocedure
           FROM pg_trigger t WHERE t.tgrelid = 'buzz_private.role_events'::regclass
             AND t.tgname = 'role_events_announce_at_commit'),
          'role events are announced (NOTIFY) by a constraint trigger, deferrable, initially deferred');

SELECT pg_temp.community() AS c \gset
SELECT pg_temp.community('other.example.org') AS other \gset
SELECT pg_temp.signed('after pg_temp.publish(): the guard passes');
SET CONSTRAINTS ALL DEFERRED;

-- Through the API
SELECT is(buzz.add_relay_member(:'c', pg_temp.pk(1)), 'added', 'add_relay_member, unsigned ...');
SELECT pg_temp.unsigned('... BZUNS');
SELECT is(pg_temp.flush(), 2, '... published');
SELECT pg_temp.signed('... then the guard passes');
SET CONSTRAINTS ALL DEFERRED;
SELECT is(buzz.update_relay_member_role(:'c', pg_temp.pk(1), 'admin'), 'updated', 'update_relay_member_role, unsigned ...');
SELECT pg_temp.unsigned('... BZUNS');
SELECT is(buzz.remove_relay_member(:'c', pg_temp.pk(1)), 'removed', 'remove_relay_member too, unsigned ...');
SELECT pg_temp.unsigned('... BZUNS');
SELECT is(pg_temp.flush(), 2, '... published together');
SELECT pg_temp.signed('... the guard passes');
SET CONSTRAINTS ALL DEFERRED;
SELECT is(buzz.transfer_ownership(:'c', pg_temp.pk(2)), 'transferred', 'transfer_ownership, unsigned ...');
SELECT pg_temp.unsigned('... BZUNS');
SELECT is(pg_temp.flush(), 2, '... published');
SELECT is(buzz.add_relay_member(:'c', pg_temp.pk(0)), 'already_member', 'a write that changes nothing ...');
SELECT ok(NOT pg_temp.marked(), '... owes no list');
SELECT pg_temp.signed('... the guard passes');
SET CONSTRAINTS ALL DEFERRED;

-- republish
SELECT is(buzz.republish_member_list(:'c')::text, '', 'republish_member_list, unsigned ...');
SELECT pg_temp.unsigned('... BZUNS');
SELECT is(pg_temp.flush(), 4, '... published: its list and its three role definitions');

-- Role definitions
SELECT is(buzz.define_role(:'c', 'mod', 'Moderator'), 'defined', 'define_role, unsigned ...');
SELECT pg_temp.unsigned('... BZUNS: a definition alone owes its 33534');
SELECT results_eq('SELECT * FROM pg_temp.prepared_rows()', format($$VALUES (%L::uuid, 33534, 'mod')$$, :'c'),
                  '... prepare owes the 33534 alone');
SELECT is(pg_temp.flush(), 1, '... published');
SELECT pg_temp.signed('... the guard passes');
SET CONSTRAINTS ALL DEFERRED;
SELECT is(buzz.define_role(:'c', 'mod', 'Moderator'), 'unchanged', 'define_role unchanged ...');
SELECT ok(NOT pg_temp.marked(), '... owes nothing');
SELECT is(buzz.assign_role(:'c', pg_temp.pk(2), 'mod'), 'assigned', 'assign_role, unsigned ...');
SELECT pg_temp.unsigned('... BZUNS');
SELECT is(pg_temp.flush(), 1, '... published: its list');
SELECT is(buzz.unassign_role(:'c', pg_temp.pk(2), 'mod'), 'unassigned', 'unassign_role, unsigned ...');
SELECT pg_temp.unsigned('... BZUNS');
SELECT is(pg_temp.flush(), 1, '... published: its list');
SELECT is(buzz.delete_role(:'c', 'mod'), 'deleted', 'delete_role, unsigned ...');
SELECT pg_temp.unsigned('... BZUNS: it owes the kind 5');
SELECT is(pg_temp.flush(), 1, '... published');
SELECT is(buzz.define_role(:'c', 'brief', 'Brief'), 'defined', 'a role defined ...');
SELECT is(buzz.delete_role(:'c', 'brief'), 'deleted', '... and deleted again, never published');
SELECT is_empty('SELECT * FROM pg_temp.prepared()', '... prepare finds nothing to sign');
SELECT pg_temp.signed('... then the guard passes: the transaction commits with nothing prepared');
SET CONSTRAINTS ALL DEFERRED;
SELECT is_empty($$SELECT * FROM buzz.insert_signed_events('{}', '{}')$$, '... (inserting nothing returns nothing)');
UPDATE buzz_private.roles SET description = 'Runs it' WHERE community_id = :'c' AND role_id = 'owner';
SELECT pg_temp.unsigned('a direct UPDATE of buzz_private.roles, unsigned: BZUNS');
SELECT results_eq('SELECT * FROM pg_temp.prepared_rows()', format($$VALUES (%L::uuid, 33534, 'owner')$$, :'c'),
                  '... prepare owes its 33534');
SELECT is(pg_temp.flush(), 1, '... published');
SELECT is((SELECT d -> 'tags' FROM buzz.role_definitions(:'c') d WHERE d #>> '{tags,1,1}' = 'owner')::text,
          pg_temp.role_tags('owner', 'Owner', 'Runs it', NULL, 0), '... the live definition says what was stored');
INSERT INTO buzz_private.roles (community_id, role_id, label) VALUES (:'c', 'direct', 'Direct');
SELECT pg_temp.unsigned('a direct INSERT into buzz_private.roles, unsigned: BZUNS');
SELECT is(pg_temp.flush(), 1, '... published: its 33534');
DELETE FROM buzz_private.roles WHERE community_id = :'c' AND role_id = 'direct';
SELECT pg_temp.unsigned('a direct DELETE from buzz_private.roles, unsigned: BZUNS');
SELECT results_eq('SELECT * FROM pg_temp.prepared_rows()',
                  format($$VALUES (%L::uuid, 5, %L)$$, :'c', '33534:' || pg_temp.relay_pubkey() || ':direct'),
                  '... prepare owes its kind 5');
SELECT is(pg_temp.flush(), 1, '... published');
-- A held role deleted by direct SQL: refused, or taken from its holders like delete_role does
SELECT is(buzz.define_role(:'c', 'held', 'Held') || buzz.assign_role(:'c', pg_temp.pk(2), 'held'), 'definedassigned',
          'a role defined and assigned');
SELECT is(pg_temp.flush(), 2, '... published');
CREATE FUNCTION pg_temp.delete_role_directly(p_community uuid, p_role text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM buzz_private.roles r WHERE r.community_id = p_community AND r.role_id = p_role;
    RETURN 'deleted';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE;
END
$$;
SELECT pg_temp.delete_role_directly(:'c', 'held') AS direct_outcome \gset
SELECT pg_temp.flush() AS n \gset
SELECT is_empty(format($$SELECT m.pubkey, r.role FROM buzz.relay_members(%L) m, unnest(m.roles) AS r (role)
                         WHERE NOT EXISTS (SELECT FROM buzz.role_definitions(%1$L) d WHERE d #>> '{tags,1,1}' = r.role)$$,
                       :'c'),
                format('a direct DELETE of a held role (%s): afterwards no member holds a role that is not defined',
                       :'direct_outcome'));
-- (Cleared, whatever happened.)
UPDATE buzz_private.relay_members SET roles = '{}' WHERE community_id = :'c';
SELECT pg_temp.flush() AS n \gset
UPDATE buzz_private.roles SET label = label WHERE community_id = :'c' AND role_id = 'nobody';
SELECT ok(NOT pg_temp.marked(), 'a statement on roles that changes no row owes nothing');
SET LOCAL session_replication_role = replica;
UPDATE buzz_private.roles SET label = 'Boss' WHERE community_id = :'c' AND role_id = 'owner';
SET LOCAL session_replication_role = origin;
SELECT pg_temp.signed('a direct UPDATE of roles with triggers off (replica): the guard is bypassed');
SET CONSTRAINTS ALL DEFERRED;

-- Direct SQL as the superuser
INSERT INTO buzz_private.relay_members (community_id, pubkey, role) VALUES (:'c', pg_temp.pk(3), 'member');
SELECT pg_temp.unsigned('a direct INSERT, unsigned: BZUNS');
SELECT results_eq('SELECT * FROM pg_temp.prepared_rows()', format($$VALUES (%1$L::uuid, 13534, NULL::text), (%1$L, 8000, %2$L)$$,
                                                          :'c', pg_temp.pk(3)),
                  '... prepare owes its list and 8000');
SELECT is(pg_temp.flush(), 2, '... published');
UPDATE buzz_private.relay_members SET role = 'admin' WHERE community_id = :'c' AND pubkey = pg_temp.pk(3);
SELECT pg_temp.unsigned('a direct UPDATE, unsigned: BZUNS');
SELECT is(pg_temp.flush(), 1, '... published: its list');
DELETE FROM buzz_private.relay_members WHERE community_id = :'c' AND pubkey = pg_temp.pk(3);
SELECT pg_temp.unsigned('a direct DELETE, unsigned: BZUNS');
SELECT is(pg_temp.flush(), 2, '... published: its list and 8001');
UPDATE buzz_private.relay_members SET pubkey = pg_temp.pk(5) WHERE community_id = :'c' AND pubkey = pg_temp.pk(0);
SELECT results_eq('SELECT * FROM pg_temp.prepared_rows()',
                  format($$VALUES (%1$L::uuid, 13534, NULL::text), (%1$L, 8000, %2$L), (%1$L, 8001, %3$L)$$,
                         :'c', pg_temp.pk(5), pg_temp.pk(0)),
                  'a direct UPDATE of a pubkey: an 8000 for the new one, an 8001 for the old');
SELECT is(pg_temp.flush(), 3, '... published');
UPDATE buzz_private.relay_members SET community_id = :'other' WHERE community_id = :'c' AND pubkey = pg_temp.pk(5);
SELECT bag_eq('SELECT * FROM pg_temp.prepared_rows()',
              format($$VALUES (%1$L::uuid, 13534, NULL::text), (%1$L, 8001, %2$L), (%3$L, 13534, NULL),
                       (%3$L, 8000, %2$L)$$,
                     :'c', pg_temp.pk(5), :'other'),
              'a member moved to another community by UPDATE: both communities owe their list');
SELECT pg_temp.unsigned('... BZUNS');
SELECT is(pg_temp.flush(), 4, '... published');
SELECT pg_temp.signed('... the guard passes');
SET CONSTRAINTS ALL DEFERRED;
DELETE FROM buzz_private.relay_members WHERE false;
UPDATE buzz_private.relay_members SET role = 'member' WHERE pubkey = repeat('0', 64);
SELECT ok(NOT pg_temp.marked(), 'statements that change no row owe no list');

-- Not kept, not seen, deleted
SAVEPOINT s;
SELECT is(buzz.add_relay_member(:'c', pg_temp.pk(6)), 'added', 'a change in a savepoint ...');
ROLLBACK TO SAVEPOINT s;
SELECT pg_temp.signed('... rolled back: the guard passes');
SET CONSTRAINTS ALL DEFERRED;
SET LOCAL session_replication_role = replica;
INSERT INTO buzz_private.relay_members (community_id, pubkey, role) VALUES (:'c', pg_temp.pk(7), 'member');
SET LOCAL session_replication_role = origin;
SELECT pg_temp.signed('a direct INSERT with triggers off (replica): the guard is bypassed');
SET CONSTRAINTS ALL DEFERRED;
SELECT community_id AS d FROM buzz.create_community('d.example.org', pg_temp.pk(0)) \gset
SELECT is(buzz.add_relay_member(:'d', pg_temp.pk(1)), 'added', 'a new community with a member, unsigned ...');
SELECT is(buzz.delete_community(:'d'), 'deleted', '... deleted in the same transaction');
SELECT pg_temp.signed('... the guard passes');
SET CONSTRAINTS ALL DEFERRED;
SELECT is(buzz.add_relay_member(:'other', pg_temp.pk(8)), 'added', 'a member added, unsigned ...');
DELETE FROM buzz_private.communities WHERE community_id = :'other';
SELECT pg_temp.signed('... the community deleted by direct SQL: the guard passes');
SET CONSTRAINTS ALL DEFERRED;

-- TRUNCATE
SET LOCAL client_min_messages = warning;
SELECT throws_ok('TRUNCATE buzz_private.relay_members', '55000', NULL, 'TRUNCATE relay_members: 55000');
SELECT throws_ok('TRUNCATE buzz_private.communities CASCADE', '55000', NULL,
                 'TRUNCATE communities CASCADE (reaching relay_members): 55000');
SELECT ok(EXISTS (SELECT FROM buzz.relay_members(:'c')), '... the members are still there');
SELECT throws_ok('TRUNCATE buzz_private.member_lists', '55000', NULL,
                 'TRUNCATE member_lists (the live lists and their newest created_at): 55000');
SELECT throws_ok('TRUNCATE buzz_private.member_list_pieces', '55000', NULL,
                 'TRUNCATE member_list_pieces: 55000');
SELECT throws_ok('TRUNCATE buzz_private.roles', '55000', NULL,
                 'TRUNCATE roles (definitions changed without their events): 55000');
SELECT throws_ok('TRUNCATE buzz_private.role_events', '55000', NULL,
                 'TRUNCATE role_events (the live role events and their newest created_at): 55000');
SELECT ok(EXISTS (SELECT FROM buzz.role_definitions(:'c')), '... the definitions are still there');
RESET client_min_messages;

-- A change after prepare
SELECT is(buzz.add_relay_member(:'c', pg_temp.pk(9)), 'added', 'a member added ...');
SELECT pg_temp.prepared_ids() AS ids \gset
SELECT is(buzz.add_relay_member(:'c', pg_temp.pk(10)), 'added', '... prepared, then another change');
SELECT throws_ok(format('SELECT * FROM buzz.insert_signed_events(%L, %L)', :'ids', pg_temp.sigs(2)),
                 'BZSTL', NULL, '... the signatures of the first prepare: BZSTL');
SELECT pg_temp.unsigned('... still unsigned: BZUNS');
SELECT is(pg_temp.flush(), 3, '... prepare again and publish: the list and both 8000');
SELECT pg_temp.signed('... the guard passes');

SELECT * FROM finish();
ROLLBACK;
