-- buzz.take_rate(p_scope text, p_keys text[], p_limit integer, p_seconds integer) -> boolean
-- buzz.rate_reached(p_scope text, p_keys text[], p_limit integer, p_seconds integer) -> boolean
-- A sliding window per (scope, key): hits counted up to the limit, on every key of a call or
-- none; a hit leaves the window once p_seconds have passed; scopes apart; the rows bounded
-- (at most the limit of hits kept, two expired rows deleted per call, never a live one); bad
-- input (22023) changing nothing; who may call them.
BEGIN;
\ir lib/fixtures.sql

-- (scope, key, hits) of every window, sorted.
CREATE FUNCTION pg_temp.windows() RETURNS text[] LANGUAGE sql
RETURN (SELECT coalesce(array_agg(w.scope || ' ' || w.key || ' ' || pg_catalog.cardinality(w.hits)
                                  ORDER BY w.scope, w.key), '{}')
        FROM buzz_private.rate_windows w);
-- Every hit (and expiry) of a scope moved p_seconds into the past.
CREATE FUNCTION pg_temp.age(p_scope text, p_seconds integer) RETURNS void LANGUAGE sql
BEGIN ATOMIC
    UPDATE buzz_private.rate_windows
    SET hits = ARRAY(SELECT h - make_interval(secs => p_seconds) FROM unnest(hits) h),
        expires_at = expires_at - make_interval(secs => p_seconds)
    WHERE scope = p_scope;
END;
CREATE FUNCTION pg_temp.throws(p_function text, p_args text, p_description text)
RETURNS text LANGUAGE sql
RETURN throws_ok(format('SELECT buzz.%s(%s)', p_function, p_args), '22023', NULL, p_description);

SELECT plan(35);

SELECT function_returns('buzz', 'take_rate', ARRAY['text', 'text[]', 'integer', 'integer'],
                        'boolean', 'take_rate returns boolean');
SELECT function_returns('buzz', 'rate_reached', ARRAY['text', 'text[]', 'integer', 'integer'],
                        'boolean', 'rate_reached returns boolean');

-- Up to the limit, then refused, counting nothing
SELECT ok(buzz.take_rate('invite', '{alice}', 2, 3600), 'a first hit is counted');
SELECT ok(NOT buzz.rate_reached('invite', '{alice}', 2, 3600), '... the limit is not reached yet');
SELECT ok(buzz.take_rate('invite', '{alice}', 2, 3600), 'a second hit, the limit, is counted');
SELECT ok(buzz.rate_reached('invite', '{alice}', 2, 3600), '... now the limit is reached');
SELECT ok(NOT buzz.take_rate('invite', '{alice}', 2, 3600), 'a third is refused');
SELECT is(pg_temp.windows(), ARRAY['invite alice 2'], '... and not counted');
SELECT ok(buzz.take_rate('invite', '{alice}', 3, 3600), 'a larger limit counts it');
SELECT ok(buzz.take_rate('invite', '{bob}', 2, 3600), 'another key has a window of its own');
SELECT ok(buzz.take_rate('failed_claim', '{alice}', 1, 600), '... and so has another scope');

-- Several keys: all counted, or none
SELECT ok(buzz.take_rate('failed_claim', '{pubkey:p,address:a}', 2, 600), 'two keys: both counted');
SELECT ok(buzz.take_rate('failed_claim', '{address:a}', 2, 600), 'one of them again: its limit');
SELECT ok(buzz.rate_reached('failed_claim', '{pubkey:p,address:a}', 2, 600),
          'rate_reached when any key has reached it');
SELECT ok(NOT buzz.take_rate('failed_claim', '{pubkey:p,address:a}', 2, 600),
          'two keys, one at its limit: refused');
SELECT is(pg_temp.windows(),
          ARRAY['failed_claim address:a 2', 'failed_claim alice 1', 'failed_claim pubkey:p 1',
                'invite alice 3', 'invite bob 1'],
          '... and neither counted');
SELECT ok(buzz.take_rate('failed_claim', '{pubkey:p,pubkey:p}', 2, 600),
          'a key named twice is counted once');
SELECT is((SELECT cardinality(hits) FROM buzz_private.rate_windows WHERE key = 'pubkey:p'), 2,
          '... once');

-- The window slides
SELECT pg_temp.age('failed_claim', 599);
SELECT ok(buzz.rate_reached('failed_claim', '{address:a}', 2, 600), 'within the window: still reached');
SELECT pg_temp.age('failed_claim', 1);
SELECT ok(NOT buzz.rate_reached('failed_claim', '{address:a}', 2, 600), 'once it has passed: not');
SELECT ok(buzz.take_rate('failed_claim', '{address:a}', 2, 600), '... and a hit is counted again');
SELECT is((SELECT cardinality(hits) FROM buzz_private.rate_windows WHERE key = 'address:a'), 1,
          '... the old hits dropped from its row: a row holds at most the limit');

-- Bounded: each call deletes up to two expired rows, oldest first, never a live one
DELETE FROM buzz_private.rate_windows;
INSERT INTO buzz_private.rate_windows (scope, key, hits, expires_at)
SELECT 'invite', 'old' || n, ARRAY[now() - interval '2 hours'], now() - interval '1 hour' - n * interval '1 s'
FROM generate_series(1, 5) n;
INSERT INTO buzz_private.rate_windows VALUES ('invite', 'live', ARRAY[now()], now() + interval '1 hour');
SELECT ok(buzz.take_rate('invite', '{new}', 1, 60), 'a call among five expired rows');
SELECT is(pg_temp.windows(),
          ARRAY['invite live 1', 'invite new 1', 'invite old1 1', 'invite old2 1', 'invite old3 1'],
          '... deleted the two oldest expired rows, and kept the live one');
SELECT ok(NOT buzz.rate_reached('invite', '{old1}', 1, 60), 'rate_reached deletes nothing');
SELECT is(cardinality(pg_temp.windows()), 5, '... the rows are as they were');

-- Bad input: 22023, nothing changed
SELECT pg_temp.throws('take_rate', $$'Invite', '{a}', 1, 60$$, 'a scope not of a-z and _');
SELECT pg_temp.throws('take_rate', $$'invite', '{}', 1, 60$$, 'no key');
SELECT pg_temp.throws('rate_reached', $$'invite', ARRAY['a', NULL], 1, 60$$, 'a NULL key');
SELECT pg_temp.throws('take_rate', $$'invite', ARRAY[repeat('k', 201)], 1, 60$$, 'a key of 201 characters');
SELECT pg_temp.throws('take_rate', $$'invite', '{a}', 0, 60$$, 'a limit of 0');
SELECT pg_temp.throws('take_rate', $$'invite', '{a}', 1, 86401$$, 'a window over a day');
SELECT is(cardinality(pg_temp.windows()), 5, 'the refused calls changed nothing');

-- Who may call them
SET LOCAL ROLE buzz_writer;
SELECT ok(buzz.take_rate('invite', '{writer}', 1, 60), 'buzz_writer may count');
SET LOCAL ROLE buzz_reader;
SELECT throws_ok($$SELECT buzz.rate_reached('invite', '{writer}', 1, 60)$$, '42501', NULL,
                 'buzz_reader may not read the windows');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
