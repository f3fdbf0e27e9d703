-- buzz.delete_community(p_community uuid) -> text
-- Outcomes deleted / not_found; the community's members, list, events, invites, allowlist,
-- policy acceptances, role definitions and role events, profile, bans, join requests and invite
-- quotas go with it (no kind 5 either); no list and no 8001 are written (also when it changed earlier
-- in the same transaction, or after prepare); other communities keep their lists; and who may
-- call it.
BEGIN;
\ir lib/fixtures.sql

-- Rows a community still has in each table.
CREATE FUNCTION pg_temp.leftovers(p_community uuid) RETURNS TABLE (tbl text, n bigint)
LANGUAGE sql
BEGIN ATOMIC
    SELECT 'communities', count(*) FROM buzz_private.communities t WHERE t.community_id = p_community
    UNION ALL SELECT 'relay_members', count(*) FROM buzz_private.relay_members t WHERE t.community_id = p_community
    UNION ALL SELECT 'member_lists', count(*) FROM buzz_private.member_lists t WHERE t.community_id = p_community
    UNION ALL SELECT 'member_list_pieces', count(*) FROM buzz_private.member_list_pieces t WHERE t.community_id = p_community
    UNION ALL SELECT 'membership_events', count(*) FROM buzz_private.membership_events t WHERE t.community_id = p_community
    UNION ALL SELECT 'relay_invites', count(*) FROM buzz_private.relay_invites t WHERE t.community_id = p_community
    UNION ALL SELECT 'relay_allowlist', count(*) FROM buzz_private.relay_allowlist t WHERE t.community_id = p_community
    UNION ALL SELECT 'policy_acceptances', count(*) FROM buzz_private.policy_acceptances t WHERE t.community_id = p_community
    UNION ALL SELECT 'roles', count(*) FROM buzz_private.roles t WHERE t.community_id = p_community
    UNION ALL SELECT 'role_events', count(*) FROM buzz_private.role_events t WHERE t.community_id = p_community
    UNION ALL SELECT 'community_profiles', count(*) FROM buzz_private.community_profiles t WHERE t.community_id = p_community
    UNION ALL SELECT 'banned_pubkeys', count(*) FROM buzz_private.banned_pubkeys t WHERE t.community_id = p_community
    UNION ALL SELECT 'join_requests', count(*) FROM buzz_private.join_requests t WHERE t.community_id = p_community
    UNION ALL SELECT 'invite_quotas', count(*) FROM buzz_private.invite_quotas t WHERE t.community_id = p_community
    UNION ALL SELECT 'banned_events', count(*) FROM buzz_private.banned_events t WHERE t.community_id = p_community
    UNION ALL SELECT 'kind_rules', count(*) FROM buzz_private.kind_rules t WHERE t.community_id = p_community
    UNION ALL SELECT 'blocked_ips', count(*) FROM buzz_private.blocked_ips t WHERE t.community_id = p_community
    UNION ALL SELECT 'method_assignments', count(*) FROM buzz_private.method_assignments t WHERE t.community_id = p_community
    UNION ALL SELECT 'member_profiles', count(*) FROM buzz_private.member_profiles t WHERE t.community_id = p_community;
END;
CREATE FUNCTION pg_temp.nothing_left(p_community uuid, p_description text) RETURNS text LANGUAGE sql
RETURN is_empty(format('SELECT * FROM pg_temp.leftovers(%L) WHERE n > 0', p_community), p_description);

SELECT plan(42);

SELECT pg_temp.community() AS c \gset
SELECT pg_temp.community('other.example.org') AS other \gset
SELECT is(buzz.add_relay_members(:'c', ARRAY[pg_temp.pk(1), pg_temp.pk(2)]), 2, 'members added');
SELECT is(buzz.claim_relay_membership(:'c', pg_temp.pk(3), 'v1'), 'joined', '... one with a policy acceptance');
SELECT is(buzz.allowlist_add(:'c', pg_temp.pk(4)), 'added', '... a pubkey allowlisted');
SELECT lives_ok(format('SELECT * FROM buzz.create_relay_invite(%L, %L)', :'c', pg_temp.pk(0)), '... an invite created');
SELECT is(buzz.set_join_policy(:'c', 'request'), 'updated', '... a join policy set');
SELECT is(buzz.request_membership(:'c', pg_temp.pk(5), repeat('e', 64)), 'requested', '... a join request');
SELECT is(buzz.ban_pubkey(:'c', pg_temp.pk(6)), 'banned', '... a pubkey banned');
SELECT is(buzz.set_invite_quota(:'c', 'member', 2), 'updated', '... an invite quota set');
SELECT is(buzz.ban_event(:'c', repeat('f', 64)), 'banned', '... an event banned');
SELECT is(buzz.disallow_kind(:'c', 7), 'updated', '... a kind disallowed');
SELECT is(buzz.block_ip(:'c', '192.0.2.1'), 'blocked', '... an address blocked');
SELECT is(buzz.assign_method(:'c', pg_temp.pk(1), 'banevent'), 'assigned', '... a method assigned');
-- A member's profile, as set_member_profile stores it (test_member_profiles checks that path).
INSERT INTO buzz_private.member_profiles VALUES (:'c', pg_temp.pk(1), repeat('a', 64), 1, '{}');
SELECT is(pg_temp.flush(), 4, '... published');
SELECT set_eq($$SELECT c.relname::text FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid
                 WHERE c.relnamespace = 'buzz_private'::regnamespace AND c.relkind IN ('r', 'p')
                   AND c.relpersistence = 'p' AND a.attname = 'community_id' AND NOT a.attisdropped$$,
              $$SELECT l.tbl FROM pg_temp.leftovers(NULL) l$$,
              'leftovers counts every stored table that holds rows of a community (no kept copy of the list)');
