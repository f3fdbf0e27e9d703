-- buzz.add_relay_members(p_community uuid, p_pubkeys text[], p_role text DEFAULT 'member',
--                        p_added_by text DEFAULT NULL) -> integer
-- The batch add: rows added, skipped members and repeats, one list for the batch, the members
-- and the live list after each call, banned pubkeys skipped (the ban kept), argument errors
-- (BZIPK by position, 54000, BZIRL, 22023, BZNCM, BZARC) and who may call it. BZISO is covered
-- by pytest: this suite runs in one READ COMMITTED transaction, whose isolation level can no
-- longer change once the fixtures ran.
BEGIN;
\ir lib/fixtures.sql

SELECT plan(51);

SELECT function_returns('buzz', 'add_relay_members', ARRAY['uuid', 'text[]', 'text', 'text'],
                        'integer', 'add_relay_members returns integer');

SELECT pg_temp.community() AS c \gset
SELECT pg_temp.community('archived.example.org') AS archived \gset
SELECT buzz.archive_community(:'archived') AS archive_outcome \gset

-- a batch with repeats, in both cases
SELECT is(buzz.add_relay_members(:'c', ARRAY[pg_temp.pk(1), upper(pg_temp.pk(2)), pg_temp.pk(3),
                                              pg_temp.pk(1), pg_temp.pk(2)]),
          3, 'a batch of five with two repeats (one in another case) adds three');
SELECT pg_temp.members_are(:'c',
    $$VALUES (pg_temp.pk(0), 'owner'), (pg_temp.pk(1), 'member'), (pg_temp.pk(2), 'member'),
             (pg_temp.pk(3), 'member')$$,
    '... as members, lowercased, each once');
SELECT ok(pg_temp.marked(), '... and the community owes a new list');
SELECT pg_temp.events_are(
    $$VALUES (13534, NULL::text), (8000, pg_temp.pk(1)), (8000, pg_temp.pk(2)),
             (8000, pg_temp.pk(3))$$,
    '... one list for the whole batch and an 8000 for each new member');
SELECT is(pg_temp.flush(), 4, 'publishing writes those four events');
SELECT pg_temp.list_is_members(:'c', 'the live list names exactly the members');
SELECT ok(NOT pg_temp.marked(), 'nothing is owed once published');

-- role and added_by apply to the whole batch
SELECT is(buzz.add_relay_members(:'c', ARRAY[pg_temp.pk(4), pg_temp.pk(5)], 'admin',
                                 upper(pg_temp.pk(0))),
          2, 'a batch of admins is added');
SELECT set_eq(
    format($$SELECT m.pubkey, m.role, m.added_by FROM buzz.relay_members(%L) m
             WHERE m.pubkey IN (pg_temp.pk(4), pg_temp.pk(5))$$, :'c'),
    $$VALUES (pg_temp.pk(4), 'admin', pg_temp.pk(0)), (pg_temp.pk(5), 'admin', pg_temp.pk(0))$$,
    '... each with role admin and the lowercased added_by pubkey');
SELECT pg_temp.events_are(
    $$VALUES (13534, NULL::text), (8000, pg_temp.pk(4)), (8000, pg_temp.pk(5))$$,
    '... one list and two 8000');
SELECT is(pg_temp.flush(), 3, '... published');

-- members already there are skipped, their roles untouched
SELECT is(buzz.add_relay_members(:'c', ARRAY[pg_temp.pk(4), pg_temp.pk(6), pg_temp.pk(0)],
                                 'member', 'import'),
          1, 'a batch with an admin, the owner and one newcomer adds one');
SELECT pg_temp.members_are(:'c',
    $$VALUES (pg_temp.pk(0), 'owner'), (pg_temp.pk(1), 'member'), (pg_temp.pk(2), 'member'),
             (pg_temp.pk(3), 'member'), (pg_temp.pk(4), 'admin'), (pg_temp.pk(5), 'admin'),
             (pg_temp.pk(6), 'member')$$,
    '... the admin and the owner keep their roles');
