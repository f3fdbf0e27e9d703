-- buzz.request_membership(p_community uuid, p_pubkey text, p_request_id text,
--                         p_note text DEFAULT NULL) -> text
-- Each outcome under each policy (invite: closed; open: joined, as member added_by 'open',
-- with a list and an 8000; request: requested, kept pending, no list), the order banned,
-- already_member, closed, already_requested, rejected; one pending request per pubkey;
-- 'rejected' for 24 hours after a rejection, then a new request; expiry after 30 days; the
-- bound of 1,000 pending requests dropping the oldest; p_request_id (an event id) and p_note
-- (at most 1000 characters, line breaks allowed) bounds; BZIPK, 22023, BZNCM, BZARC with
-- nothing changed; and who may call it. Time is moved by rewriting requested_at and
-- rejected_at, as the suite's superuser. BZISO is covered by pytest.
BEGIN;
\ir lib/fixtures.sql

-- An event id for a small number.
CREATE FUNCTION pg_temp.ev(n integer) RETURNS text LANGUAGE sql IMMUTABLE
RETURN encode(sha256(convert_to('request ' || n, 'UTF8')), 'hex');
-- The stored request rows of a community as (request_id, pubkey, note, rejected).
CREATE FUNCTION pg_temp.stored(p_community uuid)
RETURNS TABLE (request_id text, pubkey text, note text, rejected boolean) LANGUAGE sql
BEGIN ATOMIC
    SELECT r.request_id, r.pubkey, r.note, r.rejected_at IS NOT NULL
    FROM buzz_private.join_requests r WHERE r.community_id = p_community;
END;
CREATE FUNCTION pg_temp.pending(p_community uuid) RETURNS text[] LANGUAGE sql
RETURN (SELECT coalesce(array_agg(r.pubkey ORDER BY r.requested_at, r.request_id), '{}')
        FROM buzz.join_requests(p_community) r);
CREATE FUNCTION pg_temp.ask_throws(p_args text, p_code text, p_description text)
RETURNS text LANGUAGE sql
RETURN throws_ok(format('SELECT buzz.request_membership(%s)', p_args), p_code, NULL, p_description);
-- Moves a stored request back in time (the suite runs as a superuser).
CREATE FUNCTION pg_temp.age_request(p_community uuid, p_pubkey text, p_requested interval,
                                    p_rejected interval DEFAULT NULL) RETURNS void LANGUAGE sql
BEGIN ATOMIC
    UPDATE buzz_private.join_requests r
    SET requested_at = now() - p_requested,
        rejected_at = CASE WHEN r.rejected_at IS NOT NULL THEN now() - p_rejected END
    WHERE r.community_id = p_community AND r.pubkey = p_pubkey;
END;

SELECT plan(84);

SELECT function_returns('buzz', 'request_membership', ARRAY['uuid', 'text', 'text', 'text'], 'text',
                        'request_membership returns text');

SELECT pg_temp.community() AS c \gset
SELECT pg_temp.community('archived.example.org') AS archived \gset
SELECT buzz.set_join_policy(:'archived', 'open') AS archived_policy \gset
SELECT buzz.archive_community(:'archived') AS archive_outcome \gset
SELECT buzz.add_relay_member(:'c', pg_temp.pk(1)) AS setup_1 \gset
SELECT buzz.ban_pubkey(:'c', pg_temp.pk(2)) AS setup_2 \gset
SELECT pg_temp.flush() AS setup_published \gset

-- invite (the default): closed; banned and already_member come first
SELECT is(buzz.request_membership(:'c', pg_temp.pk(3), pg_temp.ev(1), 'hello'), 'closed',
          'policy invite, a stranger: closed');
SELECT is_empty(format('SELECT * FROM pg_temp.stored(%L)', :'c'), '... nothing is kept');
SELECT is(buzz.request_membership(:'c', pg_temp.pk(1), pg_temp.ev(1)), 'already_member',
          'policy invite, a member: already_member (before closed)');
SELECT is(buzz.request_membership(:'c', pg_temp.pk(2), pg_temp.ev(1)), 'banned',
          'policy invite, a banned pubkey: banned (before closed)');
