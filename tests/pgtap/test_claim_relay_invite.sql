-- buzz.claim_relay_invite(p_community uuid, p_code text, p_pubkey text,
--                         p_policy_version text DEFAULT NULL)
--   -> TABLE(outcome text, use_count integer, uses_remaining integer)
-- Outcomes joined / already_member / banned / expired / exhausted / invalid, checked in the
-- order invalid, banned, expired, already_member, exhausted (banned consuming no use and
-- recording no acceptance), the use_count and uses_remaining each
-- reports (NULL uses_remaining when unlimited, both NULL for invalid), what a claim consumes,
-- the member and list it writes, the policy acceptance, argument errors (BZIPK, 22023, BZNCM),
-- BZARC, and who may call it.
-- BZISO is covered by pytest: this suite runs in one READ COMMITTED transaction.
BEGIN;
\ir lib/fixtures.sql

-- A claim as one row (outcome, use_count, uses_remaining).
CREATE FUNCTION pg_temp.claim(p_community uuid, p_code text, p_pubkey text,
                              p_policy_version text DEFAULT NULL)
RETURNS TABLE (outcome text, use_count integer, uses_remaining integer) LANGUAGE sql
BEGIN ATOMIC
    SELECT * FROM buzz.claim_relay_invite(p_community, p_code, p_pubkey, p_policy_version);
END;
CREATE FUNCTION pg_temp.claim_is(p_community uuid, p_code text, p_pubkey text, p_expected text,
                                 p_description text, p_policy_version text DEFAULT NULL)
RETURNS text LANGUAGE sql
RETURN results_eq(format('SELECT * FROM pg_temp.claim(%L, %L, %L, %L)',
                         p_community, p_code, p_pubkey, p_policy_version),
                  p_expected, p_description);
CREATE FUNCTION pg_temp.use_count(p_invite uuid) RETURNS integer LANGUAGE sql
RETURN (SELECT i.use_count FROM buzz_private.relay_invites i WHERE i.invite_id = p_invite);
CREATE FUNCTION pg_temp.is_member(p_community uuid, p_pubkey text) RETURNS boolean LANGUAGE sql
RETURN EXISTS (SELECT FROM buzz.relay_members(p_community) m WHERE m.pubkey = p_pubkey);
CREATE FUNCTION pg_temp.accepted(p_community uuid, p_pubkey text) RETURNS text[] LANGUAGE sql
RETURN (SELECT coalesce(array_agg(a.policy_version ORDER BY a.policy_version), '{}')
        FROM buzz_private.policy_acceptances a
        WHERE a.community_id = p_community AND a.pubkey = p_pubkey);

SELECT plan(66);

SELECT pg_temp.community() AS c \gset
SELECT pg_temp.community('other.example.org') AS other \gset
SELECT invite_id AS once_id, code AS once FROM buzz.create_relay_invite(:'c', pg_temp.pk(0)) \gset
SELECT invite_id AS twice_id, code AS twice FROM buzz.create_relay_invite(:'c', pg_temp.pk(0), 2) \gset
SELECT invite_id AS unl_id, code AS unl FROM buzz.create_relay_invite(:'c', pg_temp.pk(0), NULL) \gset
SELECT code AS elsewhere FROM buzz.create_relay_invite(:'other', pg_temp.pk(0)) \gset

-- invalid
SELECT pg_temp.claim_is(:'c', repeat('0', 32), pg_temp.pk(1), $$VALUES ('invalid', NULL::integer, NULL::integer)$$,
                        'an unknown code: invalid, use_count and uses_remaining NULL');
SELECT pg_temp.claim_is(:'c', NULL, pg_temp.pk(1), $$VALUES ('invalid', NULL::integer, NULL::integer)$$,
                        'a NULL code: invalid');
SELECT pg_temp.claim_is(:'c', :'elsewhere', pg_temp.pk(1), $$VALUES ('invalid', NULL::integer, NULL::integer)$$,
                        'the code of another community: invalid');
