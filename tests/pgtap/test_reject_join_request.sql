-- buzz.reject_join_request(p_community uuid, p_request_id text, p_reason text DEFAULT NULL)
--   -> text
-- Outcomes rejected (kept with its reason, no longer pending, its pubkey answered 'rejected')
-- and not_found (unknown, another community's, already rejected or approved, expired); never
-- a list; p_request_id and p_reason (at most 1000 characters, line breaks allowed) bounds;
-- 22023, BZNCM, BZARC with nothing changed; and who may call it.
BEGIN;
\ir lib/fixtures.sql

CREATE FUNCTION pg_temp.ev(n integer) RETURNS text LANGUAGE sql IMMUTABLE
RETURN encode(sha256(convert_to('request ' || n, 'UTF8')), 'hex');
CREATE FUNCTION pg_temp.rejection(p_community uuid, p_request_id text)
RETURNS TABLE (rejected boolean, reason text) LANGUAGE sql
BEGIN ATOMIC
    SELECT r.rejected_at = now(), r.rejection_reason FROM buzz_private.join_requests r
    WHERE r.community_id = p_community AND r.request_id = p_request_id;
END;
CREATE FUNCTION pg_temp.pending(p_community uuid) RETURNS text[] LANGUAGE sql
RETURN (SELECT coalesce(array_agg(r.request_id ORDER BY r.request_id COLLATE "C"), '{}')
        FROM buzz.join_requests(p_community) r);
CREATE FUNCTION pg_temp.reject_throws(p_args text, p_code text, p_description text)
RETURNS text LANGUAGE sql
RETURN throws_ok(format('SELECT buzz.reject_join_request(%s)', p_args), p_code, NULL, p_description);

SELECT plan(37);

SELECT function_returns('buzz', 'reject_join_request', ARRAY['uuid', 'text', 'text'], 'text',
                        'reject_join_request returns text');

SELECT pg_temp.community() AS c \gset
SELECT pg_temp.community('other.example.org') AS other \gset
SELECT pg_temp.community('archived.example.org') AS archived \gset
SELECT buzz.set_join_policy(:'c', 'request') AS setup_1 \gset
SELECT buzz.set_join_policy(:'other', 'request') AS setup_2 \gset
SELECT buzz.set_join_policy(:'archived', 'request') AS setup_3 \gset
SELECT is(buzz.request_membership(:'c', pg_temp.pk(1), pg_temp.ev(1))
          || buzz.request_membership(:'c', pg_temp.pk(2), pg_temp.ev(2))
          || buzz.request_membership(:'c', pg_temp.pk(3), pg_temp.ev(3))
          || buzz.request_membership(:'c', pg_temp.pk(4), pg_temp.ev(4))
          || buzz.request_membership(:'c', pg_temp.pk(5), pg_temp.ev(5))
          || buzz.request_membership(:'c', pg_temp.pk(6), pg_temp.ev(6))
          || buzz.request_membership(:'other', pg_temp.pk(7), pg_temp.ev(7))
          || buzz.request_membership(:'archived', pg_temp.pk(8), pg_temp.ev(8)),
          repeat('requested', 8), 'setup: six requests, one in another community, one in a community archived next');
SELECT buzz.archive_community(:'archived') AS archive_outcome \gset

-- rejected
SELECT is(buzz.reject_join_request(:'c', pg_temp.ev(1), E'Not now,\nsorry'), 'rejected', 'a pending request: rejected');
SELECT results_eq(format('SELECT * FROM pg_temp.rejection(%L, %L)', :'c', pg_temp.ev(1)),
                  $$VALUES (true, E'Not now,\nsorry')$$, '... kept with when and why');
SELECT ok(NOT (pg_temp.ev(1) = ANY (pg_temp.pending(:'c'))), '... no longer pending');
SELECT ok(NOT pg_temp.marked(), '... not a membership write: no list owed');
SELECT is(buzz.request_membership(:'c', pg_temp.pk(1), pg_temp.ev(11)), 'rejected', '... its pubkey asking again: rejected');
SELECT is(buzz.reject_join_request(:'c', pg_temp.ev(1), 'again'), 'not_found', 'rejecting it again: not_found');
SELECT is((SELECT r.reason FROM pg_temp.rejection(:'c', pg_temp.ev(1)) r), E'Not now,\nsorry', '... the first reason kept');
SELECT is(buzz.reject_join_request(:'c', upper(pg_temp.ev(2))), 'rejected', 'a request id in uppercase, no reason: rejected');
SELECT results_eq(format('SELECT * FROM pg_temp.rejection(%L, %L)', :'c', pg_temp.ev(2)),
                  $$VALUES (true, NULL::text)$$, '... kept without a reason');
SELECT is(buzz.reject_join_request(:'c', pg_temp.ev(3), ''), 'rejected', 'an empty reason: rejected');
SELECT is((SELECT r.reason FROM pg_temp.rejection(:'c', pg_temp.ev(3)) r), NULL, '... kept as no reason');
SELECT is(buzz.reject_join_request(:'c', pg_temp.ev(4), repeat('r', 1000)), 'rejected', 'a reason of 1000 characters');
SELECT is(buzz.approve_join_request(:'c', pg_temp.ev(4), pg_temp.pk(0)), 'not_found', '... a rejected request cannot be approved');

-- not_found
SELECT is(buzz.reject_join_request(:'c', pg_temp.ev(99)), 'not_found', 'an unknown request: not_found');
SELECT is(buzz.reject_join_request(:'c', pg_temp.ev(7)), 'not_found', 'another community''s request: not_found');
SELECT is(pg_temp.pending(:'other'), ARRAY[pg_temp.ev(7)], '... which stays pending there');
SELECT is(buzz.approve_join_request(:'c', pg_temp.ev(5), pg_temp.pk(0)), 'joined', 'a request approved');
SELECT is(pg_temp.flush(), 2, '... published');
SELECT is(buzz.reject_join_request(:'c', pg_temp.ev(5)), 'not_found', '... then rejected: not_found');
SELECT ok(EXISTS (SELECT FROM buzz.relay_members(:'c') m WHERE m.pubkey = pg_temp.pk(5)), '... still a member');
UPDATE buzz_private.join_requests SET requested_at = now() - interval '30 days 1 second'
WHERE community_id = :'c' AND request_id = pg_temp.ev(6);
SELECT is(buzz.reject_join_request(:'c', pg_temp.ev(6)), 'not_found', 'an expired request: not_found');
SELECT ok(NOT pg_temp.marked(), 'no list owed');

-- Arguments and the community
SELECT pg_temp.reject_throws(format('%L, %L, %L', :'other', pg_temp.ev(7), repeat('r', 1001)), '22023',
                             'a reason of 1001 characters: 22023');
SELECT pg_temp.reject_throws(format('%L, %L, %L', :'other', pg_temp.ev(7), E'\x1b[31m'), '22023',
                             'a reason with an escape: 22023');
SELECT pg_temp.reject_throws(format('%L, %L, %L', :'other', pg_temp.ev(7), E'\x7f'), '22023', 'a reason with DEL: 22023');
SELECT pg_temp.reject_throws(format('%L, NULL', :'other'), '22023', 'a NULL request id: 22023');
SELECT pg_temp.reject_throws(format('%L, %L', :'other', pg_temp.ev(7) || 'a'), '22023', 'a request id of 65 characters: 22023');
SELECT pg_temp.reject_throws(format('%L, %L', :'other', 'x' || right(pg_temp.ev(7), 63)), '22023',
                             'a request id with a non-hex character: 22023');
SELECT pg_temp.reject_throws(format('%L, %L', gen_random_uuid(), pg_temp.ev(7)), 'BZNCM', 'an unknown community: BZNCM');
SELECT pg_temp.reject_throws(format('NULL, %L', pg_temp.ev(7)), 'BZNCM', 'a NULL community: BZNCM');
SELECT pg_temp.reject_throws(format('%L, %L', :'archived', pg_temp.ev(8)), 'BZARC', 'an archived community: BZARC');
SELECT ok(pg_temp.pending(:'other') = ARRAY[pg_temp.ev(7)] AND pg_temp.pending(:'archived') = ARRAY[pg_temp.ev(8)],
          'the refused calls rejected nothing');

-- Who may call it
SET LOCAL ROLE buzz_reader;
SELECT pg_temp.reject_throws(format('%L, %L', :'other', pg_temp.ev(7)), '42501', 'buzz_reader may not reject');
RESET ROLE;
CREATE ROLE buzz_pgtap_nobody_reject_join_request NOLOGIN;
-- Only the schema: the refusal must come from EXECUTE not being granted to PUBLIC.
GRANT USAGE ON SCHEMA buzz TO buzz_pgtap_nobody_reject_join_request;
SET LOCAL ROLE buzz_pgtap_nobody_reject_join_request;
SELECT pg_temp.reject_throws(format('%L, %L', :'other', pg_temp.ev(7)), '42501', 'a role without grants may not');
RESET ROLE;
SET LOCAL ROLE buzz_writer;
SELECT is(buzz.reject_join_request(:'other', pg_temp.ev(7), 'no'), 'rejected', 'buzz_writer may reject');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