SELECT is(buzz.request_membership(:'c', pg_temp.pk(0), pg_temp.ev(1)), 'already_member',
          'the owner: already_member');
-- A member who is banned only by direct SQL: banned comes first.
INSERT INTO buzz_private.banned_pubkeys (community_id, pubkey) VALUES (:'c', pg_temp.pk(1));
SELECT is(buzz.request_membership(:'c', pg_temp.pk(1), pg_temp.ev(1)), 'banned',
          'a banned member: banned (before already_member)');
DELETE FROM buzz_private.banned_pubkeys WHERE community_id = :'c' AND pubkey = pg_temp.pk(1);
SELECT ok(NOT pg_temp.marked(), '... none of these owes a list');

-- open: joined at once
SELECT is(buzz.set_join_policy(:'c', 'open'), 'updated', 'the policy is now open');
SELECT is(buzz.request_membership(:'c', upper(pg_temp.pk(3)), upper(pg_temp.ev(2)), 'hi'), 'joined',
          'policy open, a stranger (in uppercase): joined');
SELECT results_eq(format('SELECT m.role, m.added_by FROM buzz.relay_members(%L) m WHERE m.pubkey = %L',
                         :'c', pg_temp.pk(3)),
                  $$VALUES ('member', 'open')$$, '... as member, added_by open');
SELECT ok(pg_temp.marked(), '... the community owes a list');
SELECT pg_temp.events_are($$VALUES (13534, NULL::text), (8000, pg_temp.pk(3))$$, '... a list and an 8000');
SELECT is(pg_temp.flush(), 2, '... published');
SELECT pg_temp.list_is_members(:'c', '... the live list names exactly the members');
SELECT is_empty(format('SELECT * FROM pg_temp.stored(%L)', :'c'), '... no request is kept');
SELECT is(buzz.request_membership(:'c', pg_temp.pk(3), pg_temp.ev(3)), 'already_member',
          '... asking again: already_member');
SELECT is(buzz.request_membership(:'c', pg_temp.pk(2), pg_temp.ev(3)), 'banned', 'policy open, banned: banned');
SELECT ok(NOT pg_temp.marked(), '... no list owed');

-- request: kept pending
SELECT is(buzz.set_join_policy(:'c', 'request'), 'updated', 'the policy is now request');
SELECT is(buzz.request_membership(:'c', pg_temp.pk(4), upper(pg_temp.ev(4)), E'Hi!\nI am 4.'), 'requested',
          'policy request, a stranger: requested');
SELECT results_eq(format('SELECT * FROM pg_temp.stored(%L)', :'c'),
                  format($$VALUES (%L, %L, E'Hi!\nI am 4.', false)$$, pg_temp.ev(4), pg_temp.pk(4)),
                  '... kept pending with its lowercased id and its note');
SELECT ok(NOT EXISTS (SELECT FROM buzz.relay_members(:'c') m WHERE m.pubkey = pg_temp.pk(4)),
          '... not a member');
SELECT ok(NOT pg_temp.marked(), '... no list owed');
SELECT is(buzz.request_membership(:'c', pg_temp.pk(4), pg_temp.ev(5)), 'already_requested',
          'the same pubkey with another request: already_requested');
SELECT is(buzz.request_membership(:'c', upper(pg_temp.pk(4)), pg_temp.ev(4)), 'already_requested',
          '... the same request again: already_requested');
SELECT results_eq(format('SELECT r.request_id, r.note FROM pg_temp.stored(%L) r', :'c'),
                  format($$VALUES (%L, E'Hi!\nI am 4.')$$, pg_temp.ev(4)),
                  '... one pending request per pubkey: the first is kept');
SELECT is(buzz.request_membership(:'c', pg_temp.pk(1), pg_temp.ev(6)), 'already_member',
          'policy request, a member: already_member');
SELECT is(buzz.request_membership(:'c', pg_temp.pk(2), pg_temp.ev(6)), 'banned', 'policy request, banned: banned');
SELECT is(buzz.request_membership(:'c', pg_temp.pk(5), pg_temp.ev(7)), 'requested', 'another stranger: requested');
SELECT pg_temp.age_request(:'c', pg_temp.pk(4), interval '1 minute');
SELECT is(pg_temp.pending(:'c'), ARRAY[pg_temp.pk(4), pg_temp.pk(5)], '... both pending, oldest first');