SELECT ok(NOT pg_temp.is_member(:'c', pg_temp.pk(1)) AND NOT pg_temp.marked(),
          '... nobody joined, no list owed');

-- joined, then exhausted
SELECT pg_temp.claim_is(:'c', :'once', pg_temp.pk(1), $$VALUES ('joined', 1, 0)$$,
                        'a single-use code: joined, one use, none left', 'v1');
SELECT results_eq(format($$SELECT m.role, m.added_by FROM buzz.relay_members(%L) m WHERE m.pubkey = %L$$,
                         :'c', pg_temp.pk(1)),
                  format($$VALUES ('member', %L)$$, pg_temp.pk(0)),
                  '... as member, added by the invite''s creator');
SELECT is(pg_temp.use_count(:'once_id'), 1, '... the use is counted');
SELECT is(pg_temp.accepted(:'c', pg_temp.pk(1)), ARRAY['v1'], '... the policy version is recorded');
SELECT results_eq($$SELECT p.kind, CASE WHEN p.kind <> 13534 THEN p.serialized::jsonb #>> '{4,1,1}' END
                    FROM pg_temp.prepared() p$$,
                  format($$VALUES (13534, NULL), (8000, %L)$$, pg_temp.pk(1)),
                  '... a list and an 8000 are owed');
SELECT is(pg_temp.flush(), 2, '... published');
SELECT results_eq(format('SELECT * FROM pg_temp.listed(%L)', :'c'),
                  format('SELECT m.pubkey, m.role FROM buzz.relay_members(%L) m', :'c'),
                  '... the live list names the new member');
SELECT pg_temp.claim_is(:'c', :'once', pg_temp.pk(2), $$VALUES ('exhausted', 1, 0)$$,
                        'the used code, another pubkey: exhausted', 'v1');
SELECT ok(NOT pg_temp.is_member(:'c', pg_temp.pk(2)), '... who did not join');
SELECT is(pg_temp.accepted(:'c', pg_temp.pk(2)), '{}'::text[], '... and accepted nothing');
SELECT pg_temp.claim_is(:'c', :'once', pg_temp.pk(1), $$VALUES ('already_member', 1, 0)$$,
                        'the used code, its member again: already_member comes before exhausted',
                        'v2');
SELECT is(pg_temp.accepted(:'c', pg_temp.pk(1)), ARRAY['v1', 'v2'],
          '... already_member records the policy version too');
SELECT ok(NOT pg_temp.marked(), '... no list owed');

-- already_member consumes nothing
SELECT pg_temp.claim_is(:'c', :'twice', pg_temp.pk(0), $$VALUES ('already_member', 0, 2)$$,
                        'the owner claims a two-use code: already_member, nothing used');
SELECT is(pg_temp.use_count(:'twice_id'), 0, '... the use count is untouched');
SELECT ok(NOT pg_temp.marked(), '... no list owed');
SELECT pg_temp.claim_is(:'c', :'twice', upper(pg_temp.pk(3)), $$VALUES ('joined', 1, 1)$$,
                        'a new pubkey (in uppercase): joined, one use left');
SELECT ok(pg_temp.is_member(:'c', pg_temp.pk(3)), '... stored in lowercase');
SELECT pg_temp.claim_is(:'c', :'twice', pg_temp.pk(4), $$VALUES ('joined', 2, 0)$$,
                        'another: joined, none left');
SELECT pg_temp.claim_is(:'c', :'twice', pg_temp.pk(5), $$VALUES ('exhausted', 2, 0)$$,
                        'one more: exhausted');
SELECT is(pg_temp.flush(), 3, 'the two joins publish one list and two 8000');

-- unlimited
SELECT pg_temp.claim_is(:'c', :'unl', pg_temp.pk(6), $$VALUES ('joined', 1, NULL::integer)$$,
                        'an unlimited code: joined, uses_remaining NULL');
