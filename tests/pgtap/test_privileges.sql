-- Roles and privileges (SPEC section 4).
-- Every function in schema buzz: SECURITY DEFINER, owned by buzz_owner, search_path pinned
-- to pg_catalog, pg_temp (docs/design.md: why not empty), not executable by PUBLIC; buzz_writer may execute all of them but
-- rotate_relay_key, which buzz_key_admin alone may (SPEC section 4), buzz_reader exactly
-- the read functions; neither may touch buzz_private (no USAGE, no table privilege, no
-- function), checked in the catalog and by real attempts under SET LOCAL ROLE (42501); the
-- four roles are NOLOGIN; the advisory lock functions and every buzz_private function are
-- not executable by PUBLIC. Every buzz_private helper pins the same search_path too, but those
-- inlined into their callers (SQL-standard bodies, not SECURITY DEFINER, setting nothing), which
-- are exactly the known ones. The role tables (roles, role_events) alike.
BEGIN;
\ir lib/fixtures.sql

CREATE TEMP TABLE api (name text PRIMARY KEY, is_read boolean NOT NULL);
INSERT INTO api VALUES
    ('add_relay_member', false), ('add_relay_members', false), ('allowlist_add', false),
    ('archive_community', false), ('backfill_from_allowlist', false), ('bootstrap_owner', false),
    ('claim_relay_invite', false), ('claim_relay_membership', false), ('create_community', false),
    ('create_relay_invite', false), ('delete_community', false), ('insert_signed_events', false),
    ('prepare_membership_events', false), ('remove_relay_member', false),
    ('remove_relay_member_if_role', false), ('republish_member_list', false),
    ('revoke_relay_invite', false), ('rotate_relay_key', false), ('transfer_ownership', false),
    ('unarchive_community', false), ('update_relay_member_role', false),
    ('define_role', false), ('delete_role', false), ('assign_role', false), ('unassign_role', false),
    -- writers only: who invited whom (NIP-86 listclaims) is not for readers
    ('relay_invites', false),
    ('set_community_profile', false), ('ban_pubkey', false), ('unban_pubkey', false),
    ('set_join_policy', false), ('request_membership', false), ('approve_join_request', false),
    ('reject_join_request', false),
    ('set_invite_quota', false), ('invites_left', true), ('invite_quotas', true),
    ('community_profile', true), ('banned_pubkeys', true), ('join_requests', true),
    ('community_id', true), ('relay_members', true), ('member_list', true),
    ('membership_events', true), ('member_list_drift', true), ('communities', true),
    ('role_definitions', true), ('role_deletions', true),
    ('relay_member', true), ('membership_events_newest', true), ('relay_key', true), ('invite_branch', true),
    -- moderation behind the gate (NIP-86)
    ('ban_event', false), ('unban_event', false), ('allow_kind', false), ('disallow_kind', false),
    ('clear_kind_rule', false), ('block_ip', false), ('unblock_ip', false),
    ('assign_method', false), ('unassign_method', false), ('banned_events', true),
    ('kind_rules', true), ('blocked_ips', true), ('method_assignees', true),
    ('moderation_rules', true),
    -- what several relay processes share: for the relay (a writer), not readers
    ('accept_auth_event', false), ('take_rate', false), ('rate_reached', false),
    -- members' own profiles (kind 0)
    ('set_member_profile', false), ('member_profiles', true);
-- The buzz_private helpers the planner inlines into their callers (SQL-standard bodies, setting
-- nothing): exactly these.
CREATE TEMP TABLE inlined (fn text PRIMARY KEY);
INSERT INTO inlined VALUES
    ('buzz_private.event_id(text)'), ('buzz_private.event_json(text,text,bigint,integer,text,text)'),
    ('buzz_private.list_lock_key(uuid)'), ('buzz_private.member_event_tags(text)'),
    ('buzz_private.serialize_event(text,bigint,integer,text)'),
    ('buzz_private.role_event_tags(text,text,text,integer,integer)'),
    ('buzz_private.role_deletion_tags(text,text)');
CREATE VIEW pg_temp.fns AS
SELECT p.oid, p.oid::regprocedure::text AS fn, p.proname::text AS name, n.nspname::text AS schema,
       p.prosecdef, p.proowner, p.proconfig, p.proacl
FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
WHERE n.nspname IN ('buzz', 'buzz_private')
  -- The C function of the buzz_bip340 extension is the extension's (checked on its own below).
  AND NOT EXISTS (SELECT FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass
                  AND d.objid = p.oid AND d.deptype = 'e');
