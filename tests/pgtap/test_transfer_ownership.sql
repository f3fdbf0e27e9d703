-- buzz.transfer_ownership(p_community uuid, p_new_owner text,
--                         p_expected_owner text DEFAULT NULL) -> text
-- Outcome transferred (the previous owner stays as member; a non-member joins as owner with
-- an 8000), the no-change outcomes in their order (no_owner, already_owner, owner_conflict,
-- limit_reached), one owner at most, the members, the events and the live list after each,
-- argument errors (BZIPK, BZNCM, BZARC) and who may call it. BZISO is covered by pytest: this
-- suite runs in one READ COMMITTED transaction, whose isolation level can no longer change
-- once the fixtures have run.
BEGIN;
\ir lib/fixtures.sql

SELECT plan(63);

SELECT function_returns('buzz', 'transfer_ownership', ARRAY['uuid', 'text', 'text'],
                        'text', 'transfer_ownership returns text');

SELECT pg_temp.community() AS c \gset
SELECT pg_temp.community('archived.example.org') AS archived \gset
SELECT buzz.add_relay_member(:'c', pg_temp.pk(1)) AS setup_1 \gset
SELECT buzz.add_relay_member(:'c', pg_temp.pk(2), 'admin') AS setup_2 \gset
SELECT buzz.add_relay_member(:'archived', pg_temp.pk(1)) AS setup_3 \gset
SELECT pg_temp.flush() AS setup_published \gset
SELECT buzz.archive_community(:'archived') AS archive_outcome \gset

-- transferred to a member
SELECT is(buzz.transfer_ownership(:'c', pg_temp.pk(1)), 'transferred',
          'ownership is transferred to a member');
SELECT pg_temp.members_are(:'c',
    $$VALUES (pg_temp.pk(0), 'member'), (pg_temp.pk(1), 'owner'), (pg_temp.pk(2), 'admin')$$,
    '... the member is owner, the previous owner a member, the admin unchanged');
SELECT is(pg_temp.owners(:'c'), 1, '... one owner');
SELECT ok(pg_temp.marked(), '... and the community owes a new list');
SELECT pg_temp.events_are($$VALUES (13534, NULL::text)$$,
                          '... the list only: roles changed, nobody joined or left');
SELECT is(pg_temp.flush(), 1, 'publishing writes the list');
SELECT pg_temp.list_is_members(:'c', 'the live list names the new roles');
SELECT ok(NOT pg_temp.marked(), 'nothing is owed once published');

-- transferred to a non-member, with the expected owner, in uppercase
SELECT is(buzz.transfer_ownership(:'c', upper(pg_temp.pk(3)), upper(pg_temp.pk(1))), 'transferred',
          'ownership is transferred to a non-member, the expected owner named in uppercase');
SELECT pg_temp.members_are(:'c',
    $$VALUES (pg_temp.pk(0), 'member'), (pg_temp.pk(1), 'member'), (pg_temp.pk(2), 'admin'),
             (pg_temp.pk(3), 'owner')$$,
    '... the newcomer joins as owner (lowercased), the previous owner is a member');
SELECT is(pg_temp.owners(:'c'), 1, '... one owner');
SELECT pg_temp.events_are($$VALUES (13534, NULL::text), (8000, pg_temp.pk(3))$$,
                          '... one list and an 8000 for the new owner');
SELECT is(pg_temp.flush(), 2, '... published');
SELECT pg_temp.list_is_members(:'c', '... the live list names the new owner');

-- transferred to an admin
SELECT is(buzz.transfer_ownership(:'c', pg_temp.pk(2), pg_temp.pk(3)), 'transferred',
          'ownership is transferred to an admin, the expected owner right');
SELECT pg_temp.members_are(:'c',
    $$VALUES (pg_temp.pk(0), 'member'), (pg_temp.pk(1), 'member'), (pg_temp.pk(2), 'owner'),
             (pg_temp.pk(3), 'member')$$,
    '... the admin is owner, the previous owner a member');
SELECT pg_temp.events_are($$VALUES (13534, NULL::text)$$, '... the list only');
SELECT is(pg_temp.flush(), 1, '... published');
SELECT pg_temp.list_is_members(:'c', '... the live list names the new roles');

-- already_owner, owner_conflict: no change
SELECT is(buzz.transfer_ownership(:'c', pg_temp.pk(2)), 'already_owner',
          'a transfer to the owner answers already_owner');
SELECT is(buzz.transfer_ownership(:'c', upper(pg_temp.pk(2)), pg_temp.pk(3)), 'already_owner',
          '... also with a stale expected owner (a retried transfer): already_owner before owner_conflict');
