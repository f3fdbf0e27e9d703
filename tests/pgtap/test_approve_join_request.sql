-- buzz.approve_join_request(p_community uuid, p_request_id text, p_approved_by text) -> text
-- Outcomes joined (a member added_by the approver, an 8000 and a new list, the request gone),
-- not_found (unknown, another community's, already approved, rejected, expired), already_member
-- (the request gone, members unchanged), banned (nothing changes); approval whatever the
-- policy is now; p_request_id and p_approved_by (required) bounds; 22023, BZNCM, BZARC with
-- nothing changed; and who may call it. BZISO is covered by pytest.
BEGIN;
\ir lib/fixtures.sql

CREATE FUNCTION pg_temp.ev(n integer) RETURNS text LANGUAGE sql IMMUTABLE
RETURN encode(sha256(convert_to('request ' || n, 'UTF8')), 'hex');
CREATE FUNCTION pg_temp.kept(p_community uuid) RETURNS text[] LANGUAGE sql
RETURN (SELECT coalesce(array_agg(r.request_id ORDER BY r.request_id COLLATE "C"), '{}')
        FROM buzz_private.join_requests r WHERE r.community_id = p_community);
CREATE FUNCTION pg_temp.approve_throws(p_args text, p_code text, p_description text)
RETURNS text LANGUAGE sql
RETURN throws_ok(format('SELECT buzz.approve_join_request(%s)', p_args), p_code, NULL, p_description);
CREATE FUNCTION pg_temp.added_by(p_community uuid, p_pubkey text) RETURNS text LANGUAGE sql
RETURN (SELECT m.added_by FROM buzz.relay_members(p_community) m WHERE m.pubkey = p_pubkey);

SELECT plan(56);

SELECT function_returns('buzz', 'approve_join_request', ARRAY['uuid', 'text', 'text'], 'text',
                        'approve_join_request returns text');

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
          || buzz.request_membership(:'c', pg_temp.pk(7), pg_temp.ev(7))
          || buzz.request_membership(:'other', pg_temp.pk(8), pg_temp.ev(8))
          || buzz.request_membership(:'archived', pg_temp.pk(9), pg_temp.ev(9)),
          repeat('requested', 9), 'setup: seven requests, one in another community, one in a community archived next');
SELECT buzz.archive_community(:'archived') AS archive_outcome \gset

-- joined
SELECT is(buzz.approve_join_request(:'c', pg_temp.ev(1), pg_temp.pk(0)), 'joined', 'a pending request approved: joined');
SELECT results_eq(format('SELECT m.role, m.added_by FROM buzz.relay_members(%L) m WHERE m.pubkey = %L', :'c', pg_temp.pk(1)),
                  format($$VALUES ('member', %L)$$, pg_temp.pk(0)), '... a member, added_by the approver');
SELECT ok(NOT (pg_temp.ev(1) = ANY (pg_temp.kept(:'c'))), '... the request is gone');
SELECT ok(pg_temp.marked(), '... the community owes a list');
SELECT pg_temp.events_are($$VALUES (13534, NULL::text), (8000, pg_temp.pk(1))$$, '... a list and an 8000');
SELECT is(pg_temp.flush(), 2, '... published');
SELECT pg_temp.list_is_members(:'c', '... the live list names exactly the members');
SELECT is(buzz.approve_join_request(:'c', pg_temp.ev(1), pg_temp.pk(0)), 'not_found',
          'approving it again: not_found');

SELECT is(buzz.approve_join_request(:'c', upper(pg_temp.ev(2)), 'admin-ui'), 'joined',
          'a request id in uppercase, an approver label: joined');
SELECT is(pg_temp.added_by(:'c', pg_temp.pk(2)), 'admin-ui', '... added_by the label');
SELECT is(buzz.approve_join_request(:'c', pg_temp.ev(3), upper(pg_temp.pk(1))), 'joined',
          'an approver pubkey in uppercase: joined');
