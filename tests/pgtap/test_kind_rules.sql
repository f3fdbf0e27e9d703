-- buzz.allow_kind(p_community uuid, p_kind integer) -> text
-- buzz.disallow_kind(p_community uuid, p_kind integer) -> text
-- buzz.clear_kind_rule(p_community uuid, p_kind integer) -> text
-- buzz.kind_rules(p_community uuid) -> TABLE(kind integer, allowed boolean)
-- A kind is allowed, disallowed or neither, and each call moves it there: updated, or
-- unchanged when it was there; per community, no list owed; bad input (22023, BZNCM, BZARC)
-- changing nothing; NOTIFY buzz_moderation at the commit of a change, never for a no-op or a
-- rollback; who may call them.
BEGIN;
\ir lib/fixtures.sql
\ir lib/moderation.sql

-- The rules as 'kind:allowed' / 'kind:disallowed', by kind.
CREATE FUNCTION pg_temp.rules(p_community uuid) RETURNS text[] LANGUAGE sql
RETURN (SELECT coalesce(array_agg(k.kind || CASE WHEN k.allowed THEN ':allowed' ELSE ':disallowed' END
                                  ORDER BY k.kind), '{}')
        FROM buzz.kind_rules(p_community) k);
CREATE FUNCTION pg_temp.throws(p_function text, p_args text, p_code text, p_description text)
RETURNS text LANGUAGE sql
RETURN throws_ok(format('SELECT buzz.%s(%s)', p_function, p_args), p_code, NULL, p_description);

SELECT plan(46);

SELECT function_returns('buzz', f, ARRAY['uuid', 'integer'], 'text', f || ' returns text')
FROM unnest(ARRAY['allow_kind', 'disallow_kind', 'clear_kind_rule']) f;
SELECT function_returns('buzz', 'kind_rules', ARRAY['uuid'], 'setof record', 'kind_rules returns rows');

SELECT pg_temp.community() AS c \gset
SELECT pg_temp.community('other.example.org') AS other \gset
SELECT pg_temp.community('archived.example.org') AS archived \gset
SELECT buzz.disallow_kind(:'archived', 4) AS setup_rule \gset
SELECT buzz.archive_community(:'archived') AS setup_archive \gset
SELECT is(pg_temp.rules(:'c'), '{}'::text[], 'a new community rules no kind');

-- Each call moves the kind
SELECT is(buzz.allow_kind(:'c', 1), 'updated', 'allow_kind of a kind that was neither: updated');
SELECT is(buzz.allow_kind(:'c', 1), 'unchanged', '... again: unchanged');
SELECT is(buzz.disallow_kind(:'c', 7), 'updated', 'disallow_kind of a kind that was neither: updated');
SELECT is(buzz.disallow_kind(:'c', 7), 'unchanged', '... again: unchanged');
SELECT is(pg_temp.rules(:'c'), ARRAY['1:allowed', '7:disallowed'], '... listed by kind');
SELECT ok(NOT pg_temp.marked(), '... no list owed: not a membership write');
SELECT is(buzz.disallow_kind(:'c', 1), 'updated', 'disallow_kind of an allowed kind: updated');
SELECT is(buzz.allow_kind(:'c', 7), 'updated', 'allow_kind of a disallowed kind: updated');
SELECT is(pg_temp.rules(:'c'), ARRAY['1:disallowed', '7:allowed'], '... each moved to the other list');
SELECT is(buzz.clear_kind_rule(:'c', 1), 'updated', 'clear_kind_rule of a disallowed kind: updated');
SELECT is(buzz.clear_kind_rule(:'c', 7), 'updated', 'clear_kind_rule of an allowed kind: updated');
SELECT is(buzz.clear_kind_rule(:'c', 7), 'unchanged', '... again: unchanged');
SELECT is(buzz.clear_kind_rule(:'c', 30023), 'unchanged', 'clear_kind_rule of a kind never ruled: unchanged');
SELECT is(pg_temp.rules(:'c'), '{}'::text[], '... neither list holds them');
SELECT is(buzz.allow_kind(:'c', 0), 'updated', 'kind 0 may be ruled');
SELECT is(buzz.disallow_kind(:'c', 65535), 'updated', '... and kind 65535');
SELECT is(buzz.allow_kind(:'other', 65535), 'updated', 'another community rules its kinds alone');
SELECT is(pg_temp.rules(:'c'), ARRAY['0:allowed', '65535:disallowed'], '... this one''s unchanged by it');
SELECT is(pg_temp.rules(:'other'), ARRAY['65535:allowed'], '... and its own');
SELECT is(pg_temp.rules(:'archived'), ARRAY['4:disallowed'], 'an archived community''s rules are listed');
SELECT ok(NOT pg_temp.marked(), 'no list owed by any of it');