SELECT is(buzz.transfer_ownership(:'c', pg_temp.pk(4), pg_temp.pk(3)), 'owner_conflict',
          'an expected owner that is not the owner answers owner_conflict');
SELECT is(buzz.transfer_ownership(:'c', pg_temp.pk(1), pg_temp.pk(0)), 'owner_conflict',
          '... also for a member as new owner');
SELECT pg_temp.members_are(:'c',
    $$VALUES (pg_temp.pk(0), 'member'), (pg_temp.pk(1), 'member'), (pg_temp.pk(2), 'owner'),
             (pg_temp.pk(3), 'member')$$,
    '... nobody joined and no role changed');
SELECT ok(NOT pg_temp.marked(), 'already_owner and owner_conflict owe no list');

-- no_owner: a community left without an owner (by direct SQL)
SELECT pg_temp.community('ownerless.example.org') AS n \gset
SELECT buzz.add_relay_member(:'n', pg_temp.pk(1)) AS setup_4 \gset
DELETE FROM buzz_private.relay_members m WHERE m.community_id = :'n' AND m.role = 'owner';
SELECT pg_temp.flush() AS setup_published \gset
SELECT is(buzz.transfer_ownership(:'n', pg_temp.pk(1)), 'no_owner',
          'a transfer in a community without an owner answers no_owner');
SELECT is(buzz.transfer_ownership(:'n', pg_temp.pk(4), pg_temp.pk(0)), 'no_owner',
          '... also with an expected owner: no_owner before owner_conflict');
SELECT pg_temp.members_are(:'n', $$VALUES (pg_temp.pk(1), 'member')$$,
                           '... nobody joined and no role changed');
SELECT ok(NOT pg_temp.marked(), 'no_owner owes no list');

-- limit_reached: pk(5) owns another community, and the limit is one
SELECT c.community_id AS other FROM buzz.create_community('other.example.org', pg_temp.pk(5)) c \gset
SELECT pg_temp.flush() AS setup_published \gset
UPDATE buzz_private.settings SET max_communities_per_owner = 1;
SELECT is(buzz.transfer_ownership(:'c', pg_temp.pk(5)), 'limit_reached',
          'a transfer to a pubkey that owns the maximum answers limit_reached');
SELECT is(buzz.transfer_ownership(:'c', pg_temp.pk(5), pg_temp.pk(2)), 'limit_reached',
          '... also with the right expected owner');
SELECT is(buzz.transfer_ownership(:'c', pg_temp.pk(5), pg_temp.pk(0)), 'owner_conflict',
          '... a wrong expected owner: owner_conflict before limit_reached');
SELECT is(buzz.transfer_ownership(:'c', pg_temp.pk(2)), 'already_owner',
          'the owner of one community at a limit of one: already_owner before limit_reached');
SELECT is(buzz.transfer_ownership(:'n', pg_temp.pk(5)), 'no_owner',
          'no_owner before limit_reached');
SELECT pg_temp.members_are(:'c',
    $$VALUES (pg_temp.pk(0), 'member'), (pg_temp.pk(1), 'member'), (pg_temp.pk(2), 'owner'),
             (pg_temp.pk(3), 'member')$$,
    '... nobody joined and no role changed');
SELECT ok(NOT pg_temp.marked(), 'limit_reached owes no list');
UPDATE buzz_private.settings SET max_communities_per_owner = 2;
SELECT is(buzz.transfer_ownership(:'c', pg_temp.pk(5), pg_temp.pk(2)), 'transferred',
          'below the limit (one owned, limit two) the transfer goes through');
SELECT pg_temp.members_are(:'c',
    $$VALUES (pg_temp.pk(0), 'member'), (pg_temp.pk(1), 'member'), (pg_temp.pk(2), 'member'),
             (pg_temp.pk(3), 'member'), (pg_temp.pk(5), 'owner')$$,
    '... the new owner joins as owner');
SELECT is((SELECT count(*)::integer FROM buzz_private.relay_members m
           WHERE m.pubkey = pg_temp.pk(5) AND m.role = 'owner'), 2,
          '... and owns two communities');
SELECT pg_temp.events_are($$VALUES (13534, NULL::text), (8000, pg_temp.pk(5))$$,
                          '... one list and an 8000 for the new owner');
SELECT is(pg_temp.flush(), 2, '... published');
SELECT pg_temp.list_is_members(:'c', '... the live list names the new owner');
UPDATE buzz_private.settings SET max_communities_per_owner = DEFAULT;

-- argument errors, also where the call would otherwise answer an outcome
SELECT throws_ok(format('SELECT buzz.transfer_ownership(%L, NULL)', :'c'),
                 'BZIPK', NULL, 'a NULL new owner raises BZIPK');