-- A pending request under another policy
SELECT is(buzz.set_join_policy(:'c', 'invite'), 'updated', 'the policy back to invite');
SELECT is(buzz.request_membership(:'c', pg_temp.pk(4), pg_temp.ev(5)), 'closed',
          '... the pending pubkey asks again: closed (before already_requested)');
SELECT is(buzz.set_join_policy(:'c', 'open'), 'updated', 'the policy open');
SELECT is(buzz.request_membership(:'c', pg_temp.pk(4), pg_temp.ev(5)), 'already_requested',
          '... the pending pubkey asks again: already_requested, it does not join by itself');
SELECT ok(NOT pg_temp.marked(), '... no list owed');
SELECT is(buzz.set_join_policy(:'c', 'request'), 'updated', 'the policy back to request');

-- rejected: for 24 hours
SELECT is(buzz.reject_join_request(:'c', pg_temp.ev(4), 'not now'), 'rejected', 'the first request rejected');
SELECT is(buzz.request_membership(:'c', pg_temp.pk(4), pg_temp.ev(8)), 'rejected', '... asking again at once: rejected');
SELECT pg_temp.age_request(:'c', pg_temp.pk(4), interval '2 days', interval '23 hours 59 minutes');
SELECT is(buzz.request_membership(:'c', pg_temp.pk(4), pg_temp.ev(8)), 'rejected',
          '... 23 h 59 min after the rejection: still rejected');
SELECT pg_temp.age_request(:'c', pg_temp.pk(4), interval '31 days', interval '1 hour');
SELECT is(buzz.request_membership(:'c', pg_temp.pk(4), pg_temp.ev(8)), 'rejected',
          '... a rejection an hour old of a request 31 days old: still rejected (kept its 24 hours)');
SELECT pg_temp.age_request(:'c', pg_temp.pk(4), interval '2 days', interval '24 hours 1 minute');
SELECT is(buzz.request_membership(:'c', pg_temp.pk(4), pg_temp.ev(8), 'second try'), 'requested',
          '... 24 h 1 min after the rejection: requested again');
SELECT results_eq(format('SELECT r.request_id, r.note, r.rejected FROM pg_temp.stored(%L) r WHERE r.pubkey = %L',
                         :'c', pg_temp.pk(4)),
                  format($$VALUES (%L, 'second try', false)$$, pg_temp.ev(8)),
                  '... the new request replaces the rejected one');
SELECT pg_temp.age_request(:'c', pg_temp.pk(5), interval '1 minute');
SELECT is(pg_temp.pending(:'c'), ARRAY[pg_temp.pk(5), pg_temp.pk(4)], '... pending, after the older one');

-- Pending requests expire after 30 days
SELECT pg_temp.age_request(:'c', pg_temp.pk(5), interval '29 days 23 hours');
SELECT is(buzz.request_membership(:'c', pg_temp.pk(5), pg_temp.ev(9)), 'already_requested',
          'a request almost 30 days old is still pending: already_requested');
SELECT is(pg_temp.pending(:'c'), ARRAY[pg_temp.pk(5), pg_temp.pk(4)], '... and listed');
SELECT pg_temp.age_request(:'c', pg_temp.pk(5), interval '30 days 1 minute');
SELECT is(pg_temp.pending(:'c'), ARRAY[pg_temp.pk(4)], 'a request 30 days and a minute old is no longer listed');
SELECT is(buzz.request_membership(:'c', pg_temp.pk(5), pg_temp.ev(9), 'again'), 'requested',
          '... the pubkey may ask again: requested');
SELECT results_eq(format('SELECT r.request_id, r.note FROM pg_temp.stored(%L) r WHERE r.pubkey = %L',
                         :'c', pg_temp.pk(5)),
                  format($$VALUES (%L, 'again')$$, pg_temp.ev(9)), '... the expired request replaced');
