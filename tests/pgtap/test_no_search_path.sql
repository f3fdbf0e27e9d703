-- The API needs no search_path: a whole flow (create a community, add, remove, change a role,
-- transfer, invite and claim, publish, read the list, check drift, roles, and the rest of the API)
-- runs with search_path = '' from the first statement on.
-- pgTAP lives in schema public and its own functions call each other unqualified, so a bare
-- public.is() fails under an empty search_path. Each assertion therefore goes through a
-- pg_temp wrapper that calls public.<function> with search_path = public for pgTAP alone;
-- the arguments, and so every API call, are evaluated in the suite's empty search_path.
BEGIN;
SET LOCAL search_path = '';
\ir lib/fixtures.sql

CREATE FUNCTION pg_temp.t_plan(integer) RETURNS text LANGUAGE sql SET search_path = public
AS 'SELECT public.plan($1)';
CREATE FUNCTION pg_temp.t_finish() RETURNS SETOF text LANGUAGE sql SET search_path = public
AS 'SELECT * FROM public.finish()';
CREATE FUNCTION pg_temp.t_ok(boolean, text) RETURNS text LANGUAGE sql SET search_path = public
AS 'SELECT public.ok($1, $2)';
CREATE FUNCTION pg_temp.t_is(anyelement, anyelement, text) RETURNS text LANGUAGE sql
SET search_path = public AS 'SELECT public.is($1, $2, $3)';

SELECT pg_temp.t_plan(51);
SELECT pg_temp.t_is(pg_catalog.current_setting('search_path'), '""', 'the search_path is empty');

-- Create and publish
SELECT community_id AS c, outcome FROM buzz.create_community('Flow.Example.org', pg_temp.pk(0)) \gset
SELECT pg_temp.t_is(:'outcome'::text, 'created', 'create_community: created');
SELECT pg_temp.t_is(pg_temp.guard(), 'BZUNS', '... unsigned it cannot commit');
SELECT pg_temp.t_is(pg_temp.flush(), 5, 'prepare, sign and insert: the list, the 8000 and three 33534');
SELECT pg_temp.t_is(buzz.community_id('flow.example.org'), :'c'::uuid, 'community_id');

-- Members
SELECT pg_temp.t_is(buzz.add_relay_member(:'c', pg_temp.pk(1)), 'added', 'add_relay_member');
SELECT pg_temp.t_is(buzz.add_relay_members(:'c', ARRAY[pg_temp.pk(2), pg_temp.pk(3), pg_temp.pk(4)], 'admin'), 3,
                    'add_relay_members');
SELECT pg_temp.t_is(buzz.remove_relay_member(:'c', pg_temp.pk(1)), 'removed', 'remove_relay_member');
SELECT pg_temp.t_is(buzz.remove_relay_member_if_role(:'c', pg_temp.pk(2), 'admin'), 'removed',
                    'remove_relay_member_if_role');
SELECT pg_temp.t_is(buzz.update_relay_member_role(:'c', pg_temp.pk(3), 'member'), 'updated',
                    'update_relay_member_role');
SELECT pg_temp.t_is(buzz.transfer_ownership(:'c', pg_temp.pk(5), pg_temp.pk(0)), 'transferred', 'transfer_ownership');
SELECT pg_temp.t_is(buzz.bootstrap_owner(:'c', pg_temp.pk(4)), 'provisioned', 'bootstrap_owner');
SELECT pg_temp.t_is(buzz.claim_relay_membership(:'c', pg_temp.pk(6), 'v1'), 'joined', 'claim_relay_membership');
SELECT invite_id AS inv, code FROM buzz.create_relay_invite(:'c', pg_temp.pk(4), 2) \gset
SELECT pg_temp.t_ok(:'code' ~ '^[0-9a-f]{32}$', 'create_relay_invite');
SELECT outcome AS claimed, use_count FROM buzz.claim_relay_invite(:'c', :'code', pg_temp.pk(7), 'v1') \gset
SELECT pg_temp.t_is(:'claimed' || ' ' || :use_count, 'joined 1', 'claim_relay_invite');
SELECT pg_temp.t_is(buzz.revoke_relay_invite(:'c', :'inv'), 'revoked', 'revoke_relay_invite');
SELECT pg_temp.t_is(pg_temp.sqlstate_of('SELECT buzz.add_relay_member(' || pg_catalog.quote_literal(:'c') || ', ''npub'')'),
                    'BZIPK', 'errors keep their SQLSTATE');
SELECT pg_temp.t_is(pg_temp.guard(), 'BZUNS', 'the changes, unsigned, cannot commit');

-- Prepare and insert by hand
SELECT pg_catalog.array_agg(p.id ORDER BY p.ord) AS ids,
       pg_catalog.bool_and(p.id = pg_catalog.encode(pg_catalog.sha256(pg_catalog.convert_to(p.serialized, 'UTF8')), 'hex')) AS hashed
FROM buzz.prepare_membership_events(pg_temp.relay_pubkey()) WITH ORDINALITY AS p (community_id, id, kind, created_at, serialized, ord) \gset
SELECT pg_temp.t_ok(:'hashed', 'prepare_membership_events: every id hashes its serialization');
SELECT pg_temp.t_is((SELECT pg_catalog.count(*) FROM buzz.insert_signed_events(:'ids'::text[], pg_temp.signatures(:'ids'::text[]))),
                    pg_catalog.cardinality(:'ids'::text[])::bigint, 'insert_signed_events');
