-- buzz.ban_event(p_community uuid, p_event_id text, p_reason text DEFAULT NULL,
--                p_banned_by text DEFAULT NULL) -> text
-- buzz.unban_event(p_community uuid, p_event_id text) -> text
-- buzz.banned_events(p_community uuid) -> TABLE(event_id, reason, banned_by, banned_at)
-- Outcomes banned / already_banned and unbanned / not_banned, per community, no list owed;
-- the bound of 10,000 banned events (54000); bad input (22023, BZNCM, BZARC) changing nothing;
-- NOTIFY buzz_moderation at the commit of a change, never for a no-op or a rollback; who may
-- call them.
BEGIN;
\ir lib/fixtures.sql
\ir lib/moderation.sql

CREATE FUNCTION pg_temp.banned(p_community uuid) RETURNS text[] LANGUAGE sql
RETURN (SELECT coalesce(array_agg(b.event_id || ' ' || coalesce(b.reason, '-') || ' '
                                  || coalesce(b.banned_by, '-') ORDER BY b.event_id), '{}')
        FROM buzz.banned_events(p_community) b);
CREATE FUNCTION pg_temp.id(p_digit text) RETURNS text LANGUAGE sql IMMUTABLE
RETURN repeat(p_digit, 64);
CREATE FUNCTION pg_temp.ban_throws(p_args text, p_code text, p_description text)
RETURNS text LANGUAGE sql
RETURN throws_ok(format('SELECT buzz.ban_event(%s)', p_args), p_code, NULL, p_description);
CREATE FUNCTION pg_temp.unban_throws(p_args text, p_code text, p_description text)
RETURNS text LANGUAGE sql
RETURN throws_ok(format('SELECT buzz.unban_event(%s)', p_args), p_code, NULL, p_description);

SELECT plan(47);

SELECT function_returns('buzz', 'ban_event', ARRAY['uuid', 'text', 'text', 'text'], 'text',
                        'ban_event returns text');
SELECT function_returns('buzz', 'unban_event', ARRAY['uuid', 'text'], 'text',
                        'unban_event returns text');
SELECT function_returns('buzz', 'banned_events', ARRAY['uuid'], 'setof record',
                        'banned_events returns rows');

SELECT pg_temp.community() AS c \gset
SELECT pg_temp.community('other.example.org') AS other \gset
SELECT pg_temp.community('archived.example.org') AS archived \gset
SELECT buzz.ban_event(:'archived', pg_temp.id('e')) AS setup_ban \gset
SELECT buzz.archive_community(:'archived') AS setup_archive \gset

-- banned
SELECT is(buzz.ban_event(:'c', pg_temp.id('b'), 'spam', pg_temp.pk(0)), 'banned', 'an event: banned');
SELECT is(buzz.ban_event(:'c', upper(pg_temp.id('a'))), 'banned', 'an id in uppercase, no reason: banned');
SELECT is(pg_temp.banned(:'c'),
          ARRAY[pg_temp.id('a') || ' - -', pg_temp.id('b') || ' spam ' || pg_temp.pk(0)],
          '... both listed by id, lowercased, with their reasons and who banned');
SELECT ok(NOT pg_temp.marked(), '... no list owed: not a membership write');
SELECT is(buzz.ban_event(:'c', pg_temp.id('b'), 'another reason'), 'already_banned',
          'banned again: already_banned');
SELECT is(pg_temp.banned(:'c'),
          ARRAY[pg_temp.id('a') || ' - -', pg_temp.id('b') || ' spam ' || pg_temp.pk(0)],
          '... the first reason kept');
SELECT is(buzz.ban_event(:'c', pg_temp.id('c'), '', 'moderation bot'), 'banned',
          'an empty reason is none; a label says who banned');
SELECT is((SELECT b.reason IS NULL AND b.banned_by = 'moderation bot' AND b.banned_at = now()
           FROM buzz.banned_events(:'c') b WHERE b.event_id = pg_temp.id('c')), true,
          '... kept so, with the time of the ban');
SELECT is(pg_temp.banned(:'other'), '{}'::text[], 'another community bans nothing of it');
SELECT is(buzz.ban_event(:'other', pg_temp.id('b')), 'banned', '... and may ban the same id');
SELECT is(pg_temp.banned(:'archived'), ARRAY[pg_temp.id('e') || ' - -'],
          'an archived community''s bans are listed');

-- unbanned
SELECT is(buzz.unban_event(:'c', upper(pg_temp.id('b'))), 'unbanned', 'unban (uppercase id): unbanned');
SELECT is(pg_temp.banned(:'c'), ARRAY[pg_temp.id('a') || ' - -', pg_temp.id('c') || ' - moderation bot'],
          '... no longer banned');
SELECT is(pg_temp.banned(:'other'), ARRAY[pg_temp.id('b') || ' - -'], '... still banned in the other community');
SELECT is(buzz.unban_event(:'c', pg_temp.id('b')), 'not_banned', 'unban again: not_banned');
SELECT is(buzz.unban_event(:'c', pg_temp.id('9')), 'not_banned', 'an id never banned: not_banned');
SELECT ok(NOT pg_temp.marked(), '... no list owed');

-- Reads of an unknown community
SELECT is_empty(format('SELECT * FROM buzz.banned_events(%L)', gen_random_uuid()),
                'banned_events of an unknown community: no rows');
SELECT is_empty('SELECT * FROM buzz.banned_events(NULL)', '... nor of NULL');

