-- buzz.unassign_role(p_community uuid, p_pubkey text, p_role text) -> text
-- Outcomes unassigned / not_assigned / not_member; the roles left held (still ascending) and
-- the list's member tag (exact text), a list and no 8000/8001; an undefined role is held by
-- nobody: not_assigned (not_member for a stranger); assigned and unassigned again in one
-- transaction; BZIRL for a base or malformed role (before not_member), BZIPK, BZNCM, BZARC,
-- BZISO under REPEATABLE READ, and who may call it.

-- BZISO: a transaction of its own, rolled back; psql keeps the SQLSTATE for the suite.
BEGIN ISOLATION LEVEL REPEATABLE READ;
\ir lib/fixtures.sql
SELECT pg_temp.sqlstate_of(format($$SELECT buzz.unassign_role(%L, %L, 'mod')$$, gen_random_uuid(), pg_temp.pk(1)))
       AS iso_repeatable_read \gset
ROLLBACK;

BEGIN;
\ir lib/fixtures.sql

CREATE FUNCTION pg_temp.irl(p_sql text, p_description text) RETURNS text LANGUAGE sql
RETURN throws_ok(p_sql, 'BZIRL', NULL, p_description);
-- The roles a member holds.
CREATE FUNCTION pg_temp.held(p_community uuid, p_pubkey text) RETURNS text[] LANGUAGE sql
BEGIN ATOMIC
    SELECT m.roles FROM buzz.relay_members(p_community) m WHERE m.pubkey = p_pubkey;
END;
-- A member's tag in the live list, as its text.
CREATE FUNCTION pg_temp.live_tag(p_community uuid, p_pubkey text) RETURNS text LANGUAGE sql
BEGIN ATOMIC
    SELECT t::text FROM json_array_elements(buzz.member_list(p_community) -> 'tags') AS e (t)
    WHERE t ->> 1 = p_pubkey;
END;

SELECT plan(52);

SELECT function_returns('buzz', 'unassign_role', ARRAY['uuid', 'text', 'text'], 'text', 'unassign_role returns text');

SELECT pg_temp.community() AS c \gset
SELECT pg_temp.community('archived.example.org') AS archived \gset
SELECT buzz.add_relay_member(:'c', pg_temp.pk(1)) || buzz.add_relay_member(:'c', pg_temp.pk(2))
       || buzz.add_relay_member(:'archived', pg_temp.pk(1)) AS setup_1 \gset
SELECT buzz.define_role(:'c', 'mod', 'Moderator') || buzz.define_role(:'c', 'a', 'A')
       || buzz.define_role(:'c', '_z', 'Z') || buzz.define_role(:'c', '-x', 'X')
       || buzz.define_role(:'archived', 'mod', 'Moderator') AS setup_2 \gset
SELECT buzz.assign_role(:'c', pg_temp.pk(1), 'mod') || buzz.assign_role(:'c', pg_temp.pk(2), 'a')
       || buzz.assign_role(:'c', pg_temp.pk(2), '_z') || buzz.assign_role(:'c', pg_temp.pk(2), '-x')
       || buzz.assign_role(:'c', pg_temp.pk(0), 'mod') || buzz.assign_role(:'archived', pg_temp.pk(1), 'mod')
       AS setup_3 \gset
SELECT pg_temp.flush() AS setup_published \gset
SELECT buzz.archive_community(:'archived') AS archive_outcome \gset
SELECT is(pg_temp.held(:'c', pg_temp.pk(2)), ARRAY['-x', '_z', 'a'], 'setup: pk(2) holds -x, _z and a');

-- unassigned
SELECT is(buzz.unassign_role(:'c', pg_temp.pk(1), 'mod'), 'unassigned', 'a member''s only role is taken');
SELECT is(pg_temp.held(:'c', pg_temp.pk(1)), '{}'::text[], '... it holds none');
SELECT ok(pg_temp.marked(), '... the community owes a list');
SELECT pg_temp.events_are($$VALUES (13534, NULL::text)$$, '... the list only: neither 8000 nor 8001, no 33534');
SELECT is(pg_temp.shapes(), ARRAY[pg_temp.shape(13534, pg_temp.expected_tags(:'c'))],
          '... the list''s tags as built independently from the members');