SELECT pg_temp.t_is(pg_temp.guard(), NULL::text, '... then the commit guard passes');

-- Reads
SELECT pg_temp.t_is((buzz.member_list(:'c') -> 'tags')::jsonb,
                    (SELECT pg_catalog.jsonb_build_array(pg_catalog.jsonb_build_array('-'))
                            || coalesce(pg_catalog.jsonb_agg(pg_catalog.jsonb_build_array('member', m.pubkey, m.role)
                                                                        ORDER BY m.pubkey COLLATE "C"), '[]'::jsonb)
                     FROM buzz.relay_members(:'c') m),
                    'member_list names relay_members');
SELECT pg_temp.t_ok(pg_temp.id_ok(buzz.member_list(:'c')), '... and its id hashes it');
SELECT pg_temp.t_is((SELECT pg_catalog.string_agg(m.role, ',' ORDER BY m.role) FROM buzz.relay_members(:'c') m),
                    'admin,member,member,member,member,owner',
                    'relay_members: the owner, the demoted owner (admin), four members');
SELECT pg_temp.t_ok(NOT EXISTS (SELECT FROM buzz.member_list_drift(:'c')), 'member_list_drift: none');
SELECT pg_temp.t_is((SELECT pg_catalog.string_agg(e ->> 'kind', ',') FROM buzz.membership_events(:'c') e),
                    '8000,8000,8000,8000,8000,8000',
                    'membership_events: an 8000 for each who joined, none for who left before the list');

-- Direct SQL on the members runs the triggers under an empty search_path too
INSERT INTO buzz_private.relay_members (community_id, pubkey, role) VALUES (:'c', pg_temp.pk(8), 'member');
SELECT pg_temp.t_is(pg_temp.flush(), 2, 'a direct INSERT: its list and 8000');

-- Roles
SELECT pg_temp.t_is(buzz.define_role(:'c', 'mod', 'Moderator', 'Keeps order', 200, 5), 'defined', 'define_role');
SELECT pg_temp.t_is(buzz.assign_role(:'c', pg_temp.pk(8), 'mod'), 'assigned', 'assign_role');
SELECT pg_temp.t_is(pg_temp.flush(), 2, '... published: the list and the 33534');
SELECT pg_temp.t_is((SELECT m.roles FROM buzz.relay_members(:'c') m WHERE m.pubkey = pg_temp.pk(8)),
                    ARRAY['mod'], 'relay_members: the roles held');
SELECT pg_temp.t_is((SELECT pg_catalog.string_agg(d #>> '{tags,1,1}', ',') FROM buzz.role_definitions(:'c') d),
                    'admin,member,mod,owner', 'role_definitions');
SELECT pg_temp.t_is(buzz.define_role(:'c', 'tmp', 'Temporary'), 'defined', 'another role defined');
SELECT pg_temp.t_is(buzz.assign_role(:'c', pg_temp.pk(8), 'tmp'), 'assigned', '... and assigned');
SELECT pg_temp.t_is(buzz.unassign_role(:'c', pg_temp.pk(8), 'mod'), 'unassigned', 'unassign_role');
SELECT pg_temp.t_is(pg_temp.flush(), 2, '... published: the list and the 33534');
SELECT pg_temp.t_is(buzz.delete_role(:'c', 'tmp'), 'deleted', 'delete_role');
SELECT pg_temp.t_is(pg_temp.flush(), 2, '... published: the list and the kind 5');
SELECT pg_temp.t_is((SELECT pg_catalog.string_agg(d ->> 'kind', ',') FROM buzz.role_deletions(:'c') d),
                    '5', 'role_deletions');
SELECT pg_temp.t_ok(NOT EXISTS (SELECT FROM buzz.member_list_drift(:'c')), '... member_list_drift: none');

-- The rest of the API
SELECT community_id AS d FROM buzz.create_community('seed.example.org', pg_temp.pk(0)) \gset
SELECT pg_temp.t_is(buzz.allowlist_add(:'d', pg_temp.pk(9)), 'added', 'allowlist_add');
SELECT pg_temp.t_is(buzz.backfill_from_allowlist(:'d'), 1, 'backfill_from_allowlist');
SELECT pg_temp.t_is(pg_temp.flush(), 6, '... published: one list, two 8000, three 33534');
SELECT pg_temp.t_is(buzz.archive_community(:'d'), 'archived', 'archive_community');
SELECT pg_temp.t_is(buzz.republish_member_list(:'d')::text, '', 'republish_member_list');
SELECT pg_temp.t_is(pg_temp.flush(), 4, '... published: the list and three 33534');
SELECT pg_temp.t_is(buzz.unarchive_community(:'d'), 'unarchived', 'unarchive_community');
SELECT pg_temp.t_is(buzz.rotate_relay_key(pg_temp.relay_pubkey()), 0, 'rotate_relay_key: no list by another key');
SELECT pg_temp.t_is(buzz.delete_community(:'d'), 'deleted', 'delete_community');
SELECT pg_temp.t_is(pg_temp.guard(), NULL::text, 'the commit guard passes');
SELECT pg_temp.t_is(pg_catalog.current_setting('search_path'), '""', 'the search_path is still empty');

SELECT * FROM pg_temp.t_finish();
ROLLBACK;