CREATE VIEW pg_temp.rels AS
SELECT c.oid, c.oid::regclass::text AS rel, c.relkind
FROM pg_class c WHERE c.relnamespace = 'buzz_private'::regnamespace AND c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S');
CREATE FUNCTION pg_temp.executable_by_public(p_fn oid) RETURNS boolean LANGUAGE sql STABLE
RETURN EXISTS (SELECT FROM pg_proc p, aclexplode(coalesce(p.proacl, acldefault('f', p.proowner))) a
               WHERE p.oid = p_fn AND a.grantee = 0 AND a.privilege_type = 'EXECUTE');
-- A role with no grant at all, for real attempts (gone at ROLLBACK).
CREATE ROLE buzz_pgtap_privileges_stranger NOLOGIN;

SELECT plan(75);

-- The signature check: buzz_private.bip340_verify, of the buzz_bip340 extension
SELECT is((SELECT e.extnamespace::regnamespace::text FROM pg_extension e WHERE e.extname = 'buzz_bip340'),
          'buzz_private', 'the buzz_bip340 extension is installed in buzz_private');
SELECT ok((SELECT p.proisstrict AND p.provolatile = 'i' AND p.proparallel = 's'
           FROM pg_proc p WHERE p.oid = 'buzz_private.bip340_verify(bytea, bytea, bytea)'::regprocedure),
          'bip340_verify is STRICT, IMMUTABLE and PARALLEL SAFE');
SELECT ok(NOT pg_temp.executable_by_public('buzz_private.bip340_verify(bytea, bytea, bytea)'::regprocedure),
          'bip340_verify is not executable by PUBLIC');
SELECT ok(has_function_privilege('buzz_owner', 'buzz_private.bip340_verify(bytea, bytea, bytea)', 'EXECUTE'),
          '... but by buzz_owner, whose functions call it');

-- The API
SELECT functions_are('buzz', ARRAY(SELECT a.name FROM api a), 'schema buzz holds exactly the API functions');
SELECT is_empty($$SELECT c.oid::regclass FROM pg_class c WHERE c.relnamespace = 'buzz'::regnamespace$$,
                '... and no table, view, sequence or index');
SELECT is_empty($$SELECT f.fn FROM pg_temp.fns f WHERE f.schema = 'buzz' AND NOT f.prosecdef$$,
                'every buzz function is SECURITY DEFINER');
SELECT is_empty($$SELECT f.fn FROM pg_temp.fns f WHERE f.proowner <> 'buzz_owner'::regrole$$,
                'every buzz and buzz_private function is owned by buzz_owner');
-- A helper of buzz_private may set nothing so that the planner inlines it into the queries
-- that call it (a function with a SET clause is never inlined): safe only for a SQL-standard
-- body, whose names were bound when it was created, running as its caller (not SECURITY DEFINER).
SELECT is_empty($$SELECT f.fn FROM pg_temp.fns f JOIN pg_proc p ON p.oid = f.oid
                  WHERE f.proconfig IS DISTINCT FROM ARRAY['search_path=pg_catalog, pg_temp']
                    AND NOT (f.schema = 'buzz_private' AND f.proconfig IS NULL AND NOT f.prosecdef
                             AND p.prosqlbody IS NOT NULL
                             AND p.prolang = (SELECT l.oid FROM pg_language l WHERE l.lanname = 'sql'))$$,
                'every buzz and buzz_private function pins search_path to pg_catalog, pg_temp and sets nothing else, '
                'but the inlined helpers (SQL-standard bodies, not SECURITY DEFINER, setting nothing)');
SELECT is_empty($$SELECT f.fn FROM pg_temp.fns f
                  WHERE f.schema = 'buzz' AND f.proconfig IS DISTINCT FROM ARRAY['search_path=pg_catalog, pg_temp']$$,
                '... no API function is one of them');
SELECT set_eq($$SELECT f.fn FROM pg_temp.fns f WHERE f.proconfig IS NULL$$, 'SELECT i.fn FROM inlined i',
              '... the inlined helpers are exactly the known ones (role_event_tags and role_deletion_tags among them)');
SELECT is_empty($$SELECT f.fn FROM pg_temp.fns f WHERE f.schema = 'buzz' AND pg_temp.executable_by_public(f.oid)$$,
                'no buzz function is executable by PUBLIC');
SELECT is_empty($$SELECT f.fn FROM pg_temp.fns f
                  WHERE f.schema = 'buzz' AND has_function_privilege('public', f.oid, 'EXECUTE')$$,
                '... (has_function_privilege agrees)');