SELECT is((SELECT m.added_by FROM buzz.relay_members(:'c') m WHERE m.pubkey = pg_temp.pk(6)),
          'import', '... the newcomer has the label as added_by');
SELECT pg_temp.events_are($$VALUES (13534, NULL::text), (8000, pg_temp.pk(6))$$,
                          '... one list and an 8000 for the newcomer only');
SELECT is(pg_temp.flush(), 2, '... published');
SELECT pg_temp.list_is_members(:'c', '... the live list names exactly the members');

-- no change
SELECT is(buzz.add_relay_members(:'c', ARRAY[pg_temp.pk(1), upper(pg_temp.pk(4))]), 0,
          'a batch of members only adds none');
SELECT is(buzz.add_relay_members(:'c', '{}'::text[]), 0, 'an empty batch adds none');
SELECT ok(NOT pg_temp.marked(), '... and neither owes a list');

-- banned pubkeys are skipped: a batch is no explicit add of each
SELECT is(buzz.ban_pubkey(:'c', pg_temp.pk(10), 'spam'), 'banned', 'a stranger banned');
SELECT is(buzz.add_relay_members(:'c', ARRAY[upper(pg_temp.pk(10)), pg_temp.pk(11)]), 1,
          'a batch naming the banned pubkey (in uppercase) and a newcomer adds one');
SELECT ok(NOT EXISTS (SELECT FROM buzz.relay_members(:'c') m WHERE m.pubkey = pg_temp.pk(10)),
          '... the banned pubkey did not join');
SELECT results_eq(format('SELECT b.pubkey, b.reason FROM buzz.banned_pubkeys(%L) b', :'c'),
                  format($$VALUES (%L, 'spam')$$, pg_temp.pk(10)), '... and is still banned');
SELECT pg_temp.events_are($$VALUES (13534, NULL::text), (8000, pg_temp.pk(11))$$,
                          '... one list and an 8000 for the newcomer only');
SELECT is(pg_temp.flush(), 2, '... published');
SELECT is(buzz.add_relay_members(:'c', ARRAY[pg_temp.pk(10)]), 0, 'a batch of the banned pubkey alone adds none');
SELECT ok(NOT pg_temp.marked(), '... and owes no list');

-- argument errors
SELECT throws_ok(format('SELECT buzz.add_relay_members(%L, NULL)', :'c'),
                 'BZIPK', NULL, 'a NULL array raises BZIPK');
SELECT throws_ok(format('SELECT buzz.add_relay_members(%L, ARRAY[%L, %L])',
                        :'c', pg_temp.pk(7), 'nope'),
                 'BZIPK', NULL, 'a malformed element raises BZIPK');
SELECT throws_like(format('SELECT buzz.add_relay_members(%L, ARRAY[%L, %L, %L])',
                          :'c', pg_temp.pk(7), pg_temp.pk(8), left(pg_temp.pk(9), 63)),
                   '%p_pubkeys[3]%', '... named by its position');
SELECT throws_ok(format('SELECT buzz.add_relay_members(%L, ARRAY[%L, NULL])', :'c', pg_temp.pk(7)),
                 'BZIPK', NULL, 'a NULL element raises BZIPK');
SELECT throws_ok(format('SELECT buzz.add_relay_members(%L, ARRAY[ARRAY[%L, %L]])',
                        :'c', pg_temp.pk(7), pg_temp.pk(8)),
                 'BZIPK', NULL, 'a two-dimensional array raises BZIPK');
SELECT throws_ok(format('SELECT buzz.add_relay_members(%L, array_fill(%L::text, ARRAY[100001]))',
                        :'c', pg_temp.pk(7)),
                 '54000', NULL, 'more than 100000 elements raise 54000');
SELECT throws_ok(format('SELECT buzz.add_relay_members(%L, ARRAY[%L], %L)', :'c', pg_temp.pk(7), 'owner'),
                 'BZIRL', NULL, 'role owner raises BZIRL');
