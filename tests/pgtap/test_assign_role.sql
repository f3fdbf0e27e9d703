-- buzz.assign_role(p_community uuid, p_pubkey text, p_role text) -> text
-- Outcomes assigned / already_assigned / not_member; the roles held (relay_members.roles,
-- ascending by C collation) and the list's member tag ["member", pubkey, base role, defined
-- roles ascending...] (exact text, e.g. '-x' < '0a' < '_z' < 'a'), a list and no 8000/8001,
-- owners and admins holding defined roles, a base-role change keeping them, a member removed
-- and added again holding none; BZIRL for a base, undefined or malformed role (before
-- not_member), BZIPK, BZNCM, BZARC, BZISO under REPEATABLE READ, and who may call it.

-- BZISO: a transaction of its own, rolled back; psql keeps the SQLSTATE for the suite.
BEGIN ISOLATION LEVEL REPEATABLE READ;
\ir lib/fixtures.sql
SELECT pg_temp.sqlstate_of(format($$SELECT buzz.assign_role(%L, %L, 'mod')$$, gen_random_uuid(), pg_temp.pk(1)))
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

SELECT plan(64);

SELECT function_returns('buzz', 'assign_role', ARRAY['uuid', 'text', 'text'], 'text', 'assign_role returns text');

SELECT pg_temp.community() AS c \gset
SELECT pg_temp.community('archived.example.org') AS archived \gset
SELECT pg_temp.community('other.example.org') AS other \gset
SELECT buzz.add_relay_member(:'c', pg_temp.pk(1)) || buzz.add_relay_member(:'c', pg_temp.pk(2))
       || buzz.add_relay_member(:'c', pg_temp.pk(3), 'admin') || buzz.add_relay_member(:'archived', pg_temp.pk(1))
       AS setup_1 \gset
SELECT buzz.define_role(:'c', 'mod', 'Moderator') || buzz.define_role(:'c', 'a', 'A')
       || buzz.define_role(:'c', '_z', 'Z') || buzz.define_role(:'c', '0a', 'Zero')
       || buzz.define_role(:'c', '-x', 'X') || buzz.define_role(:'archived', 'mod', 'Moderator')
       || buzz.define_role(:'other', 'elsewhere', 'Elsewhere') AS setup_2 \gset
SELECT buzz.assign_role(:'archived', pg_temp.pk(1), 'mod') AS setup_3 \gset
SELECT pg_temp.flush() AS setup_published \gset
SELECT buzz.archive_community(:'archived') AS archive_outcome \gset

-- assigned
SELECT is(buzz.assign_role(:'c', pg_temp.pk(1), 'mod'), 'assigned', 'a member is given a defined role');
SELECT is(pg_temp.held(:'c', pg_temp.pk(1)), ARRAY['mod'], '... it holds it');
SELECT pg_temp.members_are(:'c', $$VALUES (pg_temp.pk(0), 'owner'), (pg_temp.pk(1), 'member'),
                                          (pg_temp.pk(2), 'member'), (pg_temp.pk(3), 'admin')$$,
                           '... its base role unchanged, nobody joined or left');
SELECT ok(pg_temp.marked(), '... the community owes a list');
SELECT pg_temp.events_are($$VALUES (13534, NULL::text)$$, '... the list only: neither 8000 nor 8001, no 33534');
SELECT is(pg_temp.shapes(), ARRAY[pg_temp.shape(13534, pg_temp.expected_tags(:'c'))],
          '... the list''s tags as built independently from the members');
SELECT is(pg_temp.flush(), 1, '... published');
SELECT is(pg_temp.live_tag(:'c', pg_temp.pk(1)), format('["member","%s","member","mod"]', pg_temp.pk(1)),
          '... its tag in the live list: ["member", pubkey, "member", "mod"]');
SELECT pg_temp.list_is_members(:'c', '... the list names every member with its base role');
SELECT ok(NOT pg_temp.marked(), 'nothing is owed once published');

-- already_assigned, not_member: no change
SELECT is(buzz.assign_role(:'c', pg_temp.pk(1), 'mod'), 'already_assigned', 'the same role again: already_assigned');
SELECT is(buzz.assign_role(:'c', upper(pg_temp.pk(1)), 'mod'), 'already_assigned', '... also with the pubkey in uppercase');
SELECT is(buzz.assign_role(:'c', pg_temp.pk(9), 'mod'), 'not_member', 'a stranger: not_member');
SELECT is(buzz.assign_role(:'other', pg_temp.pk(1), 'elsewhere'), 'not_member', 'a member of another community: not_member');
SELECT ok(NOT pg_temp.marked(), '... no change, nothing owed');
SELECT ok(NOT EXISTS (SELECT FROM buzz_private.relay_members m WHERE m.pubkey = pg_temp.pk(9)),
          '... the stranger did not join');