SELECT throws_ok(format('SELECT buzz.transfer_ownership(%L, %L)', :'c', left(pg_temp.pk(6), 63)),
                 'BZIPK', NULL, 'a new owner of 63 hex characters raises BZIPK');
SELECT throws_ok(format('SELECT buzz.transfer_ownership(%L, %L)', :'c', repeat('h', 64)),
                 'BZIPK', NULL, 'a new owner with non-hex characters raises BZIPK');
SELECT throws_ok(format('SELECT buzz.transfer_ownership(%L, %L, %L)', :'c', pg_temp.pk(6), 'nope'),
                 'BZIPK', NULL, 'a malformed expected owner raises BZIPK');
SELECT throws_ok(format('SELECT buzz.transfer_ownership(%L, %L, %L)', :'c', pg_temp.pk(6), ''),
                 'BZIPK', NULL, 'an empty expected owner raises BZIPK');
SELECT throws_ok(format('SELECT buzz.transfer_ownership(%L, %L, %L)', :'c', pg_temp.pk(5), 'nope'),
                 'BZIPK', NULL, '... also to the owner (before already_owner)');
SELECT throws_ok(format('SELECT buzz.transfer_ownership(%L, %L, %L)', :'n', pg_temp.pk(1), 'nope'),
                 'BZIPK', NULL, '... and without an owner (before no_owner)');
SELECT throws_ok(format('SELECT buzz.transfer_ownership(NULL, %L)', pg_temp.pk(6)),
                 'BZNCM', NULL, 'a NULL community raises BZNCM');
SELECT throws_ok(format('SELECT buzz.transfer_ownership(%L, %L)', gen_random_uuid(), pg_temp.pk(6)),
                 'BZNCM', NULL, 'an unknown community raises BZNCM');
SELECT throws_ok(format('SELECT buzz.transfer_ownership(%L, %L)', :'archived', pg_temp.pk(1)),
                 'BZARC', NULL, 'a transfer in an archived community raises BZARC');
SELECT throws_ok(format('SELECT buzz.transfer_ownership(%L, %L)', :'archived', pg_temp.pk(0)),
                 'BZARC', NULL, '... also to its owner (before already_owner)');
SELECT pg_temp.members_are(:'archived', $$VALUES (pg_temp.pk(0), 'owner'), (pg_temp.pk(1), 'member')$$,
                           'the archived community keeps its owner');
SELECT ok(NOT EXISTS (SELECT FROM buzz_private.relay_members m WHERE m.pubkey = pg_temp.pk(6))
          AND NOT pg_temp.marked(), 'the failed calls added nobody and owe no list');

-- BZISO: the guard is in the body (the error itself is tested by pytest, see the header)
SELECT ok(pg_get_functiondef('buzz.transfer_ownership(uuid, text, text)'::regprocedure)
          ~ 'PERFORM buzz_private\.require_read_committed\(\)',
          'transfer_ownership calls buzz_private.require_read_committed (BZISO)');

-- privileges
SET LOCAL ROLE buzz_writer;
SELECT is(buzz.transfer_ownership(:'c', pg_temp.pk(6), pg_temp.pk(5)), 'transferred',
          'buzz_writer may transfer ownership');
SELECT is(pg_temp.flush(), 2, '... and publish its list');
RESET ROLE;
SET LOCAL ROLE buzz_reader;
SELECT throws_ok(format('SELECT buzz.transfer_ownership(%L, %L)', :'c', pg_temp.pk(7)),
                 '42501', NULL, 'buzz_reader may not transfer ownership');
RESET ROLE;
CREATE ROLE buzz_pgtap_nobody_transfer_ownership NOLOGIN;
-- Only the schema: the refusal must come from EXECUTE not being granted to PUBLIC.
GRANT USAGE ON SCHEMA buzz TO buzz_pgtap_nobody_transfer_ownership;
SET LOCAL ROLE buzz_pgtap_nobody_transfer_ownership;
SELECT throws_ok(format('SELECT buzz.transfer_ownership(%L, %L)', :'c', pg_temp.pk(7)),
                 '42501', NULL, 'a role without grants may not transfer ownership');
RESET ROLE;

SELECT results_eq(
    format($$SELECT m.pubkey FROM buzz.relay_members(%L) m WHERE m.role = 'owner'$$, :'c'),
    $$VALUES (pg_temp.pk(6))$$, 'in the end the writer''s new owner is the one owner');
SELECT pg_temp.list_is_members(:'c', 'in the end the live list names exactly the members');

SELECT * FROM finish();
ROLLBACK;