SELECT pg_temp.age_request(:'c', pg_temp.pk(5), interval '31 days');
SELECT is(buzz.request_membership(:'c', pg_temp.pk(6), pg_temp.ev(10)), 'requested',
          'another pubkey asks ...');
SELECT is_empty(format('SELECT * FROM pg_temp.stored(%L) r WHERE r.pubkey = %L', :'c', pg_temp.pk(5)),
                '... and the expired request of another is swept on the way');
SELECT ok(NOT pg_temp.marked(), 'none of this owes a list');

-- At most 1,000 pending: the oldest make room
DELETE FROM buzz_private.join_requests WHERE community_id = :'c';
INSERT INTO buzz_private.join_requests (community_id, request_id, pubkey, note, requested_at)
SELECT :'c', pg_temp.ev(1000 + i), pg_temp.pk(1000 + i), NULL, now() - (1001 - i) * interval '1 minute'
FROM generate_series(1, 1000) AS i;
INSERT INTO buzz_private.join_requests (community_id, request_id, pubkey, requested_at, rejected_at)
VALUES (:'c', pg_temp.ev(3000), pg_temp.pk(3000), now() - interval '2 days', now() - interval '1 hour');
SELECT is((SELECT count(*) FROM buzz.join_requests(:'c')), 1000::bigint,
          'setup: 1000 pending requests, a minute apart, and a rejected one');
SELECT is(buzz.request_membership(:'c', pg_temp.pk(7), pg_temp.ev(11)), 'requested', 'one more: requested');
SELECT is((SELECT count(*) FROM buzz.join_requests(:'c')), 1000::bigint, '... still 1000 pending');
SELECT ok(NOT EXISTS (SELECT FROM pg_temp.stored(:'c') r WHERE r.pubkey = pg_temp.pk(1001)),
          '... the oldest was dropped');
SELECT is((SELECT r.pubkey FROM buzz.join_requests(:'c') r LIMIT 1), pg_temp.pk(1002),
          '... the second oldest is now the first');
SELECT is((SELECT r.pubkey FROM buzz.join_requests(:'c') r ORDER BY r.requested_at DESC, r.request_id DESC LIMIT 1),
          pg_temp.pk(7), '... the new one is the last');
SELECT ok(EXISTS (SELECT FROM pg_temp.stored(:'c') r WHERE r.pubkey = pg_temp.pk(3000) AND r.rejected),
          '... the rejection does not count and is kept');
SELECT is(buzz.request_membership(:'c', pg_temp.pk(8), pg_temp.ev(12)), 'requested', 'and one more');
SELECT ok((SELECT count(*) FROM buzz.join_requests(:'c')) = 1000
          AND NOT EXISTS (SELECT FROM pg_temp.stored(:'c') r WHERE r.pubkey = pg_temp.pk(1002)),
          '... drops the next oldest');
DELETE FROM buzz_private.join_requests WHERE community_id = :'c';

-- p_request_id and p_note
SELECT is(buzz.request_membership(:'c', pg_temp.pk(9), pg_temp.ev(13), repeat('n', 1000)), 'requested',
          'a note of 1000 characters');
