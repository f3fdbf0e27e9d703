-- buzz.add_relay_member(p_community uuid, p_pubkey text, p_role text DEFAULT 'member',
--                       p_added_by text DEFAULT NULL) -> text
-- Outcomes added / already_member, the members and the live list after each, the events a
-- change owes, argument errors (BZIPK, BZIRL, 22023, BZNCM, BZARC) and who may call it.
-- BZISO is covered by pytest: this suite runs in one READ COMMITTED transaction, whose
-- isolation level can no longer change once the fixtures have run.
BEGIN;
\ir lib/fixtures.sql

SELECT plan(55);

SELECT function_returns('buzz', 'add_relay_member', ARRAY['uuid', 'text', 'text', 'text'],
                        'text', 'add_relay_member returns text');

SELECT pg_temp.community() AS c \gset
SELECT pg_temp.community('archived.example.org') AS archived \gset
SELECT buzz.archive_community(:'archived') AS archive_outcome \gset

-- added, with the defaults
SELECT is(buzz.add_relay_member(:'c', pg_temp.pk(1)), 'added', 'a new pubkey is added');
SELECT pg_temp.members_are(:'c', $$VALUES (pg_temp.pk(0), 'owner'), (pg_temp.pk(1), 'member')$$,
                           '... as member by default, next to the owner');
SELECT is((SELECT m.added_by FROM buzz.relay_members(:'c') m WHERE m.pubkey = pg_temp.pk(1)),
          NULL, '... with no added_by by default');
SELECT ok(pg_temp.marked(), '... and the community owes a new list');
SELECT pg_temp.events_are($$VALUES (13534, NULL::text), (8000, pg_temp.pk(1))$$,
                          '... prepared as one list and one 8000 for the new member');
SELECT is((SELECT array_agg(DISTINCT p.community_id) FROM pg_temp.prepared() p),
          ARRAY[:'c'::uuid], '... all for this community');
SELECT is(pg_temp.flush(), 2, 'publishing writes those two events');
SELECT pg_temp.list_is_members(:'c', 'the live list names exactly the members');
SELECT ok(NOT pg_temp.marked(), 'nothing is owed once published');

-- added as admin, by a label
SELECT is(buzz.add_relay_member(:'c', pg_temp.pk(2), 'admin', 'invite'), 'added',
          'an admin is added');
SELECT results_eq(
    format($$SELECT m.role, m.added_by FROM buzz.relay_members(%L) m
             WHERE m.pubkey = pg_temp.pk(2)$$, :'c'),
    $$VALUES ('admin', 'invite')$$, '... with role admin and added_by the label');
SELECT pg_temp.events_are($$VALUES (13534, NULL::text), (8000, pg_temp.pk(2))$$,
                          '... one list and one 8000');
SELECT is(pg_temp.flush(), 2, '... published');
SELECT pg_temp.list_is_members(:'c', '... the live list names the admin with its role');

-- uppercase input is lowercased, the pubkey and an added_by pubkey alike
SELECT is(buzz.add_relay_member(:'c', upper(pg_temp.pk(3)), 'member', upper(pg_temp.pk(0))),
          'added', 'an uppercase pubkey is accepted');
SELECT results_eq(
    format($$SELECT m.pubkey, m.added_by FROM buzz.relay_members(%L) m
             WHERE m.pubkey = pg_temp.pk(3)$$, :'c'),
    $$VALUES (pg_temp.pk(3), pg_temp.pk(0))$$,
    '... stored lowercased, and so is an added_by pubkey');
SELECT pg_temp.events_are($$VALUES (13534, NULL::text), (8000, pg_temp.pk(3))$$,
                          '... its 8000 names the lowercased pubkey');
SELECT is(pg_temp.flush(), 2, '... published');

-- the longest label
SELECT is(buzz.add_relay_member(:'c', pg_temp.pk(4), 'member', repeat('x', 64)), 'added',
          'p_added_by may be a label of 64 characters');