SELECT throws_ok(format('SELECT buzz.add_relay_members(%L, ARRAY[%L], %L)', :'c', pg_temp.pk(7), 'guest'),
                 'BZIRL', NULL, 'an unknown role raises BZIRL');
SELECT throws_ok(format('SELECT buzz.add_relay_members(%L, ARRAY[%L], NULL)', :'c', pg_temp.pk(7)),
                 'BZIRL', NULL, 'a NULL role raises BZIRL');
SELECT throws_ok(format('SELECT buzz.add_relay_members(%L, ARRAY[%L], %L)', :'c', pg_temp.pk(1), 'guest'),
                 'BZIRL', NULL, '... also when every element is a member already');
SELECT throws_ok(format('SELECT buzz.add_relay_members(%L, ARRAY[%L], %L, %L)',
                        :'c', pg_temp.pk(7), 'member', repeat('x', 65)),
                 '22023', NULL, 'a p_added_by label of 65 characters raises 22023');
SELECT throws_ok(format('SELECT buzz.add_relay_members(NULL, ARRAY[%L])', pg_temp.pk(7)),
                 'BZNCM', NULL, 'a NULL community raises BZNCM');
SELECT throws_ok(format('SELECT buzz.add_relay_members(%L, ARRAY[%L])', gen_random_uuid(), pg_temp.pk(7)),
                 'BZNCM', NULL, 'an unknown community raises BZNCM');
SELECT throws_ok(format('SELECT buzz.add_relay_members(%L, ARRAY[%L])', :'archived', pg_temp.pk(7)),
                 'BZARC', NULL, 'adding to an archived community raises BZARC');
SELECT throws_ok(format('SELECT buzz.add_relay_members(%L, ARRAY[%L])', :'archived', pg_temp.pk(0)),
                 'BZARC', NULL, '... even when the batch would add nobody');
SELECT ok(NOT EXISTS (SELECT FROM buzz_private.relay_members m
                      WHERE m.pubkey IN (pg_temp.pk(7), pg_temp.pk(8)))
          AND NOT pg_temp.marked(),
          'the failed batches added nobody, not even their good elements, and owe no list');

-- BZISO: the guard is in the body (the error itself is tested by pytest, see the header)
SELECT ok(pg_get_functiondef('buzz.add_relay_members(uuid, text[], text, text)'::regprocedure)
          ~ 'PERFORM buzz_private\.require_read_committed\(\)',
          'add_relay_members calls buzz_private.require_read_committed (BZISO)');

-- privileges
SET LOCAL ROLE buzz_writer;
SELECT is(buzz.add_relay_members(:'c', ARRAY[pg_temp.pk(7), pg_temp.pk(8)]), 2,
          'buzz_writer may add members');
SELECT is(pg_temp.flush(), 3, '... and publish their list');
RESET ROLE;
SET LOCAL ROLE buzz_reader;
SELECT throws_ok(format('SELECT buzz.add_relay_members(%L, ARRAY[%L])', :'c', pg_temp.pk(9)),
                 '42501', NULL, 'buzz_reader may not add members');
RESET ROLE;
CREATE ROLE buzz_pgtap_nobody_add_relay_members NOLOGIN;
-- Only the schema: the refusal must come from EXECUTE not being granted to PUBLIC.
GRANT USAGE ON SCHEMA buzz TO buzz_pgtap_nobody_add_relay_members;
SET LOCAL ROLE buzz_pgtap_nobody_add_relay_members;
SELECT throws_ok(format('SELECT buzz.add_relay_members(%L, ARRAY[%L])', :'c', pg_temp.pk(9)),
                 '42501', NULL, 'a role without grants may not add members');
RESET ROLE;

SELECT pg_temp.list_is_members(:'c', 'in the end the live list names exactly the members');

SELECT * FROM finish();
ROLLBACK;
