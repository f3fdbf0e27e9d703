-- buzz.join_requests(p_community uuid)
--   -> TABLE(request_id text, pubkey text, note text, requested_at timestamptz)
-- The pending requests, oldest first (ties by request id); neither rejected nor expired ones
-- (over 30 days, even before a sweep); not another community's; an archived community's
-- still read; none for an unknown or NULL community; and who may call it (buzz_reader and
-- buzz_writer, nobody else).
BEGIN;
\ir lib/fixtures.sql

CREATE FUNCTION pg_temp.ev(n integer) RETURNS text LANGUAGE sql IMMUTABLE
RETURN encode(sha256(convert_to('request ' || n, 'UTF8')), 'hex');

SELECT plan(16);

SELECT function_returns('buzz', 'join_requests', ARRAY['uuid'], 'setof record',
                        'join_requests returns a table');
SELECT is((SELECT array_agg(x ORDER BY n) FROM unnest((SELECT p.proargnames FROM pg_proc p
           WHERE p.oid = 'buzz.join_requests(uuid)'::regprocedure)) WITH ORDINALITY AS t (x, n)),
          ARRAY['p_community', 'request_id', 'pubkey', 'note', 'requested_at'],
          '... of request_id, pubkey, note and requested_at');

SELECT pg_temp.community() AS c \gset
SELECT pg_temp.community('other.example.org') AS other \gset
SELECT buzz.set_join_policy(:'c', 'request') AS setup_1 \gset
SELECT buzz.set_join_policy(:'other', 'request') AS setup_2 \gset
SELECT is_empty(format('SELECT * FROM buzz.join_requests(%L)', :'c'), 'no request yet: no rows');

SELECT is(buzz.request_membership(:'c', pg_temp.pk(1), pg_temp.ev(1), 'first')
          || buzz.request_membership(:'c', pg_temp.pk(2), pg_temp.ev(2))
          || buzz.request_membership(:'c', pg_temp.pk(3), pg_temp.ev(3), E'third\nnote')
          || buzz.request_membership(:'c', pg_temp.pk(4), pg_temp.ev(4))
          || buzz.request_membership(:'c', pg_temp.pk(5), pg_temp.ev(5))
          || buzz.request_membership(:'other', pg_temp.pk(6), pg_temp.ev(6)),
          repeat('requested', 6), 'setup: five requests, one in another community');
-- Their ages: 3 is the oldest, then 1; 2, 4 and 5 were made at once (ties by request id).
UPDATE buzz_private.join_requests SET requested_at = now() - interval '3 days' WHERE pubkey = pg_temp.pk(3);
UPDATE buzz_private.join_requests SET requested_at = now() - interval '2 days' WHERE pubkey = pg_temp.pk(1);
SELECT results_eq(format('SELECT r.request_id, r.pubkey, r.note FROM buzz.join_requests(%L) r', :'c'),
                  format($$SELECT * FROM (VALUES (%L, %L, E'third\nnote'), (%L, %L, 'first')) AS v (i, p, n)
                           UNION ALL
                           SELECT * FROM (SELECT * FROM (VALUES (%L, %L, NULL::text), (%L, %L, NULL), (%L, %L, NULL))
                                          AS w (i, p, n) ORDER BY w.i COLLATE "C") AS x$$,
                         pg_temp.ev(3), pg_temp.pk(3), pg_temp.ev(1), pg_temp.pk(1), pg_temp.ev(2), pg_temp.pk(2),
                         pg_temp.ev(4), pg_temp.pk(4), pg_temp.ev(5), pg_temp.pk(5)),
                  'the pending requests, oldest first, ties by request id, with their notes; not the other community''s');
SELECT is((SELECT r.requested_at FROM buzz.join_requests(:'c') r WHERE r.pubkey = pg_temp.pk(1)),
          now() - interval '2 days', '... and when each was made');

SELECT is(buzz.reject_join_request(:'c', pg_temp.ev(2)), 'rejected', 'one rejected');
SELECT ok(NOT EXISTS (SELECT FROM buzz.join_requests(:'c') r WHERE r.pubkey = pg_temp.pk(2)), '... is not listed');
UPDATE buzz_private.join_requests SET requested_at = now() - interval '30 days 1 second' WHERE pubkey = pg_temp.pk(4);
SELECT ok(NOT EXISTS (SELECT FROM buzz.join_requests(:'c') r WHERE r.pubkey = pg_temp.pk(4)),
          'one over 30 days old is not listed, though not swept yet');
SELECT is(buzz.archive_community(:'other'), 'archived', 'the other community archived');
SELECT results_eq(format('SELECT r.pubkey FROM buzz.join_requests(%L) r', :'other'), format('VALUES (%L)', pg_temp.pk(6)),
                  '... its pending request is still read');
SELECT is_empty(format('SELECT * FROM buzz.join_requests(%L)', gen_random_uuid()), 'an unknown community: no rows');
SELECT is_empty('SELECT * FROM buzz.join_requests(NULL)', 'a NULL community: no rows');

-- Who may call it
SET LOCAL ROLE buzz_reader;
SELECT is((SELECT count(*) FROM buzz.join_requests(:'c')), 3::bigint, 'buzz_reader may read the requests');
SET LOCAL ROLE buzz_writer;
SELECT is((SELECT count(*) FROM buzz.join_requests(:'c')), 3::bigint, 'buzz_writer may');
RESET ROLE;
CREATE ROLE buzz_pgtap_nobody_join_requests NOLOGIN;
-- Only the schema: the refusal must come from EXECUTE not being granted to PUBLIC.
GRANT USAGE ON SCHEMA buzz TO buzz_pgtap_nobody_join_requests;
SET LOCAL ROLE buzz_pgtap_nobody_join_requests;
SELECT throws_ok(format('SELECT * FROM buzz.join_requests(%L)', :'c'), '42501', NULL, 'a role without grants may not');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