-- two adds in one transaction: one list
SELECT is(buzz.add_relay_member(:'c', pg_temp.pk(5)), 'added', 'another member is added');
SELECT pg_temp.events_are(
    $$VALUES (13534, NULL::text), (8000, pg_temp.pk(4)), (8000, pg_temp.pk(5))$$,
    'two adds before one prepare: one list and an 8000 for each');
SELECT is(pg_temp.flush(), 3, '... published');
SELECT pg_temp.list_is_members(:'c', '... the live list names both');

-- already_member: no change at all
SELECT is(buzz.add_relay_member(:'c', pg_temp.pk(2), 'member', 'someone'), 'already_member',
          'adding an admin again as member answers already_member');
SELECT results_eq(
    format($$SELECT m.role, m.added_by FROM buzz.relay_members(%L) m
             WHERE m.pubkey = pg_temp.pk(2)$$, :'c'),
    $$VALUES ('admin', 'invite')$$, '... its role and added_by are left as they were');
SELECT is(buzz.add_relay_member(:'c', upper(pg_temp.pk(1)), 'admin'), 'already_member',
          'an uppercase spelling of a member answers already_member');
SELECT is(buzz.add_relay_member(:'c', pg_temp.pk(0), 'admin'), 'already_member',
          'the owner answers already_member');
SELECT pg_temp.members_are(:'c',
    $$VALUES (pg_temp.pk(0), 'owner'), (pg_temp.pk(1), 'member'), (pg_temp.pk(2), 'admin'),
             (pg_temp.pk(3), 'member'), (pg_temp.pk(4), 'member'), (pg_temp.pk(5), 'member')$$,
    '... no member or role changed');
SELECT ok(NOT pg_temp.marked(), 'already_member owes no list');

-- argument errors, also where the call would otherwise answer already_member
SELECT throws_ok(format('SELECT buzz.add_relay_member(%L, NULL)', :'c'),
                 'BZIPK', NULL, 'a NULL pubkey raises BZIPK');
SELECT throws_ok(format('SELECT buzz.add_relay_member(%L, %L)', :'c', left(pg_temp.pk(6), 63)),
                 'BZIPK', NULL, 'a pubkey of 63 hex characters raises BZIPK');
SELECT throws_ok(format('SELECT buzz.add_relay_member(%L, %L)', :'c', pg_temp.pk(6) || 'a'),
                 'BZIPK', NULL, 'a pubkey of 65 hex characters raises BZIPK');
SELECT throws_ok(format('SELECT buzz.add_relay_member(%L, %L)', :'c', repeat('g', 64)),
                 'BZIPK', NULL, 'a pubkey with non-hex characters raises BZIPK');
SELECT throws_ok(format('SELECT buzz.add_relay_member(%L, %L)', :'c', ' ' || left(pg_temp.pk(6), 63)),
                 'BZIPK', NULL, 'a pubkey with a space raises BZIPK');
SELECT throws_ok(format('SELECT buzz.add_relay_member(%L, %L)', :'c',
                        'npub1' || repeat('q', 58)),
                 'BZIPK', NULL, 'an npub raises BZIPK');
SELECT throws_ok(format('SELECT buzz.add_relay_member(%L, %L, %L)', :'c', pg_temp.pk(6), 'owner'),
                 'BZIRL', NULL, 'role owner raises BZIRL (bootstrap_owner makes owners)');
SELECT throws_ok(format('SELECT buzz.add_relay_member(%L, %L, %L)', :'c', pg_temp.pk(6), 'guest'),
                 'BZIRL', NULL, 'an unknown role raises BZIRL');
SELECT throws_ok(format('SELECT buzz.add_relay_member(%L, %L, NULL)', :'c', pg_temp.pk(6)),
                 'BZIRL', NULL, 'a NULL role raises BZIRL');