-- Several roles: ascending by C collation, in the list too
SELECT is(buzz.assign_role(:'c', pg_temp.pk(2), 'a') || buzz.assign_role(:'c', upper(pg_temp.pk(2)), '_z')
          || buzz.assign_role(:'c', pg_temp.pk(2), '0a') || buzz.assign_role(:'c', pg_temp.pk(2), '-x'),
          'assignedassignedassignedassigned', 'four roles given in the order a, _z, 0a, -x');
SELECT is(pg_temp.held(:'c', pg_temp.pk(2)), ARRAY['-x', '0a', '_z', 'a'],
          '... held ascending by C collation: -x < 0a < _z < a');
SELECT is(pg_temp.shapes(), ARRAY[pg_temp.shape(13534, pg_temp.expected_tags(:'c'))], '... one list for all four');
SELECT is(pg_temp.flush(), 1, '... published');
SELECT is(pg_temp.live_tag(:'c', pg_temp.pk(2)), format('["member","%s","member","-x","0a","_z","a"]', pg_temp.pk(2)),
          '... its tag: ["member", pubkey, "member", "-x", "0a", "_z", "a"]');
SELECT is(buzz.assign_role(:'c', pg_temp.pk(2), '0a'), 'already_assigned', '... one of them again: already_assigned');

-- Owners and admins hold defined roles too; base-role changes keep them
SELECT is(buzz.assign_role(:'c', pg_temp.pk(0), 'mod') || buzz.assign_role(:'c', pg_temp.pk(3), 'a'),
          'assignedassigned', 'the owner and an admin are given roles');
SELECT is(pg_temp.flush(), 1, '... published');
SELECT is(pg_temp.live_tag(:'c', pg_temp.pk(0)), format('["member","%s","owner","mod"]', pg_temp.pk(0)),
          '... the owner''s tag: ["member", pubkey, "owner", "mod"]');
SELECT is(pg_temp.live_tag(:'c', pg_temp.pk(3)), format('["member","%s","admin","a"]', pg_temp.pk(3)),
          '... the admin''s tag: ["member", pubkey, "admin", "a"]');
SELECT is(buzz.update_relay_member_role(:'c', pg_temp.pk(1), 'admin'), 'updated', 'a role holder made an admin');
SELECT is(pg_temp.flush(), 1, '... published');
SELECT is(pg_temp.live_tag(:'c', pg_temp.pk(1)), format('["member","%s","admin","mod"]', pg_temp.pk(1)),
          '... keeps its defined role: ["member", pubkey, "admin", "mod"]');
SELECT is(buzz.remove_relay_member(:'c', pg_temp.pk(3)), 'removed', 'a role holder removed ...');
SELECT is(pg_temp.flush(), 2, '... published: the list and the 8001');
SELECT is(buzz.add_relay_member(:'c', pg_temp.pk(3)), 'added', '... and added again');
SELECT is(pg_temp.held(:'c', pg_temp.pk(3)), '{}'::text[], '... holds no role');
SELECT is(pg_temp.flush(), 2, '... published: the list and the 8000');

-- BZIRL: base, undefined and malformed roles, before not_member
SELECT pg_temp.irl(format($$SELECT buzz.assign_role(%L, %L, 'owner')$$, :'c', pg_temp.pk(1)), 'owner: BZIRL');
SELECT pg_temp.irl(format($$SELECT buzz.assign_role(%L, %L, 'admin')$$, :'c', pg_temp.pk(2)), 'admin: BZIRL');
SELECT pg_temp.irl(format($$SELECT buzz.assign_role(%L, %L, 'member')$$, :'c', pg_temp.pk(2)), 'member: BZIRL');
SELECT pg_temp.irl(format($$SELECT buzz.assign_role(%L, %L, 'ghost')$$, :'c', pg_temp.pk(2)),
                   'a role the community has not defined: BZIRL');
SELECT pg_temp.irl(format($$SELECT buzz.assign_role(%L, %L, 'elsewhere')$$, :'c', pg_temp.pk(2)),
                   '... also one another community defines');
SELECT pg_temp.irl(format($$SELECT buzz.assign_role(%L, %L, 'Mod')$$, :'c', pg_temp.pk(2)),
                   'an uppercase role id: BZIRL (not lower-cased)');
SELECT pg_temp.irl(format($$SELECT buzz.assign_role(%L, %L, %L)$$, :'c', pg_temp.pk(2), repeat('a', 65)),
                   'a role id of 65 characters: BZIRL');
