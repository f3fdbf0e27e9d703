-- buzz.archive_community(p_community uuid) -> text
-- Outcomes archived / unchanged, BZARC for every membership write on an archived community
-- (and for a change made before the archive, at prepare), what still works there (reads,
-- republish, revoke), no list owed for archiving, BZNCM, and who may call it.
BEGIN;
\ir lib/fixtures.sql

CREATE FUNCTION pg_temp.arc(p_sql text, p_description text) RETURNS text LANGUAGE sql
RETURN throws_ok(p_sql, 'BZARC', NULL, p_description);

SELECT plan(41);

SELECT pg_temp.community() AS c \gset
SELECT pg_temp.community('other.example.org') AS other \gset
SELECT is(buzz.add_relay_member(:'c', pg_temp.pk(1), 'admin'), 'added', 'an admin added');
SELECT is(buzz.allowlist_add(:'c', pg_temp.pk(5)), 'added', 'a pubkey allowlisted');
SELECT invite_id AS inv, code FROM buzz.create_relay_invite(:'c', pg_temp.pk(0), 5) \gset
SELECT is(pg_temp.flush(), 2, '... published');
SELECT buzz.member_list(:'c') AS list \gset

SELECT is(buzz.archive_community(:'c'), 'archived', 'archive: archived');
SELECT ok((SELECT c.archived_at IS NOT NULL FROM buzz_private.communities c WHERE c.community_id = :'c'),
          '... the community is marked archived');
SELECT is(buzz.archive_community(:'c'), 'unchanged', 'archived again: unchanged');
SELECT ok(NOT pg_temp.marked(), 'archiving is not a membership write: no list owed');
SELECT is(pg_temp.guard(), NULL, '... the commit guard passes');
SELECT is(buzz.member_list(:'c')::text, :'list', 'the live list stays, the same bytes');

-- Every membership write raises BZARC
SELECT pg_temp.arc(format('SELECT buzz.add_relay_member(%L, %L)', :'c', pg_temp.pk(2)), 'add_relay_member: BZARC');
SELECT pg_temp.arc(format('SELECT buzz.add_relay_members(%L, %L)', :'c', ARRAY[pg_temp.pk(2)]),
                   'add_relay_members: BZARC');
SELECT pg_temp.arc(format('SELECT buzz.claim_relay_membership(%L, %L)', :'c', pg_temp.pk(2)),
                   'claim_relay_membership: BZARC');
SELECT pg_temp.arc(format('SELECT * FROM buzz.claim_relay_invite(%L, %L, %L)', :'c', :'code', pg_temp.pk(2)),
                   'claim_relay_invite: BZARC');
SELECT pg_temp.arc(format('SELECT * FROM buzz.create_relay_invite(%L, %L)', :'c', pg_temp.pk(0)),
                   'create_relay_invite: BZARC');
SELECT pg_temp.arc(format('SELECT buzz.remove_relay_member(%L, %L)', :'c', pg_temp.pk(1)),
                   'remove_relay_member: BZARC');
SELECT pg_temp.arc(format('SELECT buzz.remove_relay_member_if_role(%L, %L, %L)', :'c', pg_temp.pk(1), 'admin'),
                   'remove_relay_member_if_role: BZARC');
SELECT pg_temp.arc(format('SELECT buzz.update_relay_member_role(%L, %L, %L)', :'c', pg_temp.pk(1), 'member'),
                   'update_relay_member_role: BZARC');
SELECT pg_temp.arc(format('SELECT buzz.bootstrap_owner(%L, %L)', :'c', pg_temp.pk(1)),
                   'bootstrap_owner: BZARC');
SELECT pg_temp.arc(format('SELECT buzz.transfer_ownership(%L, %L)', :'c', pg_temp.pk(1)),
                   'transfer_ownership: BZARC');
SELECT pg_temp.arc(format('SELECT buzz.backfill_from_allowlist(%L)', :'c'),
                   'backfill_from_allowlist: BZARC');
SELECT pg_temp.arc(format($$SELECT buzz.define_role(%L, 'mod', 'Moderator')$$, :'c'), 'define_role: BZARC');
SELECT pg_temp.arc(format($$SELECT buzz.delete_role(%L, 'mod')$$, :'c'), 'delete_role: BZARC');
SELECT pg_temp.arc(format($$SELECT buzz.assign_role(%L, %L, 'mod')$$, :'c', pg_temp.pk(1)), 'assign_role: BZARC');
SELECT pg_temp.arc(format($$SELECT buzz.unassign_role(%L, %L, 'mod')$$, :'c', pg_temp.pk(1)), 'unassign_role: BZARC');
SELECT is((SELECT count(*)::integer FROM buzz.role_definitions(:'c')), 3, '... the role definitions are unchanged');
SELECT pg_temp.arc(format('SELECT buzz.allowlist_add(%L, %L)', :'c', pg_temp.pk(6)),
                   'allowlist_add: BZARC');
SELECT results_eq(format('SELECT m.pubkey, m.role FROM buzz.relay_members(%L) m', :'c'),
                  format('SELECT * FROM pg_temp.listed(%L)', :'c'),
                  '... the members are unchanged and still listed');
SELECT ok(NOT pg_temp.marked(), '... and no list is owed');

-- What still works: republish, revoke
SELECT is(buzz.republish_member_list(:'c')::text, '', 'republish works on an archived community');
SELECT is(pg_temp.flush(), 4, '... and publishes its list and re-signs its three role definitions');
SELECT is(buzz.revoke_relay_invite(:'c', :'inv'), 'revoked', 'revoking an invite works too');

-- A change made before the archive, in the same transaction: refused at prepare
SELECT is(buzz.unarchive_community(:'c'), 'unarchived', 'unarchived');
SELECT is(buzz.add_relay_member(:'c', pg_temp.pk(3)), 'added', '... a member added');
SELECT is(buzz.archive_community(:'c'), 'archived', '... archived before its list is written');
SELECT throws_ok($$SELECT * FROM buzz.prepare_membership_events(pg_temp.relay_pubkey())$$, 'BZARC', NULL,
                 '... prepare raises BZARC');
SELECT is(buzz.unarchive_community(:'c'), 'unarchived', 'unarchived again');
SELECT is(pg_temp.flush(), 2, '... the change publishes');

-- Unknown community, privileges
SELECT throws_ok(format('SELECT buzz.archive_community(%L)', gen_random_uuid()), 'BZNCM', NULL,
                 'an unknown community: BZNCM');
SELECT throws_ok('SELECT buzz.archive_community(NULL)', 'BZNCM', NULL, 'a NULL community: BZNCM');
SET LOCAL ROLE buzz_reader;
SELECT throws_ok(format('SELECT buzz.archive_community(%L)', :'other'), '42501', NULL,
                 'buzz_reader may not archive');
SET LOCAL ROLE buzz_writer;
SELECT is(buzz.archive_community(:'other'), 'archived', 'buzz_writer may');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
