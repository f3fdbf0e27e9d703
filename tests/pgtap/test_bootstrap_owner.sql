-- buzz.bootstrap_owner(p_community uuid, p_pubkey text) -> text
-- Outcomes provisioned (the pubkey becomes the owner, joining if needed; any other owner
-- becomes admin) / unchanged, one owner at most, the members, the events and the live list
-- after each, argument errors (BZIPK, BZNCM, BZARC) and who may call it. BZISO is covered by
-- pytest: this suite runs in one READ COMMITTED transaction, whose isolation level can no
-- longer change once the fixtures have run.
BEGIN;
\ir lib/fixtures.sql

SELECT plan(47);

SELECT function_returns('buzz', 'bootstrap_owner', ARRAY['uuid', 'text'],
                        'text', 'bootstrap_owner returns text');

SELECT pg_temp.community() AS c \gset
SELECT pg_temp.community('archived.example.org') AS archived \gset
SELECT buzz.add_relay_member(:'c', pg_temp.pk(2)) AS setup_1 \gset
SELECT pg_temp.flush() AS setup_published \gset
SELECT buzz.archive_community(:'archived') AS archive_outcome \gset

-- unchanged
SELECT is(buzz.bootstrap_owner(:'c', pg_temp.pk(0)), 'unchanged',
          'the owner bootstrapped again answers unchanged');
SELECT is(buzz.bootstrap_owner(:'c', upper(pg_temp.pk(0))), 'unchanged',
          '... also named in uppercase');
SELECT pg_temp.members_are(:'c', $$VALUES (pg_temp.pk(0), 'owner'), (pg_temp.pk(2), 'member')$$,
                           '... nothing changed');
SELECT ok(NOT pg_temp.marked(), 'unchanged owes no list');

-- provisioned: a pubkey that was not a member
SELECT is(buzz.bootstrap_owner(:'c', pg_temp.pk(1)), 'provisioned',
          'a non-member is provisioned as owner');
SELECT pg_temp.members_are(:'c',
    $$VALUES (pg_temp.pk(0), 'admin'), (pg_temp.pk(1), 'owner'), (pg_temp.pk(2), 'member')$$,
    '... it joins as owner and the previous owner becomes admin');
SELECT is(pg_temp.owners(:'c'), 1, '... one owner');
SELECT ok(pg_temp.marked(), '... and the community owes a new list');
SELECT pg_temp.events_are($$VALUES (13534, NULL::text), (8000, pg_temp.pk(1))$$,
                          '... one list and an 8000 for the newcomer (the demotion is neither)');
SELECT is(pg_temp.flush(), 2, 'publishing writes those two events');
SELECT pg_temp.list_is_members(:'c', 'the live list names the new owner and the new admin');
SELECT ok(NOT pg_temp.marked(), 'nothing is owed once published');

-- provisioned: a member, named in uppercase
SELECT is(buzz.bootstrap_owner(:'c', upper(pg_temp.pk(2))), 'provisioned',
          'a member named in uppercase is provisioned as owner');
SELECT pg_temp.members_are(:'c',
    $$VALUES (pg_temp.pk(0), 'admin'), (pg_temp.pk(1), 'admin'), (pg_temp.pk(2), 'owner')$$,
    '... it becomes owner and the previous owner admin');
SELECT is(pg_temp.owners(:'c'), 1, '... one owner');
SELECT pg_temp.events_are($$VALUES (13534, NULL::text)$$,
                          '... the list only: roles changed, nobody joined or left');
SELECT is(pg_temp.flush(), 1, '... published');
SELECT pg_temp.list_is_members(:'c', '... the live list names the new roles');

-- provisioned: an admin (a former owner)
SELECT is(buzz.bootstrap_owner(:'c', pg_temp.pk(0)), 'provisioned',
          'an admin is provisioned as owner');
SELECT pg_temp.members_are(:'c',
    $$VALUES (pg_temp.pk(0), 'owner'), (pg_temp.pk(1), 'admin'), (pg_temp.pk(2), 'admin')$$,
    '... it becomes owner and the previous owner admin');
SELECT pg_temp.events_are($$VALUES (13534, NULL::text)$$, '... the list only');
SELECT is(pg_temp.flush(), 1, '... published');
SELECT pg_temp.list_is_members(:'c', '... the live list names the new roles');

-- provisioned: a community left without an owner (by direct SQL)
SELECT pg_temp.community('ownerless.example.org') AS n \gset
SELECT buzz.add_relay_member(:'n', pg_temp.pk(3)) AS setup_2 \gset
DELETE FROM buzz_private.relay_members m WHERE m.community_id = :'n' AND m.role = 'owner';
SELECT pg_temp.flush() AS setup_published \gset
SELECT is(pg_temp.owners(:'n'), 0, 'setup: a community without an owner');
SELECT is(buzz.bootstrap_owner(:'n', pg_temp.pk(4)), 'provisioned',
          'a pubkey is provisioned as owner of a community without one');
