-- buzz.backfill_from_allowlist(p_community uuid) -> integer
-- Copies the allowlist into members (role member) only while the owner is the one member;
-- the count, the members, the events (one list, an 8000 each) and the live list after it; 0
-- owes nothing; banned pubkeys skipped; errors (BZNCM, BZARC) and who may call it. BZISO is
-- covered by pytest: this suite runs in one READ COMMITTED transaction, whose isolation level
-- can no longer change once the fixtures have run.
BEGIN;
\ir lib/fixtures.sql

SELECT plan(44);

SELECT function_returns('buzz', 'backfill_from_allowlist', ARRAY['uuid'],
                        'integer', 'backfill_from_allowlist returns integer');

SELECT pg_temp.community() AS c \gset
SELECT pg_temp.community('archived.example.org') AS archived \gset
SELECT buzz.allowlist_add(:'archived', pg_temp.pk(1)) AS setup_1 \gset
SELECT buzz.archive_community(:'archived') AS archive_outcome \gset

-- nothing to copy
SELECT is(buzz.backfill_from_allowlist(:'c'), 0, 'an empty allowlist adds nobody');
SELECT ok(NOT pg_temp.marked(), '... and owes no list');

-- the owner is the one member: the allowlist is copied
SELECT buzz.allowlist_add(:'c', pg_temp.pk(1)) AS setup_2 \gset
SELECT buzz.allowlist_add(:'c', upper(pg_temp.pk(2)), 'note') AS setup_3 \gset
SELECT buzz.allowlist_add(:'c', pg_temp.pk(0)) AS setup_4 \gset
SELECT is(buzz.backfill_from_allowlist(:'c'), 2,
          'with the owner its one member, the two other allowlisted pubkeys are added');
SELECT pg_temp.members_are(:'c',
    $$VALUES (pg_temp.pk(0), 'owner'), (pg_temp.pk(1), 'member'), (pg_temp.pk(2), 'member')$$,
    '... as members; the allowlisted owner stays owner');
SELECT set_eq(format('SELECT m.pubkey, m.added_by FROM buzz.relay_members(%L) m WHERE m.role = %L',
                     :'c', 'member'),
              $$VALUES (pg_temp.pk(1), 'allowlist'), (pg_temp.pk(2), 'allowlist')$$,
              '... added_by allowlist');
SELECT ok(pg_temp.marked(), '... and the community owes a new list');
SELECT pg_temp.events_are(
    $$VALUES (13534, NULL::text), (8000, pg_temp.pk(1)), (8000, pg_temp.pk(2))$$,
    '... one list for the whole backfill and an 8000 for each new member');
SELECT is(pg_temp.flush(), 3, 'publishing writes those three events');
SELECT pg_temp.list_is_members(:'c', 'the live list names exactly the members');
SELECT ok(NOT pg_temp.marked(), 'nothing is owed once published');

-- other members: no backfill
SELECT buzz.allowlist_add(:'c', pg_temp.pk(3)) AS setup_5 \gset
SELECT is(buzz.backfill_from_allowlist(:'c'), 0,
          'once there are other members, a backfill adds nobody, even newly allowlisted');
SELECT pg_temp.members_are(:'c',
    $$VALUES (pg_temp.pk(0), 'owner'), (pg_temp.pk(1), 'member'), (pg_temp.pk(2), 'member')$$,
    '... the members are unchanged');
SELECT ok(NOT pg_temp.marked(), '... and no list is owed');

SELECT pg_temp.community('admin.example.org') AS with_admin \gset
SELECT buzz.add_relay_member(:'with_admin', pg_temp.pk(4), 'admin') AS setup_6 \gset
SELECT buzz.allowlist_add(:'with_admin', pg_temp.pk(5)) AS setup_7 \gset
SELECT pg_temp.flush() AS setup_published \gset
SELECT is(buzz.backfill_from_allowlist(:'with_admin'), 0,
          'an admin besides the owner is another member: a backfill adds nobody');
SELECT pg_temp.members_are(:'with_admin', $$VALUES (pg_temp.pk(0), 'owner'), (pg_temp.pk(4), 'admin')$$,
                           '... the members are unchanged');
SELECT ok(NOT pg_temp.marked(), '... and no list is owed');

-- the allowlisted owner alone adds nobody
SELECT pg_temp.community('owner-only.example.org') AS owner_only \gset
SELECT buzz.allowlist_add(:'owner_only', pg_temp.pk(0)) AS setup_8 \gset
SELECT is(buzz.backfill_from_allowlist(:'owner_only'), 0,
          'an allowlist naming only the owner adds nobody');
SELECT ok(NOT pg_temp.marked(), '... and owes no list');

-- a community left without any member (by direct SQL): the header says it is backfilled
SELECT pg_temp.community('empty.example.org') AS empty \gset
DELETE FROM buzz_private.relay_members m WHERE m.community_id = :'empty';
SELECT pg_temp.flush() AS setup_published \gset
SELECT buzz.allowlist_add(:'empty', pg_temp.pk(6)) AS setup_9 \gset
SELECT is(buzz.backfill_from_allowlist(:'empty'), 1,
          'a community without any member is backfilled too');