SELECT pg_temp.irl(format($$SELECT buzz.assign_role(%L, %L, 'a b')$$, :'c', pg_temp.pk(2)), 'a space in the role id: BZIRL');
SELECT pg_temp.irl(format($$SELECT buzz.assign_role(%L, %L, '')$$, :'c', pg_temp.pk(2)), 'an empty role id: BZIRL');
SELECT pg_temp.irl(format($$SELECT buzz.assign_role(%L, %L, NULL)$$, :'c', pg_temp.pk(2)), 'a NULL role id: BZIRL');
SELECT pg_temp.irl(format($$SELECT buzz.assign_role(%L, %L, 'ghost')$$, :'c', pg_temp.pk(9)),
                   'an undefined role for a stranger: BZIRL (before not_member)');
SELECT pg_temp.irl(format($$SELECT buzz.assign_role(%L, %L, 'owner')$$, :'c', pg_temp.pk(9)),
                   'a base role for a stranger: BZIRL (before not_member)');
SELECT pg_temp.irl(format($$SELECT buzz.assign_role(%L, %L, 'Bad!')$$, :'c', pg_temp.pk(9)),
                   'a malformed role for a stranger: BZIRL (before not_member)');

-- BZIPK
SELECT throws_ok(format($$SELECT buzz.assign_role(%L, NULL, 'mod')$$, :'c'), 'BZIPK', NULL, 'a NULL pubkey: BZIPK');
SELECT throws_ok(format($$SELECT buzz.assign_role(%L, %L, 'mod')$$, :'c', left(pg_temp.pk(1), 63)), 'BZIPK', NULL,
                 'a pubkey of 63 hex characters: BZIPK');
SELECT throws_ok(format($$SELECT buzz.assign_role(%L, %L, 'mod')$$, :'c', 'npub1' || repeat('q', 59)), 'BZIPK', NULL,
                 'an npub: BZIPK');

-- BZNCM, BZARC
SELECT throws_ok(format($$SELECT buzz.assign_role(NULL, %L, 'mod')$$, pg_temp.pk(1)), 'BZNCM', NULL, 'a NULL community: BZNCM');
SELECT throws_ok(format($$SELECT buzz.assign_role(%L, %L, 'mod')$$, gen_random_uuid(), pg_temp.pk(1)), 'BZNCM', NULL,
                 'an unknown community: BZNCM');
SELECT throws_ok(format($$SELECT buzz.assign_role(%L, %L, 'mod')$$, :'archived', pg_temp.pk(0)), 'BZARC', NULL,
                 'an archived community: BZARC');
SELECT throws_ok(format($$SELECT buzz.assign_role(%L, %L, 'mod')$$, :'archived', pg_temp.pk(1)), 'BZARC', NULL,
                 '... also when it would answer already_assigned');
SELECT is(pg_temp.held(:'archived', pg_temp.pk(0)), '{}'::text[], '... the archived community is unchanged');
SELECT ok(NOT pg_temp.marked(), 'the failed calls owe nothing');

-- BZISO (the transaction at the top)
SELECT is(:'iso_repeatable_read'::text, 'BZISO', 'under REPEATABLE READ: BZISO');

-- privileges
SET LOCAL ROLE buzz_writer;
SELECT is(buzz.assign_role(:'c', pg_temp.pk(3), 'mod'), 'assigned', 'buzz_writer may assign a role');
SELECT is(pg_temp.flush(), 1, '... and publish its list');
RESET ROLE;
SET LOCAL ROLE buzz_reader;
SELECT throws_ok(format($$SELECT buzz.assign_role(%L, %L, 'a')$$, :'c', pg_temp.pk(3)), '42501', NULL,
                 'buzz_reader may not assign a role');
RESET ROLE;
CREATE ROLE buzz_pgtap_nobody_assign_role NOLOGIN;
-- Only the schema: the refusal must come from EXECUTE not being granted to PUBLIC.
GRANT USAGE ON SCHEMA buzz TO buzz_pgtap_nobody_assign_role;
SET LOCAL ROLE buzz_pgtap_nobody_assign_role;
SELECT throws_ok(format($$SELECT buzz.assign_role(%L, %L, 'a')$$, :'c', pg_temp.pk(3)), '42501', NULL,
                 'a role without grants may not assign a role');
RESET ROLE;

SELECT is((buzz.member_list(:'c') -> 'tags')::text, pg_temp.expected_tags(:'c'),
          'in the end the live list is exactly the members and the roles they hold');
SELECT is_empty(format('SELECT * FROM buzz.member_list_drift(%L)', :'c'), '... no drift');

SELECT * FROM finish();
ROLLBACK;