SELECT pg_temp.claim_is(:'c', :'unl', pg_temp.pk(7), $$VALUES ('joined', 2, NULL::integer)$$,
                        '... and again');
SELECT pg_temp.claim_is(:'c', :'unl', pg_temp.pk(7), $$VALUES ('already_member', 2, NULL::integer)$$,
                        '... already_member, uses_remaining NULL');
SELECT is(pg_temp.flush(), 3, '... published');

-- expired, checked before already_member and exhausted
UPDATE buzz_private.relay_invites SET expires_at = clock_timestamp() - interval '1 second'
WHERE invite_id IN (:'unl_id', :'once_id');
SELECT pg_temp.claim_is(:'c', :'unl', pg_temp.pk(8), $$VALUES ('expired', 2, NULL::integer)$$,
                        'an expired code: expired, with its use count', 'v1');
SELECT ok(NOT pg_temp.is_member(:'c', pg_temp.pk(8)), '... nobody joined');
SELECT is(pg_temp.accepted(:'c', pg_temp.pk(8)), '{}'::text[], '... nothing accepted');
SELECT pg_temp.claim_is(:'c', :'unl', pg_temp.pk(6), $$VALUES ('expired', 2, NULL::integer)$$,
                        'an expired code, a member: expired comes before already_member');
SELECT pg_temp.claim_is(:'c', :'once', pg_temp.pk(9), $$VALUES ('expired', 1, 0)$$,
                        'an expired, used code: expired comes before exhausted');
SELECT is(pg_temp.use_count(:'unl_id'), 2, '... nothing consumed');
SELECT ok(NOT pg_temp.marked(), '... no list owed');

-- banned, checked after invalid and before expired, already_member and exhausted; consumes
-- nothing and records no acceptance
SELECT invite_id AS live_id, code AS live FROM buzz.create_relay_invite(:'c', pg_temp.pk(0), 3) \gset
SELECT is(buzz.ban_pubkey(:'c', pg_temp.pk(12), 'spam'), 'banned', 'a stranger banned');
SELECT pg_temp.claim_is(:'c', repeat('0', 32), pg_temp.pk(12), $$VALUES ('invalid', NULL::integer, NULL::integer)$$,
                        'a banned pubkey, an unknown code: invalid comes before banned');
SELECT pg_temp.claim_is(:'c', :'live', upper(pg_temp.pk(12)), $$VALUES ('banned', 0, 3)$$,
                        'a banned pubkey (in uppercase), a live code: banned, the invite as it was', 'v1');
SELECT is(pg_temp.use_count(:'live_id'), 0, '... no use consumed');
SELECT ok(NOT pg_temp.is_member(:'c', pg_temp.pk(12)), '... nobody joined');
SELECT is(pg_temp.accepted(:'c', pg_temp.pk(12)), '{}'::text[], '... and nothing accepted');
SELECT pg_temp.claim_is(:'c', :'unl', pg_temp.pk(12), $$VALUES ('banned', 2, NULL::integer)$$,
                        'an expired code: banned comes before expired');
SELECT pg_temp.claim_is(:'c', :'twice', pg_temp.pk(12), $$VALUES ('banned', 2, 0)$$,
                        'a used-up code: banned comes before exhausted');
-- A member who is banned only by direct SQL (bootstrap and transfer ignore bans).
INSERT INTO buzz_private.banned_pubkeys (community_id, pubkey) VALUES (:'c', pg_temp.pk(6));
SELECT pg_temp.claim_is(:'c', :'live', pg_temp.pk(6), $$VALUES ('banned', 0, 3)$$,
                        'a banned member: banned comes before already_member', 'v9');