SELECT is(pg_temp.flush(), 1, '... published');
SELECT is(pg_temp.live_tag(:'c', pg_temp.pk(1)), format('["member","%s","member"]', pg_temp.pk(1)),
          '... its tag in the live list: ["member", pubkey, "member"]');
SELECT ok(EXISTS (SELECT FROM buzz.role_definitions(:'c') d WHERE d #>> '{tags,1,1}' = 'mod'),
          '... the role is still defined');
SELECT is(buzz.unassign_role(:'c', upper(pg_temp.pk(2)), '_z'), 'unassigned', 'the middle one of three roles, pubkey in uppercase');
SELECT is(pg_temp.held(:'c', pg_temp.pk(2)), ARRAY['-x', 'a'], '... the others are left, still ascending');
SELECT is(pg_temp.flush(), 1, '... published');
SELECT is(pg_temp.live_tag(:'c', pg_temp.pk(2)), format('["member","%s","member","-x","a"]', pg_temp.pk(2)),
          '... its tag: ["member", pubkey, "member", "-x", "a"]');
SELECT is(buzz.unassign_role(:'c', pg_temp.pk(0), 'mod'), 'unassigned', 'the owner''s role is taken');
SELECT is(pg_temp.flush(), 1, '... published');
SELECT is(pg_temp.live_tag(:'c', pg_temp.pk(0)), format('["member","%s","owner"]', pg_temp.pk(0)),
          '... its tag: ["member", pubkey, "owner"]');
SELECT ok(NOT pg_temp.marked(), 'nothing is owed once published');

-- not_assigned, not_member: no change
SELECT is(buzz.unassign_role(:'c', pg_temp.pk(1), 'mod'), 'not_assigned', 'a role not held: not_assigned');
SELECT is(buzz.unassign_role(:'c', pg_temp.pk(1), 'ghost'), 'not_assigned', 'a role never defined: not_assigned');
SELECT is(buzz.unassign_role(:'c', pg_temp.pk(9), 'a'), 'not_member', 'a stranger: not_member');
SELECT is(buzz.unassign_role(:'c', pg_temp.pk(9), 'ghost'), 'not_member', '... also for a role never defined');
SELECT ok(NOT pg_temp.marked(), '... no change, nothing owed');

-- Assigned and unassigned again in one transaction
SELECT is(buzz.assign_role(:'c', pg_temp.pk(1), 'a'), 'assigned', 'assigned ...');
SELECT is(buzz.unassign_role(:'c', pg_temp.pk(1), 'a'), 'unassigned', '... and unassigned again');
SELECT is((SELECT count(*)::integer FROM pg_temp.events() e WHERE e.kind <> 13534), 0,
          '... no 8000, 8001 or 33534 (a list is allowed)');
SELECT pg_temp.flush() AS n \gset
SELECT is(pg_temp.live_tag(:'c', pg_temp.pk(1)), format('["member","%s","member"]', pg_temp.pk(1)),
          '... the live list names it without the role');

-- BZIRL: base and malformed roles, before not_member
SELECT pg_temp.irl(format($$SELECT buzz.unassign_role(%L, %L, 'owner')$$, :'c', pg_temp.pk(0)),
                   'owner: BZIRL (ownership moves by transfer)');
SELECT pg_temp.irl(format($$SELECT buzz.unassign_role(%L, %L, 'admin')$$, :'c', pg_temp.pk(1)), 'admin: BZIRL');
SELECT pg_temp.irl(format($$SELECT buzz.unassign_role(%L, %L, 'member')$$, :'c', pg_temp.pk(1)), 'member: BZIRL');
SELECT pg_temp.irl(format($$SELECT buzz.unassign_role(%L, %L, 'A')$$, :'c', pg_temp.pk(2)),
                   'an uppercase role id: BZIRL (not lower-cased into a, which pk(2) holds)');
SELECT pg_temp.irl(format($$SELECT buzz.unassign_role(%L, %L, %L)$$, :'c', pg_temp.pk(2), repeat('a', 65)),
                   'a role id of 65 characters: BZIRL');
SELECT pg_temp.irl(format($$SELECT buzz.unassign_role(%L, %L, 'a b')$$, :'c', pg_temp.pk(2)), 'a space in the role id: BZIRL');
SELECT pg_temp.irl(format($$SELECT buzz.unassign_role(%L, %L, '')$$, :'c', pg_temp.pk(2)), 'an empty role id: BZIRL');
SELECT pg_temp.irl(format($$SELECT buzz.unassign_role(%L, %L, NULL)$$, :'c', pg_temp.pk(2)), 'a NULL role id: BZIRL');
SELECT pg_temp.irl(format($$SELECT buzz.unassign_role(%L, %L, 'member')$$, :'c', pg_temp.pk(9)),
                   'a base role for a stranger: BZIRL (before not_member)');
SELECT pg_temp.irl(format($$SELECT buzz.unassign_role(%L, %L, 'Bad!')$$, :'c', pg_temp.pk(9)),
                   'a malformed role for a stranger: BZIRL (before not_member)');

-- BZIPK
SELECT throws_ok(format($$SELECT buzz.unassign_role(%L, NULL, 'a')$$, :'c'), 'BZIPK', NULL, 'a NULL pubkey: BZIPK');
SELECT throws_ok(format($$SELECT buzz.unassign_role(%L, %L, 'a')$$, :'c', pg_temp.pk(2) || '0'), 'BZIPK', NULL,
                 'a pubkey of 65 hex characters: BZIPK');

-- BZNCM, BZARC
SELECT throws_ok(format($$SELECT buzz.unassign_role(NULL, %L, 'a')$$, pg_temp.pk(2)), 'BZNCM', NULL, 'a NULL community: BZNCM');
SELECT throws_ok(format($$SELECT buzz.unassign_role(%L, %L, 'a')$$, gen_random_uuid(), pg_temp.pk(2)), 'BZNCM', NULL,
                 'an unknown community: BZNCM');
SELECT throws_ok(format($$SELECT buzz.unassign_role(%L, %L, 'mod')$$, :'archived', pg_temp.pk(1)), 'BZARC', NULL,
                 'an archived community: BZARC');
SELECT throws_ok(format($$SELECT buzz.unassign_role(%L, %L, 'mod')$$, :'archived', pg_temp.pk(0)), 'BZARC', NULL,
                 '... also when it would answer not_assigned');
SELECT is(pg_temp.held(:'archived', pg_temp.pk(1)), ARRAY['mod'], '... the archived community is unchanged');
SELECT ok(NOT pg_temp.marked(), 'the failed calls owe nothing');

-- BZISO (the transaction at the top)
SELECT is(:'iso_repeatable_read'::text, 'BZISO', 'under REPEATABLE READ: BZISO');

-- privileges
SET LOCAL ROLE buzz_writer;
SELECT is(buzz.unassign_role(:'c', pg_temp.pk(2), 'a'), 'unassigned', 'buzz_writer may unassign a role');
SELECT is(pg_temp.flush(), 1, '... and publish its list');
RESET ROLE;
SET LOCAL ROLE buzz_reader;
SELECT throws_ok(format($$SELECT buzz.unassign_role(%L, %L, '-x')$$, :'c', pg_temp.pk(2)), '42501', NULL,
                 'buzz_reader may not unassign a role');
RESET ROLE;
CREATE ROLE buzz_pgtap_nobody_unassign_role NOLOGIN;
-- Only the schema: the refusal must come from EXECUTE not being granted to PUBLIC.
GRANT USAGE ON SCHEMA buzz TO buzz_pgtap_nobody_unassign_role;
SET LOCAL ROLE buzz_pgtap_nobody_unassign_role;
SELECT throws_ok(format($$SELECT buzz.unassign_role(%L, %L, '-x')$$, :'c', pg_temp.pk(2)), '42501', NULL,
                 'a role without grants may not unassign a role');
RESET ROLE;

SELECT is((buzz.member_list(:'c') -> 'tags')::text, pg_temp.expected_tags(:'c'),
          'in the end the live list is exactly the members and the roles they hold');
SELECT is_empty(format('SELECT * FROM buzz.member_list_drift(%L)', :'c'), '... no drift');

SELECT * FROM finish();
ROLLBACK;