SELECT is(buzz.request_membership(:'c', pg_temp.pk(10), pg_temp.ev(14), ''), 'requested', 'an empty note');
SELECT is(buzz.request_membership(:'c', pg_temp.pk(11), pg_temp.ev(15), $$'); DROP TABLE x; --$$), 'requested',
          'a note shaped like SQL');
SELECT set_eq(format('SELECT r.pubkey, r.note FROM buzz.join_requests(%L) r', :'c'),
                  format($$VALUES (%L, %L), (%L, NULL), (%L, $x$'); DROP TABLE x; --$x$)$$,
                         pg_temp.pk(9), repeat('n', 1000), pg_temp.pk(10), pg_temp.pk(11)),
                  '... stored as given, the empty one as no note');
SELECT pg_temp.ask_throws(format('%L, %L, %L, %L', :'c', pg_temp.pk(12), pg_temp.ev(16), repeat('n', 1001)),
                          '22023', 'a note of 1001 characters: 22023');
SELECT pg_temp.ask_throws(format('%L, %L, %L, %L', :'c', pg_temp.pk(12), pg_temp.ev(16), E'\x1b[2J'),
                          '22023', 'a note with an escape: 22023');
SELECT pg_temp.ask_throws(format('%L, %L, %L, %L', :'c', pg_temp.pk(12), pg_temp.ev(16), U&'csi\009b'),
                          '22023', 'a note with a C1 control: 22023');
SELECT pg_temp.ask_throws(format('%L, %L, NULL', :'c', pg_temp.pk(12)), '22023', 'a NULL request id: 22023');
SELECT pg_temp.ask_throws(format('%L, %L, %L', :'c', pg_temp.pk(12), left(pg_temp.ev(16), 63)), '22023',
                          'a request id of 63 characters: 22023');
SELECT pg_temp.ask_throws(format('%L, %L, %L', :'c', pg_temp.pk(12), pg_temp.ev(16) || '0'), '22023',
                          'a request id of 65 characters: 22023');
SELECT pg_temp.ask_throws(format('%L, %L, %L', :'c', pg_temp.pk(12), repeat('g', 64)), '22023',
                          'a request id with non-hex characters: 22023');
SELECT pg_temp.ask_throws(format('%L, %L, %L', :'c', pg_temp.pk(2), 'nope'), '22023',
                          '... also for a banned pubkey (arguments first)');
SELECT pg_temp.ask_throws(format('%L, NULL, %L', :'c', pg_temp.ev(16)), 'BZIPK', 'a NULL pubkey: BZIPK');
SELECT pg_temp.ask_throws(format('%L, %L, %L', :'c', 'npub1' || repeat('q', 58), pg_temp.ev(16)), 'BZIPK',
                          'an npub: BZIPK');
SELECT pg_temp.ask_throws(format('%L, %L, %L', gen_random_uuid(), pg_temp.pk(12), pg_temp.ev(16)), 'BZNCM',
                          'an unknown community: BZNCM');
SELECT pg_temp.ask_throws(format('NULL, %L, %L', pg_temp.pk(12), pg_temp.ev(16)), 'BZNCM', 'a NULL community: BZNCM');
SELECT pg_temp.ask_throws(format('%L, %L, %L', :'archived', pg_temp.pk(12), pg_temp.ev(16)), 'BZARC',
                          'an archived (open) community: BZARC');
SELECT ok(NOT EXISTS (SELECT FROM buzz_private.join_requests r WHERE r.pubkey = pg_temp.pk(12))
          AND NOT EXISTS (SELECT FROM buzz_private.relay_members m WHERE m.pubkey = pg_temp.pk(12))
          AND NOT pg_temp.marked(),
          'the refused calls kept no request, added nobody and owe no list');

-- BZISO: the guard is in the body (the error itself is tested by pytest, see the header)
SELECT ok(pg_get_functiondef('buzz.request_membership(uuid, text, text, text)'::regprocedure)
          ~ 'PERFORM buzz_private\.require_read_committed\(\)',
          'request_membership calls buzz_private.require_read_committed (BZISO)');

-- Who may call it
SET LOCAL ROLE buzz_writer;
SELECT is(buzz.request_membership(:'c', pg_temp.pk(13), pg_temp.ev(17)), 'requested', 'buzz_writer may ask');
SET LOCAL ROLE buzz_reader;
SELECT pg_temp.ask_throws(format('%L, %L, %L', :'c', pg_temp.pk(14), pg_temp.ev(18)), '42501', 'buzz_reader may not');
RESET ROLE;
CREATE ROLE buzz_pgtap_nobody_request_membership NOLOGIN;
-- Only the schema: the refusal must come from EXECUTE not being granted to PUBLIC.
GRANT USAGE ON SCHEMA buzz TO buzz_pgtap_nobody_request_membership;
SET LOCAL ROLE buzz_pgtap_nobody_request_membership;
SELECT pg_temp.ask_throws(format('%L, %L, %L', :'c', pg_temp.pk(14), pg_temp.ev(18)), '42501',
                          'a role without grants may not');
RESET ROLE;
SELECT pg_temp.list_is_members(:'c', 'in the end the live list names exactly the members');

SELECT * FROM finish();
ROLLBACK;