SELECT is((SELECT count(*) FROM pg_temp.leftovers(:'c') WHERE n > 0), 19::bigint,
          'the community has rows in every table');

SELECT is(buzz.delete_community(:'c'), 'deleted', 'delete: deleted');
SELECT pg_temp.nothing_left(:'c', '... its members, list, events, invites, allowlist, acceptances, roles and role events are gone');
SELECT ok(buzz.community_id('relay.example.org') IS NULL, '... its host finds nothing');
SELECT ok(buzz.member_list(:'c') IS NULL, '... it has no list');
SELECT is_empty(format('SELECT * FROM buzz.membership_events(%L)', :'c'), '... nor events');
SELECT is_empty(format('SELECT * FROM buzz.relay_members(%L)', :'c'), '... nor members');
SELECT is_empty(format('SELECT * FROM buzz.role_definitions(%L)', :'c'), '... nor role definitions');
SELECT ok(NOT pg_temp.marked(), '... no list is owed for it');
SELECT is_empty('SELECT * FROM pg_temp.prepared()', '... prepare writes no list and no 8001');
SELECT is(pg_temp.guard(), NULL, '... the commit guard passes');
SELECT ok(buzz.member_list(:'other') IS NOT NULL, 'the other community keeps its list');
SELECT is(buzz.delete_community(:'c'), 'not_found', 'deleted twice: not_found');
SELECT is(buzz.delete_community(gen_random_uuid()), 'not_found', 'an unknown community: not_found');
SELECT is(buzz.delete_community(NULL), 'not_found', 'a NULL community: not_found');

-- Changed earlier in the same transaction, next to another changed community
SELECT community_id AS d FROM buzz.create_community('relay.example.org', pg_temp.pk(0)) \gset
SELECT is(buzz.add_relay_member(:'d', pg_temp.pk(1)), 'added', 'the host is free again: a new community, a member added');
SELECT is(buzz.define_role(:'d', 'mod', 'Moderator'), 'defined', '... a role defined there');
SELECT is(buzz.add_relay_member(:'other', pg_temp.pk(1)), 'added', '... and another community changed');
SELECT is(buzz.delete_community(:'d'), 'deleted', '... the new community deleted before its list');
SELECT results_eq($$SELECT p.community_id, p.kind FROM pg_temp.prepared() p$$,
                  format($$VALUES (%L::uuid, 13534), (%1$L, 8000)$$, :'other'),
                  '... prepare writes only the other community''s list and 8000 (no 33534, no kind 5)');
SELECT is(pg_temp.flush(), 2, '... published');
SELECT is(pg_temp.guard(), NULL, '... the commit guard passes');

-- Deleted after prepare
SELECT community_id AS e FROM buzz.create_community('e.example.org', pg_temp.pk(0)) \gset
SELECT pg_temp.prepared_ids() AS ids \gset
SELECT is(buzz.delete_community(:'e'), 'deleted', 'a community deleted after prepare');
SELECT throws_ok(format('SELECT * FROM buzz.insert_signed_events(%L, %L)', :'ids', pg_temp.sigs(2)),
                 'BZSTL', NULL, '... the events prepared for it are refused: BZSTL');
SELECT is_empty('SELECT * FROM pg_temp.prepared()', '... prepare again: nothing');
SELECT pg_temp.nothing_left(:'e', '... nothing of it is left');

-- Who may call it
SET LOCAL ROLE buzz_reader;
SELECT throws_ok(format('SELECT buzz.delete_community(%L)', :'other'), '42501', NULL,
                 'buzz_reader may not delete');
SET LOCAL ROLE buzz_writer;
SELECT is(buzz.delete_community(:'other'), 'deleted', 'buzz_writer may');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