-- The bound: 10,000 banned events per community
INSERT INTO buzz_private.banned_events (community_id, event_id)
SELECT :'c', encode(sha256(convert_to('event ' || i, 'UTF8')), 'hex') FROM generate_series(1, 9997) i;
SELECT is(buzz.ban_event(:'c', pg_temp.id('d')), 'banned', 'the 10,000th ban: banned');
SELECT pg_temp.ban_throws(format('%L, %L', :'c', pg_temp.id('f')), '54000', 'the 10,001st: 54000');
SELECT is(buzz.ban_event(:'c', pg_temp.id('d')), 'already_banned', '... banning one of them again: already_banned');
SELECT is(buzz.ban_event(:'other', pg_temp.id('f')), 'banned', '... another community is not bounded by it');
SELECT is(buzz.unban_event(:'c', pg_temp.id('d')), 'unbanned', 'unbanning one ...');
SELECT is(buzz.ban_event(:'c', pg_temp.id('f')), 'banned', '... makes room for another');
DELETE FROM buzz_private.banned_events b
WHERE b.community_id = :'c' AND b.event_id NOT IN (pg_temp.id('a'), pg_temp.id('c'), pg_temp.id('f'));

-- Errors: nothing changes
SELECT pg_temp.ban_throws(format('%L, NULL', :'c'), '22023', 'a NULL event id: 22023');
SELECT pg_temp.ban_throws(format('%L, %L', :'c', repeat('a', 63)), '22023', 'an id of 63 characters: 22023');
SELECT pg_temp.ban_throws(format('%L, %L', :'c', repeat('g', 64)), '22023', 'an id that is not hex: 22023');
SELECT pg_temp.ban_throws(format('%L, %L, %L', :'c', pg_temp.id('1'), repeat('r', 1001)), '22023',
                          'a reason of 1,001 characters: 22023');
SELECT pg_temp.ban_throws(format('%L, %L, %L', :'c', pg_temp.id('1'), E'bell\x07'), '22023',
                          'a reason with a control character: 22023');
SELECT pg_temp.ban_throws(format('%L, %L, NULL, %L', :'c', pg_temp.id('1'), repeat('x', 65)), '22023',
                          'banned_by of 65 characters: 22023');
SELECT pg_temp.ban_throws(format('%L, %L', gen_random_uuid(), pg_temp.id('1')), 'BZNCM', 'an unknown community: BZNCM');
SELECT pg_temp.ban_throws(format('NULL, %L', pg_temp.id('1')), 'BZNCM', 'a NULL community: BZNCM');
SELECT pg_temp.ban_throws(format('%L, %L', :'archived', pg_temp.id('1')), 'BZARC', 'an archived community: BZARC');
SELECT pg_temp.unban_throws(format('%L, %L', :'c', 'not an id'), '22023', 'unban of a malformed id: 22023');
SELECT pg_temp.unban_throws(format('%L, %L', :'archived', pg_temp.id('e')), 'BZARC', 'unban in an archived community: BZARC');
SELECT is(pg_temp.banned(:'c'), ARRAY[pg_temp.id('a') || ' - -', pg_temp.id('c') || ' - moderation bot',
                                      pg_temp.id('f') || ' - -'],
          'the refused calls changed nothing');

-- NOTIFY buzz_moderation, delivered at COMMIT
SELECT is(pg_temp.notified(ARRAY[
              pg_temp.step(format('PERFORM buzz.ban_event({c}, %L)', pg_temp.id('a'))),
              pg_temp.step(format('PERFORM buzz.ban_event({c}, %L)', pg_temp.id('a'))),
              pg_temp.rolled_back(format('PERFORM buzz.ban_event({c}, %L)', pg_temp.id('b'))),
              pg_temp.step(format('PERFORM buzz.ban_event({c}, %L)', pg_temp.id('b')),
                           format('PERFORM buzz.ban_event({c}, %L)', pg_temp.id('c'))),
              pg_temp.step(format('PERFORM buzz.unban_event({c}, %L)', pg_temp.id('9'))),
              pg_temp.step(format('PERFORM buzz.unban_event({c}, %L)', pg_temp.id('a')))]),
          ARRAY['C', 'C', 'C', 'marker C'],
          'a ban and an unban that commit are announced with the community id; a no-op and a '
          'rollback are not; two bans in one transaction are one notification');

-- Who may call them
SET LOCAL ROLE buzz_writer;
SELECT is(buzz.ban_event(:'other', pg_temp.id('7')), 'banned', 'buzz_writer may ban');
SELECT is(buzz.unban_event(:'other', pg_temp.id('7')), 'unbanned', '... and unban');
SET LOCAL ROLE buzz_reader;
SELECT pg_temp.ban_throws(format('%L, %L', :'other', pg_temp.id('7')), '42501', 'buzz_reader may not ban');
SELECT pg_temp.unban_throws(format('%L, %L', :'other', pg_temp.id('b')), '42501', '... nor unban');
SELECT is(pg_temp.banned(:'other'), ARRAY[pg_temp.id('b') || ' - -', pg_temp.id('f') || ' - -'],
          '... but may read the bans');
RESET ROLE;
CREATE ROLE buzz_pgtap_nobody_ban_event NOLOGIN;
GRANT USAGE ON SCHEMA buzz TO buzz_pgtap_nobody_ban_event;
SET LOCAL ROLE buzz_pgtap_nobody_ban_event;
SELECT throws_ok(format('SELECT * FROM buzz.banned_events(%L)', :'other'), '42501', NULL,
                 'a role without grants may not read them');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