SELECT is(pg_temp.added_by(:'c', pg_temp.pk(3)), pg_temp.pk(1), '... added_by the lowercased pubkey');
SELECT pg_temp.events_are($$VALUES (13534, NULL::text), (8000, pg_temp.pk(2)), (8000, pg_temp.pk(3))$$,
                          '... one list and an 8000 each');
SELECT is(pg_temp.flush(), 3, '... published');

-- Whatever the policy is now
SELECT is(buzz.set_join_policy(:'c', 'invite'), 'updated', 'the policy back to invite');
SELECT is(buzz.approve_join_request(:'c', pg_temp.ev(4), pg_temp.pk(0)), 'joined', '... a pending request is still approved');
SELECT is(pg_temp.flush(), 2, '... published');

-- not_found
SELECT is(buzz.approve_join_request(:'c', pg_temp.ev(99), pg_temp.pk(0)), 'not_found', 'an unknown request: not_found');
SELECT is(buzz.approve_join_request(:'c', pg_temp.ev(8), pg_temp.pk(0)), 'not_found', 'another community''s request: not_found');
SELECT is(buzz.reject_join_request(:'c', pg_temp.ev(5)), 'rejected', 'a request rejected');
SELECT is(buzz.approve_join_request(:'c', pg_temp.ev(5), pg_temp.pk(0)), 'not_found', '... then approved: not_found');
UPDATE buzz_private.join_requests SET requested_at = now() - interval '30 days 1 second'
WHERE community_id = :'c' AND request_id = pg_temp.ev(6);
SELECT is(buzz.approve_join_request(:'c', pg_temp.ev(6), pg_temp.pk(0)), 'not_found', 'an expired request: not_found');
SELECT ok(NOT EXISTS (SELECT FROM buzz.relay_members(:'c') m WHERE m.pubkey IN (pg_temp.pk(5), pg_temp.pk(6), pg_temp.pk(8))),
          '... none of them joined');
SELECT is(buzz.approve_join_request(:'other', pg_temp.ev(8), pg_temp.pk(0)), 'joined', '... the other community approves its own');
SELECT is(pg_temp.flush(), 2, '... published');
SELECT ok(NOT pg_temp.marked(), 'not_found owes no list');

-- already_member
SELECT is(buzz.add_relay_member(:'c', pg_temp.pk(7), 'admin'), 'added', 'a requester added by hand, as admin');
SELECT is(pg_temp.flush(), 2, '... published');
SELECT is(buzz.approve_join_request(:'c', pg_temp.ev(7), pg_temp.pk(0)), 'already_member', '... then approved: already_member');
SELECT ok(NOT (pg_temp.ev(7) = ANY (pg_temp.kept(:'c'))), '... the request is gone');
SELECT is((SELECT m.role FROM buzz.relay_members(:'c') m WHERE m.pubkey = pg_temp.pk(7)), 'admin', '... the role unchanged');
SELECT ok(NOT pg_temp.marked(), '... no list owed');

-- banned: only a ban made behind the API can meet a pending request (a ban drops it)
SELECT is(buzz.request_membership(:'other', pg_temp.pk(10), pg_temp.ev(10)), 'requested', 'a new request');
INSERT INTO buzz_private.banned_pubkeys (community_id, pubkey) VALUES (:'other', pg_temp.pk(10));
SELECT is(buzz.approve_join_request(:'other', pg_temp.ev(10), pg_temp.pk(0)), 'banned', '... its pubkey banned by direct SQL: banned');
SELECT ok(pg_temp.ev(10) = ANY (pg_temp.kept(:'other')), '... the request stays');
SELECT ok(NOT EXISTS (SELECT FROM buzz.relay_members(:'other') m WHERE m.pubkey = pg_temp.pk(10))
          AND NOT pg_temp.marked(), '... nobody joined, no list owed');