SELECT throws_ok(format('SELECT buzz.add_relay_member(%L, %L, %L)', :'c', pg_temp.pk(1), 'guest'),
                 'BZIRL', NULL, 'an unknown role raises BZIRL even for a member (before already_member)');
SELECT throws_ok(format('SELECT buzz.add_relay_member(%L, %L, %L, %L)',
                        :'c', pg_temp.pk(6), 'member', repeat('x', 65)),
                 '22023', NULL, 'a p_added_by label of 65 characters raises 22023');
SELECT throws_ok(format('SELECT buzz.add_relay_member(%L, %L, %L, %L)',
                        :'c', pg_temp.pk(6), 'member', ''),
                 '22023', NULL, 'an empty p_added_by raises 22023');
SELECT throws_ok(format('SELECT buzz.add_relay_member(%L, %L, %L, %L)',
                        :'c', pg_temp.pk(6), 'member', E'a\nb'),
                 '22023', NULL, 'a p_added_by with a control character raises 22023');
SELECT throws_ok(format('SELECT buzz.add_relay_member(%L, %L, %L, %L)',
                        :'c', pg_temp.pk(1), 'member', repeat('x', 65)),
                 '22023', NULL, 'a bad p_added_by raises 22023 even for a member');
SELECT throws_ok(format('SELECT buzz.add_relay_member(NULL, %L)', pg_temp.pk(6)),
                 'BZNCM', NULL, 'a NULL community raises BZNCM');
SELECT throws_ok(format('SELECT buzz.add_relay_member(%L, %L)', gen_random_uuid(), pg_temp.pk(6)),
                 'BZNCM', NULL, 'an unknown community raises BZNCM');
SELECT throws_ok(format('SELECT buzz.add_relay_member(%L, %L)', :'archived', pg_temp.pk(6)),
                 'BZARC', NULL, 'adding to an archived community raises BZARC');
SELECT throws_ok(format('SELECT buzz.add_relay_member(%L, %L)', :'archived', pg_temp.pk(0)),
                 'BZARC', NULL, '... even for its member (before already_member)');
SELECT ok(NOT EXISTS (SELECT FROM buzz_private.relay_members m WHERE m.pubkey = pg_temp.pk(6))
          AND NOT pg_temp.marked(), 'the failed calls added nobody and owe no list');

-- BZISO: the guard is in the body (the error itself is tested by pytest, see the header)
SELECT ok(pg_get_functiondef('buzz.add_relay_member(uuid, text, text, text)'::regprocedure)
          ~ 'PERFORM buzz_private\.require_read_committed\(\)',
          'add_relay_member calls buzz_private.require_read_committed (BZISO)');

-- privileges
SET LOCAL ROLE buzz_writer;
SELECT is(buzz.add_relay_member(:'c', pg_temp.pk(7)), 'added', 'buzz_writer may add a member');
SELECT is(pg_temp.flush(), 2, '... and publish its list');
RESET ROLE;
SET LOCAL ROLE buzz_reader;
SELECT throws_ok(format('SELECT buzz.add_relay_member(%L, %L)', :'c', pg_temp.pk(8)),
                 '42501', NULL, 'buzz_reader may not add a member');
RESET ROLE;
CREATE ROLE buzz_pgtap_nobody_add_relay_member NOLOGIN;
-- Only the schema: the refusal must come from EXECUTE not being granted to PUBLIC.
GRANT USAGE ON SCHEMA buzz TO buzz_pgtap_nobody_add_relay_member;
SET LOCAL ROLE buzz_pgtap_nobody_add_relay_member;
SELECT throws_ok(format('SELECT buzz.add_relay_member(%L, %L)', :'c', pg_temp.pk(8)),
                 '42501', NULL, 'a role without grants may not add a member');
RESET ROLE;

SELECT pg_temp.list_is_members(:'c', 'in the end the live list names exactly the members');

SELECT * FROM finish();
ROLLBACK;
