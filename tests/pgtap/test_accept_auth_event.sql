-- buzz.accept_auth_event(p_event_id text, p_fresh_until timestamptz) -> boolean
-- A NIP-98 authorization accepted once: true the first time, false after (uppercase is the
-- same id); kept until p_fresh_until, then deleted by later calls, two at a time, oldest first;
-- bad input (22023) changing nothing; who may call it.
BEGIN;
\ir lib/fixtures.sql

CREATE FUNCTION pg_temp.kept() RETURNS text[] LANGUAGE sql
RETURN (SELECT coalesce(array_agg(left(a.event_id, 4) ORDER BY a.event_id), '{}')
        FROM buzz_private.accepted_auth_events a);
CREATE FUNCTION pg_temp.throws(p_args text, p_description text) RETURNS text LANGUAGE sql
RETURN throws_ok(format('SELECT buzz.accept_auth_event(%s)', p_args), '22023', NULL, p_description);

SELECT plan(13);

SELECT function_returns('buzz', 'accept_auth_event', ARRAY['text', 'timestamp with time zone'], 'boolean',
                        'accept_auth_event returns boolean');
SELECT ok(buzz.accept_auth_event(repeat('a', 64), now() + interval '61 s'), 'accepted the first time');
SELECT ok(NOT buzz.accept_auth_event(repeat('a', 64), now() + interval '61 s'), 'a replay is not');
SELECT ok(NOT buzz.accept_auth_event(repeat('A', 64), now() + interval '61 s'),
          '... nor the same id in uppercase');
SELECT ok(buzz.accept_auth_event(repeat('b', 64), now() + interval '61 s'), 'another id is');

-- Expired ones go, two per call, oldest first; a live one stays
INSERT INTO buzz_private.accepted_auth_events
SELECT repeat(n::text, 64), now() - n * interval '1 s' FROM generate_series(1, 3) n;
SELECT ok(buzz.accept_auth_event(repeat('c', 64), now() + interval '61 s'), 'a call among three expired ones');
SELECT is(pg_temp.kept(), ARRAY['1111', 'aaaa', 'bbbb', 'cccc'],
          '... deleted the two oldest (3 and 2 s ago) and kept the live ones');
SELECT ok(NOT buzz.accept_auth_event(repeat('a', 64), now() + interval '61 s'),
          'a replay deletes expired ones too, and is still refused');
SELECT is(pg_temp.kept(), ARRAY['aaaa', 'bbbb', 'cccc'], '... the last expired one is gone');

-- Bad input
SELECT pg_temp.throws($$'xyz', now()$$, 'not an event id');
SELECT pg_temp.throws($$repeat('d', 64), NULL$$, 'no time');
SELECT pg_temp.throws($$repeat('d', 64), now() + interval '2 days'$$, 'a time beyond a day');

SET LOCAL ROLE buzz_reader;
SELECT throws_ok($$SELECT buzz.accept_auth_event(repeat('e', 64), now())$$, '42501', NULL,
                 'buzz_reader may not call it');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