-- Reads of an unknown community
SELECT is_empty(format('SELECT * FROM buzz.kind_rules(%L)', gen_random_uuid()),
                'kind_rules of an unknown community: no rows');

-- Errors: nothing changes
SELECT pg_temp.throws(f, format('%L, %s', :'c', k), '22023', format('%s of kind %s: 22023', f, k))
FROM unnest(ARRAY['allow_kind', 'disallow_kind', 'clear_kind_rule']) f,
     unnest(ARRAY['-1', '65536', 'NULL']) k
WHERE f <> 'clear_kind_rule' OR k = '-1';
SELECT pg_temp.throws('allow_kind', format('%L, 1', gen_random_uuid()), 'BZNCM', 'an unknown community: BZNCM');
SELECT pg_temp.throws('disallow_kind', 'NULL, 1', 'BZNCM', 'a NULL community: BZNCM');
SELECT pg_temp.throws('allow_kind', format('%L, 1', :'archived'), 'BZARC', 'an archived community: BZARC');
SELECT pg_temp.throws('clear_kind_rule', format('%L, 4', :'archived'), 'BZARC', '... clear_kind_rule there too');
SELECT ok(pg_temp.rules(:'c') = ARRAY['0:allowed', '65535:disallowed']
          AND pg_temp.rules(:'archived') = ARRAY['4:disallowed'],
          'the refused calls changed nothing');

-- NOTIFY buzz_moderation, delivered at COMMIT
SELECT is(pg_temp.notified(ARRAY[
              pg_temp.step('PERFORM buzz.allow_kind({c}, 1)'),
              pg_temp.step('PERFORM buzz.allow_kind({c}, 1)'),
              pg_temp.step('PERFORM buzz.clear_kind_rule({c}, 2)'),
              pg_temp.rolled_back('PERFORM buzz.disallow_kind({c}, 1)'),
              pg_temp.step('PERFORM buzz.disallow_kind({c}, 1)', 'PERFORM buzz.disallow_kind({c}, 2)'),
              pg_temp.step('PERFORM buzz.clear_kind_rule({c}, 2)')]),
          ARRAY['C', 'C', 'C', 'marker C'],
          'a change that commits is announced with the community id; a no-op and a rollback are '
          'not; two changes in one transaction are one notification');

-- Who may call them
SET LOCAL ROLE buzz_writer;
SELECT is(buzz.allow_kind(:'other', 1), 'updated', 'buzz_writer may allow');
SELECT is(buzz.disallow_kind(:'other', 2), 'updated', '... disallow');
SELECT is(buzz.clear_kind_rule(:'other', 1), 'updated', '... and clear');
SET LOCAL ROLE buzz_reader;
SELECT pg_temp.throws('allow_kind', format('%L, 3', :'other'), '42501', 'buzz_reader may not allow');
SELECT pg_temp.throws('clear_kind_rule', format('%L, 2', :'other'), '42501', '... nor clear');
SELECT is(pg_temp.rules(:'other'), ARRAY['2:disallowed', '65535:allowed'], '... but may read the rules');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