SELECT pg_temp.members_are(:'empty', $$VALUES (pg_temp.pk(6), 'member')$$, '... as member');
SELECT pg_temp.events_are($$VALUES (13534, NULL::text), (8000, pg_temp.pk(6))$$,
                          '... one list and an 8000');
SELECT is(pg_temp.flush(), 2, '... published');
SELECT pg_temp.list_is_members(:'empty', '... the live list names it');

-- banned pubkeys are skipped
SELECT pg_temp.community('banned.example.org') AS banned \gset
SELECT buzz.allowlist_add(:'banned', pg_temp.pk(9)) AS setup_12 \gset
SELECT buzz.allowlist_add(:'banned', pg_temp.pk(10)) AS setup_13 \gset
SELECT is(buzz.ban_pubkey(:'banned', pg_temp.pk(9), 'spam'), 'banned', 'an allowlisted pubkey banned');
SELECT is(buzz.backfill_from_allowlist(:'banned'), 1, 'the backfill adds the other one');
SELECT pg_temp.members_are(:'banned', $$VALUES (pg_temp.pk(0), 'owner'), (pg_temp.pk(10), 'member')$$,
                           '... the banned pubkey did not join');
SELECT is((SELECT count(*) FROM buzz.banned_pubkeys(:'banned') b WHERE b.pubkey = pg_temp.pk(9)), 1::bigint,
          '... and is still banned');
SELECT pg_temp.events_are($$VALUES (13534, NULL::text), (8000, pg_temp.pk(10))$$,
                          '... one list and an 8000 for the other only');
SELECT is(pg_temp.flush(), 2, '... published');
SELECT pg_temp.community('all-banned.example.org') AS all_banned \gset
SELECT buzz.allowlist_add(:'all_banned', pg_temp.pk(9)) AS setup_14 \gset
SELECT is(buzz.ban_pubkey(:'all_banned', pg_temp.pk(9)), 'banned', 'an allowlist whose one pubkey is banned');
SELECT is(buzz.backfill_from_allowlist(:'all_banned'), 0, '... backfills nobody');
SELECT ok(NOT pg_temp.marked(), '... and owes no list');

-- errors
SELECT throws_ok('SELECT buzz.backfill_from_allowlist(NULL)',
                 'BZNCM', NULL, 'a NULL community raises BZNCM');
SELECT throws_ok(format('SELECT buzz.backfill_from_allowlist(%L)', gen_random_uuid()),
                 'BZNCM', NULL, 'an unknown community raises BZNCM');
SELECT throws_ok(format('SELECT buzz.backfill_from_allowlist(%L)', :'archived'),
                 'BZARC', NULL, 'backfilling an archived community raises BZARC');
SELECT pg_temp.members_are(:'archived', $$VALUES (pg_temp.pk(0), 'owner')$$,
                           '... its allowlisted pubkey did not join');
SELECT ok(NOT pg_temp.marked(), 'the failed calls owe no list');

-- BZISO: the guard is in the body (the error itself is tested by pytest, see the header)
SELECT ok(pg_get_functiondef('buzz.backfill_from_allowlist(uuid)'::regprocedure)
          ~ 'PERFORM buzz_private\.require_read_committed\(\)',
          'backfill_from_allowlist calls buzz_private.require_read_committed (BZISO)');

-- privileges
SELECT pg_temp.community('writer.example.org') AS w \gset
SELECT buzz.allowlist_add(:'w', pg_temp.pk(7)) AS setup_10 \gset
SELECT pg_temp.community('refused.example.org') AS r \gset
SELECT buzz.allowlist_add(:'r', pg_temp.pk(8)) AS setup_11 \gset
SET LOCAL ROLE buzz_writer;
SELECT is(buzz.backfill_from_allowlist(:'w'), 1, 'buzz_writer may backfill');
SELECT is(pg_temp.flush(), 2, '... and publish its list');
RESET ROLE;
SET LOCAL ROLE buzz_reader;
SELECT throws_ok(format('SELECT buzz.backfill_from_allowlist(%L)', :'r'),
                 '42501', NULL, 'buzz_reader may not backfill');
RESET ROLE;
CREATE ROLE buzz_pgtap_nobody_backfill_from_allowlist NOLOGIN;
-- Only the schema: the refusal must come from EXECUTE not being granted to PUBLIC.
GRANT USAGE ON SCHEMA buzz TO buzz_pgtap_nobody_backfill_from_allowlist;
SET LOCAL ROLE buzz_pgtap_nobody_backfill_from_allowlist;
SELECT throws_ok(format('SELECT buzz.backfill_from_allowlist(%L)', :'r'),
                 '42501', NULL, 'a role without grants may not backfill');
RESET ROLE;
SELECT pg_temp.members_are(:'r', $$VALUES (pg_temp.pk(0), 'owner')$$,
                           'in the end the refused backfills added nobody');

SELECT * FROM finish();
ROLLBACK;