SELECT is(pg_temp.accepted(:'c', pg_temp.pk(6)), '{}'::text[], '... and records no acceptance');
DELETE FROM buzz_private.banned_pubkeys WHERE community_id = :'c' AND pubkey = pg_temp.pk(6);
SELECT ok(NOT pg_temp.marked(), '... no list owed');
SELECT is(buzz.unban_pubkey(:'c', pg_temp.pk(12)), 'unbanned', 'the stranger unbanned');
SELECT pg_temp.claim_is(:'c', :'live', pg_temp.pk(12), $$VALUES ('joined', 1, 2)$$, '... may claim: joined');
SELECT is(pg_temp.flush(), 2, '... published');

-- Argument errors, before any outcome
SELECT throws_ok(format('SELECT * FROM buzz.claim_relay_invite(%L, %L, NULL)', :'c', :'twice'),
                 'BZIPK', NULL, 'a NULL pubkey: BZIPK');
SELECT throws_ok(format('SELECT * FROM buzz.claim_relay_invite(%L, %L, %L)', :'c', repeat('0', 32), 'npub1xyz'),
                 'BZIPK', NULL, 'a malformed pubkey with an unknown code: BZIPK, not invalid');
SELECT throws_ok(format('SELECT * FROM buzz.claim_relay_invite(%L, %L, %L, %L)', :'c', :'twice',
                        pg_temp.pk(10), repeat('v', 65)),
                 '22023', NULL, 'a policy version of 65 characters: 22023');
SELECT throws_ok(format('SELECT * FROM buzz.claim_relay_invite(%L, %L, %L, %L)', :'c', :'twice',
                        pg_temp.pk(10), ''),
                 '22023', NULL, 'an empty policy version: 22023');
SELECT throws_ok(format('SELECT * FROM buzz.claim_relay_invite(%L, %L, %L)', gen_random_uuid(),
                        :'twice', pg_temp.pk(10)),
                 'BZNCM', NULL, 'an unknown community: BZNCM');
SELECT throws_ok(format('SELECT * FROM buzz.claim_relay_invite(NULL, %L, %L)', :'twice', pg_temp.pk(10)),
                 'BZNCM', NULL, 'a NULL community: BZNCM');

-- Archived
SELECT invite_id AS open_id, code AS open FROM buzz.create_relay_invite(:'c', pg_temp.pk(0), 5) \gset
SELECT is(buzz.archive_community(:'c'), 'archived', 'the community is archived');
SELECT throws_ok(format('SELECT * FROM buzz.claim_relay_invite(%L, %L, %L)', :'c', :'open', pg_temp.pk(10)),
                 'BZARC', NULL, '... a claim raises BZARC');
SELECT throws_ok(format('SELECT * FROM buzz.claim_relay_invite(%L, %L, %L)', :'c', :'open', pg_temp.pk(0)),
                 'BZARC', NULL, '... also for a member');
SELECT ok(pg_temp.use_count(:'open_id') = 0 AND NOT pg_temp.is_member(:'c', pg_temp.pk(10)),
          '... nothing consumed, nobody joined');
SELECT is(buzz.unarchive_community(:'c'), 'unarchived', 'unarchived again');

-- Codes are hex: case does not matter
SELECT pg_temp.claim_is(:'c', upper(:'open'), pg_temp.pk(11), $$VALUES ('joined', 1, 4)$$,
                        'the code in uppercase: joined');

-- Who may call it
SET LOCAL ROLE buzz_reader;
SELECT throws_ok(format('SELECT * FROM buzz.claim_relay_invite(%L, %L, %L)', :'c', :'open', pg_temp.pk(10)),
                 '42501', NULL, 'buzz_reader may not claim');
SET LOCAL ROLE buzz_writer;
SELECT pg_temp.claim_is(:'c', :'open', pg_temp.pk(10), $$VALUES ('joined', 2, 3)$$, 'buzz_writer may');
RESET ROLE;
SELECT is(pg_temp.flush(), 3, '... and the joins publish: one list, two 8000');
SELECT is(pg_temp.guard(), NULL, 'the commit guard passes');

SELECT * FROM finish();
ROLLBACK;