SELECT pg_temp.members_are(:'n', $$VALUES (pg_temp.pk(3), 'member'), (pg_temp.pk(4), 'owner')$$,
                           '... it joins as owner, the member keeps its role');
SELECT pg_temp.events_are($$VALUES (13534, NULL::text), (8000, pg_temp.pk(4))$$,
                          '... one list and an 8000 for the owner');
SELECT is(pg_temp.flush(), 2, '... published');
SELECT pg_temp.list_is_members(:'n', '... the live list names the owner');

-- argument errors
SELECT throws_ok(format('SELECT buzz.bootstrap_owner(%L, NULL)', :'c'),
                 'BZIPK', NULL, 'a NULL pubkey raises BZIPK');
SELECT throws_ok(format('SELECT buzz.bootstrap_owner(%L, %L)', :'c', left(pg_temp.pk(5), 63)),
                 'BZIPK', NULL, 'a pubkey of 63 hex characters raises BZIPK');
SELECT throws_ok(format('SELECT buzz.bootstrap_owner(%L, %L)', :'c', repeat('G', 64)),
                 'BZIPK', NULL, 'a pubkey with non-hex characters raises BZIPK');
SELECT throws_ok(format('SELECT buzz.bootstrap_owner(%L, %L)', :'c', ''),
                 'BZIPK', NULL, 'an empty pubkey raises BZIPK');
SELECT throws_ok(format('SELECT buzz.bootstrap_owner(NULL, %L)', pg_temp.pk(5)),
                 'BZNCM', NULL, 'a NULL community raises BZNCM');
SELECT throws_ok(format('SELECT buzz.bootstrap_owner(%L, %L)', gen_random_uuid(), pg_temp.pk(5)),
                 'BZNCM', NULL, 'an unknown community raises BZNCM');
SELECT throws_ok(format('SELECT buzz.bootstrap_owner(%L, %L)', :'archived', pg_temp.pk(5)),
                 'BZARC', NULL, 'provisioning in an archived community raises BZARC');
SELECT throws_ok(format('SELECT buzz.bootstrap_owner(%L, %L)', :'archived', pg_temp.pk(0)),
                 'BZARC', NULL, '... also for its owner (before unchanged)');
SELECT pg_temp.members_are(:'archived', $$VALUES (pg_temp.pk(0), 'owner')$$,
                           'the archived community keeps its owner');
SELECT ok(NOT EXISTS (SELECT FROM buzz_private.relay_members m WHERE m.pubkey = pg_temp.pk(5))
          AND NOT pg_temp.marked(), 'the failed calls added nobody and owe no list');

-- BZISO: the guard is in the body (the error itself is tested by pytest, see the header)
SELECT ok(pg_get_functiondef('buzz.bootstrap_owner(uuid, text)'::regprocedure)
          ~ 'PERFORM buzz_private\.require_read_committed\(\)',
          'bootstrap_owner calls buzz_private.require_read_committed (BZISO)');

-- privileges
SET LOCAL ROLE buzz_writer;
SELECT is(buzz.bootstrap_owner(:'c', pg_temp.pk(6)), 'provisioned',
          'buzz_writer may provision an owner');
SELECT is(pg_temp.flush(), 2, '... and publish its list');
RESET ROLE;
SET LOCAL ROLE buzz_reader;
SELECT throws_ok(format('SELECT buzz.bootstrap_owner(%L, %L)', :'c', pg_temp.pk(7)),
                 '42501', NULL, 'buzz_reader may not provision an owner');
RESET ROLE;
CREATE ROLE buzz_pgtap_nobody_bootstrap_owner NOLOGIN;
-- Only the schema: the refusal must come from EXECUTE not being granted to PUBLIC.
GRANT USAGE ON SCHEMA buzz TO buzz_pgtap_nobody_bootstrap_owner;
SET LOCAL ROLE buzz_pgtap_nobody_bootstrap_owner;
SELECT throws_ok(format('SELECT buzz.bootstrap_owner(%L, %L)', :'c', pg_temp.pk(7)),
                 '42501', NULL, 'a role without grants may not provision an owner');
RESET ROLE;

SELECT pg_temp.members_are(:'c',
    $$VALUES (pg_temp.pk(0), 'admin'), (pg_temp.pk(1), 'admin'), (pg_temp.pk(2), 'admin'),
             (pg_temp.pk(6), 'owner')$$,
    'in the end the writer''s pubkey is the one owner');
SELECT pg_temp.list_is_members(:'c', 'in the end the live list names exactly the members');

SELECT * FROM finish();
ROLLBACK;