SELECT set_eq($$SELECT f.name FROM pg_temp.fns f
               WHERE f.schema = 'buzz' AND NOT has_function_privilege('buzz_writer', f.oid, 'EXECUTE')$$,
              ARRAY['rotate_relay_key'],
              'buzz_writer may execute every buzz function but rotate_relay_key');
SELECT set_eq($$SELECT f.name FROM pg_temp.fns f
               WHERE f.schema = 'buzz' AND has_function_privilege('buzz_key_admin', f.oid, 'EXECUTE')
                 AND NOT has_function_privilege('buzz_writer', f.oid, 'EXECUTE')$$,
              ARRAY['rotate_relay_key'],
              'buzz_key_admin may execute rotate_relay_key, and otherwise what buzz_writer may');
SELECT is_empty($$SELECT a.grantee::regrole FROM pg_proc p, aclexplode(p.proacl) a
                  WHERE p.oid = 'buzz.rotate_relay_key(text, integer)'::regprocedure
                    AND a.privilege_type = 'EXECUTE' AND a.grantee <> p.proowner
                    AND a.grantee <> 'buzz_key_admin'::regrole$$,
                '... granted to buzz_key_admin alone');
SELECT ok(pg_has_role('buzz_key_admin', 'buzz_writer', 'MEMBER'),
          '... who is a writer too (a rotation publishes lists)');
SELECT set_eq($$SELECT f.name FROM pg_temp.fns f
               WHERE f.schema = 'buzz' AND has_function_privilege('buzz_reader', f.oid, 'EXECUTE')$$,
              'SELECT a.name FROM api a WHERE a.is_read',
              'buzz_reader may execute exactly the read functions');
SELECT is_empty($$SELECT f.fn FROM pg_temp.fns f
                  WHERE f.schema = 'buzz' AND has_function_privilege('buzz_pgtap_privileges_stranger', f.oid, 'EXECUTE')$$,
                'a role without grants may execute no buzz function');
SELECT ok(has_schema_privilege('buzz_writer', 'buzz', 'USAGE') AND has_schema_privilege('buzz_reader', 'buzz', 'USAGE'),
          'buzz_writer and buzz_reader have USAGE on schema buzz');
SELECT ok(NOT has_schema_privilege('buzz_writer', 'buzz', 'CREATE') AND NOT has_schema_privilege('buzz_reader', 'buzz', 'CREATE')
          AND NOT has_schema_privilege('public', 'buzz', 'CREATE'),
          '... but nobody may create in it');
SELECT ok(NOT has_schema_privilege('public', 'buzz', 'USAGE'), 'PUBLIC has no USAGE on schema buzz');

-- buzz_private
SELECT is_empty($$SELECT f.fn FROM pg_temp.fns f WHERE f.schema = 'buzz_private' AND pg_temp.executable_by_public(f.oid)$$,
                'no buzz_private function is executable by PUBLIC');
SELECT is_empty($$SELECT f.fn, r.r FROM pg_temp.fns f, unnest(ARRAY['buzz_writer', 'buzz_reader']) r (r)
                  WHERE f.schema = 'buzz_private' AND has_function_privilege(r.r, f.oid, 'EXECUTE')$$,
                '... nor by buzz_writer or buzz_reader');
SELECT ok(NOT has_schema_privilege(r, 'buzz_private', 'USAGE') AND NOT has_schema_privilege(r, 'buzz_private', 'CREATE'),
          format('%s has no USAGE nor CREATE on schema buzz_private', r))