-- Arguments and the community
SELECT pg_temp.approve_throws(format('%L, %L, NULL', :'other', pg_temp.ev(10)), '22023', 'no approver: 22023');
SELECT pg_temp.approve_throws(format('%L, %L, %L', :'other', pg_temp.ev(10), ''), '22023', 'an empty approver: 22023');
SELECT pg_temp.approve_throws(format('%L, %L, %L', :'other', pg_temp.ev(10), repeat('a', 65)), '22023',
                              'an approver of 65 characters: 22023');
SELECT pg_temp.approve_throws(format('%L, %L, %L', :'other', pg_temp.ev(10), E'a\tb'), '22023',
                              'an approver with a tab: 22023');
SELECT pg_temp.approve_throws(format('%L, NULL, %L', :'other', pg_temp.pk(0)), '22023', 'a NULL request id: 22023');
SELECT pg_temp.approve_throws(format('%L, %L, %L', :'other', left(pg_temp.ev(10), 63), pg_temp.pk(0)), '22023',
                              'a request id of 63 characters: 22023');
SELECT pg_temp.approve_throws(format('%L, %L, %L', :'other', repeat('z', 64), pg_temp.pk(0)), '22023',
                              'a request id with non-hex characters: 22023');
SELECT pg_temp.approve_throws(format('%L, %L, %L', gen_random_uuid(), pg_temp.ev(10), pg_temp.pk(0)), 'BZNCM',
                              'an unknown community: BZNCM');
SELECT pg_temp.approve_throws(format('NULL, %L, %L', pg_temp.ev(10), pg_temp.pk(0)), 'BZNCM', 'a NULL community: BZNCM');
SELECT pg_temp.approve_throws(format('%L, %L, %L', :'archived', pg_temp.ev(9), pg_temp.pk(0)), 'BZARC',
                              'an archived community: BZARC');
SELECT ok(pg_temp.kept(:'archived') = ARRAY[pg_temp.ev(9)]
          AND NOT EXISTS (SELECT FROM buzz.relay_members(:'archived') m WHERE m.pubkey = pg_temp.pk(9))
          AND NOT pg_temp.marked(),
          'the refused calls kept the requests, added nobody and owe no list');

-- BZISO: the guard is in the body (the error itself is tested by pytest, see the header)
SELECT ok(pg_get_functiondef('buzz.approve_join_request(uuid, text, text)'::regprocedure)
          ~ 'PERFORM buzz_private\.require_read_committed\(\)',
          'approve_join_request calls buzz_private.require_read_committed (BZISO)');

-- Who may call it
SELECT is(buzz.request_membership(:'other', pg_temp.pk(11), pg_temp.ev(11)), 'requested', 'one more request');
SET LOCAL ROLE buzz_reader;
SELECT pg_temp.approve_throws(format('%L, %L, %L', :'other', pg_temp.ev(11), pg_temp.pk(0)), '42501', 'buzz_reader may not approve');
RESET ROLE;
CREATE ROLE buzz_pgtap_nobody_approve_join_request NOLOGIN;
-- Only the schema: the refusal must come from EXECUTE not being granted to PUBLIC.
GRANT USAGE ON SCHEMA buzz TO buzz_pgtap_nobody_approve_join_request;
SET LOCAL ROLE buzz_pgtap_nobody_approve_join_request;
SELECT pg_temp.approve_throws(format('%L, %L, %L', :'other', pg_temp.ev(11), pg_temp.pk(0)), '42501',
                              'a role without grants may not');
RESET ROLE;
SET LOCAL ROLE buzz_writer;
SELECT is(buzz.approve_join_request(:'other', pg_temp.ev(11), pg_temp.pk(0)), 'joined', 'buzz_writer may approve');
SELECT is(pg_temp.flush(), 2, '... and publish its list');
RESET ROLE;
SELECT pg_temp.list_is_members(:'other', 'in the end the live list names exactly the members');

SELECT * FROM finish();
ROLLBACK;
