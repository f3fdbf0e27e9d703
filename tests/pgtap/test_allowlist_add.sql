-- buzz.allowlist_add(p_community uuid, p_pubkey text, p_note text DEFAULT NULL) -> text
-- Outcomes added / already_listed (the note kept), not a membership write (no member change,
-- no list owed), argument errors (BZIPK, 22023, BZNCM, BZARC) and who may call it.
BEGIN;
\ir lib/fixtures.sql

-- The allowlist of a community as (pubkey, note).
CREATE FUNCTION pg_temp.allowlist(p_community uuid) RETURNS TABLE (pubkey text, note text)
LANGUAGE sql
BEGIN ATOMIC
    SELECT a.pubkey, a.note FROM buzz_private.relay_allowlist a WHERE a.community_id = p_community;
END;

SELECT plan(31);

SELECT function_returns('buzz', 'allowlist_add', ARRAY['uuid', 'text', 'text'],
                        'text', 'allowlist_add returns text');

SELECT pg_temp.community() AS c \gset
SELECT pg_temp.community('archived.example.org') AS archived \gset
SELECT buzz.archive_community(:'archived') AS archive_outcome \gset

-- added
SELECT is(buzz.allowlist_add(:'c', pg_temp.pk(1)), 'added', 'a pubkey is allowlisted');
SELECT is(buzz.allowlist_add(:'c', upper(pg_temp.pk(2)), 'from the import'), 'added',
          'an uppercase pubkey is allowlisted with a note');
SELECT is(buzz.allowlist_add(:'c', pg_temp.pk(0)), 'added', 'the owner may be allowlisted too');
SELECT is(buzz.allowlist_add(:'c', pg_temp.pk(3), repeat('n', 1000)), 'added',
          'a note of 1000 characters is accepted');
SELECT set_eq(format('SELECT * FROM pg_temp.allowlist(%L)', :'c'),
              $$VALUES (pg_temp.pk(0), NULL), (pg_temp.pk(1), NULL),
                       (pg_temp.pk(2), 'from the import'), (pg_temp.pk(3), repeat('n', 1000))$$,
              '... all on the allowlist, lowercased, with their notes');
SELECT pg_temp.members_are(:'c', $$VALUES (pg_temp.pk(0), 'owner')$$,
                           'allowlisting makes nobody a member');
SELECT ok(NOT pg_temp.marked(), '... and owes no list (not a membership write)');
SELECT is((SELECT count(*)::integer FROM pg_temp.prepared()), 0, '... prepare has nothing to do');

-- already_listed
SELECT is(buzz.allowlist_add(:'c', pg_temp.pk(2), 'another note'), 'already_listed',
          'an allowlisted pubkey answers already_listed');
SELECT is(buzz.allowlist_add(:'c', upper(pg_temp.pk(1))), 'already_listed',
          '... also named in uppercase');
SELECT set_eq(format('SELECT * FROM pg_temp.allowlist(%L)', :'c'),
              $$VALUES (pg_temp.pk(0), NULL), (pg_temp.pk(1), NULL),
                       (pg_temp.pk(2), 'from the import'), (pg_temp.pk(3), repeat('n', 1000))$$,
              '... the note is left as it was');
SELECT ok(NOT pg_temp.marked(), 'already_listed owes no list');

-- the allowlist is per community
SELECT pg_temp.community('second.example.org') AS second \gset
SELECT is(buzz.allowlist_add(:'second', pg_temp.pk(1)), 'added',
          'a pubkey allowlisted in one community is added in another');
SELECT set_eq(format('SELECT pubkey FROM pg_temp.allowlist(%L)', :'second'),
              $$VALUES (pg_temp.pk(1))$$, '... whose allowlist has only it');

-- argument errors
SELECT throws_ok(format('SELECT buzz.allowlist_add(%L, NULL)', :'c'),
                 'BZIPK', NULL, 'a NULL pubkey raises BZIPK');
SELECT throws_ok(format('SELECT buzz.allowlist_add(%L, %L)', :'c', left(pg_temp.pk(4), 63)),
                 'BZIPK', NULL, 'a pubkey of 63 hex characters raises BZIPK');
SELECT throws_ok(format('SELECT buzz.allowlist_add(%L, %L)', :'c', repeat('k', 64)),
                 'BZIPK', NULL, 'a pubkey with non-hex characters raises BZIPK');
SELECT throws_ok(format('SELECT buzz.allowlist_add(%L, %L)', :'c', 'npub1' || repeat('q', 59)),
                 'BZIPK', NULL, 'an npub raises BZIPK');
SELECT throws_ok(format('SELECT buzz.allowlist_add(%L, %L, %L)', :'c', pg_temp.pk(4), repeat('n', 1001)),
                 '22023', NULL, 'a note of 1001 characters raises 22023');
SELECT throws_ok(format('SELECT buzz.allowlist_add(%L, %L, %L)', :'c', pg_temp.pk(1), repeat('n', 1001)),
                 '22023', NULL, '... also for a listed pubkey (before already_listed)');
SELECT throws_ok(format('SELECT buzz.allowlist_add(NULL, %L)', pg_temp.pk(4)),
                 'BZNCM', NULL, 'a NULL community raises BZNCM');
SELECT throws_ok(format('SELECT buzz.allowlist_add(%L, %L)', gen_random_uuid(), pg_temp.pk(4)),
                 'BZNCM', NULL, 'an unknown community raises BZNCM');
SELECT throws_ok(format('SELECT buzz.allowlist_add(%L, %L)', :'archived', pg_temp.pk(4)),
                 'BZARC', NULL, 'allowlisting in an archived community raises BZARC');
SELECT ok(NOT EXISTS (SELECT FROM buzz_private.relay_allowlist a WHERE a.pubkey = pg_temp.pk(4)),
          'the failed calls allowlisted nobody');

-- privileges
SET LOCAL ROLE buzz_writer;
SELECT is(buzz.allowlist_add(:'c', pg_temp.pk(5)), 'added', 'buzz_writer may allowlist a pubkey');
RESET ROLE;
SET LOCAL ROLE buzz_reader;
SELECT throws_ok(format('SELECT buzz.allowlist_add(%L, %L)', :'c', pg_temp.pk(6)),
                 '42501', NULL, 'buzz_reader may not allowlist a pubkey');
RESET ROLE;
CREATE ROLE buzz_pgtap_nobody_allowlist_add NOLOGIN;
-- Only the schema: the refusal must come from EXECUTE not being granted to PUBLIC.
GRANT USAGE ON SCHEMA buzz TO buzz_pgtap_nobody_allowlist_add;
SET LOCAL ROLE buzz_pgtap_nobody_allowlist_add;
SELECT throws_ok(format('SELECT buzz.allowlist_add(%L, %L)', :'c', pg_temp.pk(6)),
                 '42501', NULL, 'a role without grants may not allowlist a pubkey');
RESET ROLE;
SELECT set_eq(format('SELECT pubkey FROM pg_temp.allowlist(%L)', :'c'),
              $$VALUES (pg_temp.pk(0)), (pg_temp.pk(1)), (pg_temp.pk(2)), (pg_temp.pk(3)), (pg_temp.pk(5))$$,
              'in the end the allowlist has the writer''s pubkey and not the refused one');
SELECT pg_temp.list_is_members(:'c', 'the live list still names exactly the members');
SELECT ok(NOT pg_temp.marked(), 'and no list is owed');

SELECT * FROM finish();
ROLLBACK;