FROM unnest(ARRAY['buzz_writer', 'buzz_reader', 'public']) r;
SELECT isnt_empty('SELECT * FROM pg_temp.rels', 'buzz_private has tables');
SELECT is_empty($$SELECT x.rel, r.r, p.p FROM pg_temp.rels x,
                         unnest(ARRAY['buzz_writer', 'buzz_reader', 'public']) r (r),
                         unnest(ARRAY['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'TRUNCATE', 'REFERENCES', 'TRIGGER']) p (p)
                  WHERE x.relkind <> 'S' AND has_table_privilege(r.r, x.oid, p.p)$$,
                'buzz_writer, buzz_reader and PUBLIC have no privilege on any buzz_private table');
SELECT is_empty($$SELECT x.rel, r.r FROM pg_temp.rels x, unnest(ARRAY['buzz_writer', 'buzz_reader', 'public']) r (r)
                  WHERE x.relkind <> 'S' AND has_any_column_privilege(r.r, x.oid, 'SELECT, INSERT, UPDATE, REFERENCES')$$,
                '... nor on any of their columns');
SELECT is_empty($$SELECT x.rel, r.r, p.p FROM pg_temp.rels x,
                         unnest(ARRAY['buzz_writer', 'buzz_reader', 'public']) r (r),
                         unnest(ARRAY['USAGE', 'SELECT', 'UPDATE']) p (p)
                  WHERE x.relkind = 'S' AND has_sequence_privilege(r.r, x.oid, p.p)$$,
                '... nor on any sequence');
SELECT is_empty($$SELECT x.rel FROM pg_temp.rels x JOIN pg_class c ON c.oid = x.oid
                  WHERE c.relowner <> 'buzz_owner'::regrole$$,
                'every buzz_private table and sequence is owned by buzz_owner');
SELECT is_empty($$SELECT n.nspname FROM pg_namespace n
                  WHERE n.nspname IN ('buzz', 'buzz_private') AND n.nspowner <> 'buzz_owner'::regrole$$,
                'both schemas are owned by buzz_owner');

-- The roles
SELECT is((SELECT count(*) FROM pg_roles r
           WHERE r.rolname IN ('buzz_owner', 'buzz_writer', 'buzz_reader', 'buzz_key_admin')
             AND NOT r.rolcanlogin AND NOT r.rolsuper),
          4::bigint, 'buzz_owner, buzz_writer, buzz_reader and buzz_key_admin exist, NOLOGIN, not superusers');

-- Advisory locks
SELECT is((SELECT count(*) FROM pg_proc p
           WHERE p.pronamespace = 'pg_catalog'::regnamespace
             AND p.proname ~ '^pg_(try_)?advisory_(xact_)?lock(_shared)?$'),
          16::bigint, 'sixteen advisory lock functions');
SELECT is_empty($$SELECT p.oid::regprocedure FROM pg_proc p
                  WHERE p.pronamespace = 'pg_catalog'::regnamespace
                    AND p.proname ~ '^pg_(try_)?advisory_(xact_)?lock(_shared)?$'
                    AND (has_function_privilege('public', p.oid, 'EXECUTE')
                         OR has_function_privilege('buzz_writer', p.oid, 'EXECUTE')
                         OR has_function_privilege('buzz_reader', p.oid, 'EXECUTE'))$$,
                '... none executable by PUBLIC, buzz_writer or buzz_reader');
SELECT ok(NOT has_function_privilege('public', 'pg_advisory_xact_lock(bigint)', 'EXECUTE'),
          'pg_advisory_xact_lock(bigint) in particular');

-- Real attempts
SELECT pg_temp.community() AS c \gset
SET LOCAL ROLE buzz_writer;
SELECT throws_ok('SELECT * FROM buzz_private.relay_members', '42501', NULL, 'buzz_writer: SELECT on a buzz_private table: 42501');
SELECT throws_ok(format($$INSERT INTO buzz_private.relay_members (community_id, pubkey, role) VALUES (%L, %L, 'member')$$,
                        :'c', pg_temp.pk(1)),
                 '42501', NULL, 'buzz_writer: INSERT into relay_members: 42501');
SELECT throws_ok('UPDATE buzz_private.settings SET max_list_lead_seconds = 1', '42501', NULL,
                 'buzz_writer: UPDATE of settings: 42501');
SELECT throws_ok('DELETE FROM buzz_private.member_lists', '42501', NULL, 'buzz_writer: DELETE from member_lists: 42501');
SELECT throws_ok('TRUNCATE buzz_private.relay_invites', '42501', NULL, 'buzz_writer: TRUNCATE: 42501');
SELECT throws_ok('SELECT * FROM buzz_private.roles', '42501', NULL, 'buzz_writer: SELECT on roles: 42501');
SELECT throws_ok(format($$UPDATE buzz_private.roles SET label = 'x' WHERE community_id = %L$$, :'c'), '42501', NULL,
                 'buzz_writer: UPDATE of roles: 42501');
SELECT throws_ok('TRUNCATE buzz_private.roles', '42501', NULL, 'buzz_writer: TRUNCATE roles: 42501');
SELECT throws_ok('TRUNCATE buzz_private.role_events', '42501', NULL, 'buzz_writer: TRUNCATE role_events: 42501');
SELECT throws_ok($$SELECT buzz_private.role_event_tags('a', 'b', NULL, NULL, NULL)$$, '42501', NULL,
                 'buzz_writer: an inlined buzz_private helper: 42501');
SELECT throws_ok($$SELECT buzz_private.normalize_pubkey('x', 'y')$$, '42501', NULL,
                 'buzz_writer: a buzz_private function: 42501');
SELECT throws_ok('SELECT pg_advisory_xact_lock(1)', '42501', NULL, 'buzz_writer: pg_advisory_xact_lock(bigint): 42501');
SELECT throws_ok('SELECT pg_try_advisory_xact_lock(1, 2)', '42501', NULL, 'buzz_writer: pg_try_advisory_xact_lock(int, int): 42501');
SELECT throws_ok('SELECT pg_advisory_lock_shared(1)', '42501', NULL, 'buzz_writer: pg_advisory_lock_shared(bigint): 42501');
SELECT throws_ok('SET LOCAL session_replication_role = replica', '42501', NULL,
                 'buzz_writer may not turn triggers off (session_replication_role): 42501');
SELECT throws_ok('CREATE FUNCTION buzz.x() RETURNS int LANGUAGE sql RETURN 1', '42501', NULL,
                 'buzz_writer may not create in schema buzz: 42501');
SELECT throws_ok(format('SELECT buzz.rotate_relay_key(%L)', pg_temp.relay_pubkey()), '42501', NULL,
                 'buzz_writer: rotate_relay_key: 42501');
SELECT is(buzz.add_relay_member(:'c', pg_temp.pk(1)), 'added', 'buzz_writer may write through the API');
SELECT is(pg_temp.flush(), 2, '... and publish');
SELECT ok(buzz.member_list(:'c') IS NOT NULL, '... and read');
SELECT is(buzz.define_role(:'c', 'mod', 'Moderator') || buzz.assign_role(:'c', pg_temp.pk(1), 'mod'), 'definedassigned',
          'buzz_writer may define and assign a role');
SELECT is(pg_temp.flush(), 2, '... and publish');
SELECT is((SELECT count(*)::integer FROM buzz.role_definitions(:'c')), 4, '... and read the definitions');
SET LOCAL ROLE buzz_reader;
SELECT throws_ok('SELECT * FROM buzz_private.member_lists', '42501', NULL, 'buzz_reader: SELECT on a buzz_private table: 42501');
SELECT throws_ok(format('SELECT buzz_private.list_event(%L)', :'c'), '42501', NULL,
                 'buzz_reader: a buzz_private function: 42501');
SELECT throws_ok('SELECT pg_advisory_xact_lock(1)', '42501', NULL, 'buzz_reader: pg_advisory_xact_lock(bigint): 42501');
SELECT throws_ok(format('SELECT buzz.add_relay_member(%L, %L)', :'c', pg_temp.pk(2)), '42501', NULL,
                 'buzz_reader: a write function: 42501');
SELECT throws_ok($$SELECT * FROM buzz.prepare_membership_events(pg_temp.relay_pubkey())$$, '42501', NULL,
                 'buzz_reader: prepare: 42501');
SELECT throws_ok(format($$SELECT buzz.define_role(%L, 'x', 'X')$$, :'c'), '42501', NULL,
                 'buzz_reader: define_role: 42501');
SELECT throws_ok(format($$SELECT buzz.unassign_role(%L, %L, 'mod')$$, :'c', pg_temp.pk(1)), '42501', NULL,
                 'buzz_reader: unassign_role: 42501');
SELECT throws_ok('SELECT * FROM buzz_private.role_events', '42501', NULL, 'buzz_reader: SELECT on role_events: 42501');
SELECT is((SELECT count(*)::integer FROM buzz.role_definitions(:'c')) + (SELECT count(*)::integer FROM buzz.role_deletions(:'c')),
          4, 'buzz_reader may read the definitions and deletions');
SELECT results_eq(format('SELECT * FROM pg_temp.listed(%L)', :'c'),
                  format('SELECT m.pubkey, m.role FROM buzz.relay_members(%L) m', :'c'),
                  'buzz_reader may read through the API');
SET LOCAL ROLE buzz_pgtap_privileges_stranger;
SELECT throws_ok($$SELECT buzz.community_id('relay.example.org')$$, '42501', NULL,
                 'a role without grants: a read function: 42501');
SELECT throws_ok(format('SELECT buzz.republish_member_list(%L)', :'c'), '42501', NULL,
                 'a role without grants: a write function: 42501');
SELECT throws_ok(format('SELECT * FROM buzz.role_definitions(%L)', :'c'), '42501', NULL,
                 'a role without grants: role_definitions: 42501');
SELECT throws_ok('SELECT pg_advisory_xact_lock(1)', '42501', NULL, 'a role without grants: pg_advisory_xact_lock: 42501');
RESET ROLE;
SET LOCAL ROLE buzz_owner;
SELECT lives_ok('SELECT pg_advisory_xact_lock(42)', 'buzz_owner may take advisory locks');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
