-- buzz.set_community_profile(p_community uuid, p_field text, p_value text) -> text
-- Outcomes updated / unchanged for each field (name, description, icon), NULL clearing, the
-- bounds (name 1-64 printable characters, description 1-2000 without control characters but
-- tab and line breaks, icon an https:// URL of at most 500 without spaces, quotes, angle
-- brackets or backslashes), unknown fields (22023), BZNCM, BZARC, no list ever owed, nothing
-- changed by a refused call, and who may call it.
BEGIN;
\ir lib/fixtures.sql

-- The stored profile row of a community as (name, description, icon, join_policy).
CREATE FUNCTION pg_temp.profile_is(p_community uuid, p_expected text, p_description text)
RETURNS text LANGUAGE plpgsql
AS $$ BEGIN RETURN results_eq(format('SELECT * FROM buzz.community_profile(%L)', p_community),
                              p_expected, p_description); END $$;
CREATE FUNCTION pg_temp.set_throws(p_community uuid, p_field text, p_value text, p_code text,
                                   p_description text)
RETURNS text LANGUAGE sql
RETURN throws_ok(format('SELECT buzz.set_community_profile(%L, %L, %L)', p_community, p_field, p_value),
                 p_code, NULL, p_description);
CREATE FUNCTION pg_temp.rows_of(p_community uuid) RETURNS bigint LANGUAGE sql
RETURN (SELECT count(*) FROM buzz_private.community_profiles p WHERE p.community_id = p_community);
-- An icon URL of exactly n characters.
CREATE FUNCTION pg_temp.icon(n integer) RETURNS text LANGUAGE sql IMMUTABLE
RETURN 'https://img.example.org/' || repeat('i', n - 28) || '.png';

SELECT plan(78);

SELECT function_returns('buzz', 'set_community_profile', ARRAY['uuid', 'text', 'text'],
                        'text', 'set_community_profile returns text');

SELECT pg_temp.community() AS c \gset
SELECT pg_temp.community('archived.example.org') AS archived \gset
SELECT buzz.archive_community(:'archived') AS archive_outcome \gset

-- Clearing what was never set makes no row
SELECT is(buzz.set_community_profile(:'c', 'name', NULL), 'unchanged',
          'clearing the name of a community without a profile: unchanged');
SELECT is(pg_temp.rows_of(:'c'), 0::bigint, '... and no profile row is made');

-- name
SELECT is(buzz.set_community_profile(:'c', 'name', 'Buzz'), 'updated', 'a name is set: updated');
SELECT pg_temp.profile_is(:'c', $$VALUES ('Buzz', NULL::text, NULL::text, 'invite')$$,
                          '... community_profile shows it, the join policy still invite');
SELECT ok(NOT pg_temp.marked(), '... not a membership write: no list owed');
SELECT is(buzz.set_community_profile(:'c', 'name', 'Buzz'), 'unchanged', 'the same name again: unchanged');
SELECT is(buzz.set_community_profile(:'c', 'name', 'buzz'), 'updated', '... another case is another name: updated');
SELECT is(buzz.set_community_profile(:'c', 'name', repeat('n', 64)), 'updated', 'a name of 64 characters');
SELECT is(buzz.set_community_profile(:'c', 'name', repeat(U&'\00E9', 64)), 'updated',
          'a name of 64 non-ASCII characters (128 bytes): characters are counted');
SELECT is(buzz.set_community_profile(:'c', 'name', 'A'), 'updated', 'a name of one character');
SELECT is(buzz.set_community_profile(:'c', 'name', $$Bob's "Relay" <b>$$), 'updated',
          'a name with quotes and angle brackets is text');
SELECT pg_temp.profile_is(:'c', $$VALUES ($x$Bob's "Relay" <b>$x$, NULL::text, NULL::text, 'invite')$$,
                          '... stored as given');
SELECT pg_temp.set_throws(:'c', 'name', repeat('n', 65), '22023', 'a name of 65 characters: 22023');
SELECT pg_temp.set_throws(:'c', 'name', repeat(U&'\00E9', 65), '22023', 'a name of 65 non-ASCII characters: 22023');
SELECT pg_temp.set_throws(:'c', 'name', '', '22023', 'an empty name: 22023 (NULL clears)');
SELECT pg_temp.set_throws(:'c', 'name', E'two\nlines', '22023', 'a name with a line break: 22023');
SELECT pg_temp.set_throws(:'c', 'name', E'a\tb', '22023', 'a name with a tab: 22023');
SELECT pg_temp.set_throws(:'c', 'name', E'\x1b[31mred', '22023', 'a name with an escape: 22023');
SELECT pg_temp.set_throws(:'c', 'name', E'del\x7f', '22023', 'a name with DEL: 22023');
SELECT pg_temp.set_throws(:'c', 'name', U&'nel\0085', '22023', 'a name with a C1 control (NEL): 22023');
SELECT pg_temp.set_throws(:'c', 'name', '   ', '22023', 'a name of spaces: 22023, never trimmed');
SELECT pg_temp.set_throws(:'c', 'name', U&'\2003', '22023', 'a name of an em space: 22023');
SELECT pg_temp.set_throws(:'c', 'name', U&'gro\202Epu', '22023', 'a name with U+202E (right-to-left override): 22023');
SELECT pg_temp.set_throws(:'c', 'name', U&'zero\200Dwidth', '22023', 'a name with a zero-width joiner: 22023');
SELECT pg_temp.set_throws(:'c', 'name', U&'line\2028sep', '22023', 'a name with U+2028: 22023');
SELECT pg_temp.profile_is(:'c', $$VALUES ($x$Bob's "Relay" <b>$x$, NULL::text, NULL::text, 'invite')$$,
                          'the refused names changed nothing');

-- description
SELECT is(buzz.set_community_profile(:'c', 'description', repeat('d', 2000)), 'updated',
          'a description of 2000 characters');
SELECT is(buzz.set_community_profile(:'c', 'description', E'Line one\r\nline two\n'), 'updated',
          'a description with line breaks');
SELECT is((SELECT p.description FROM buzz.community_profile(:'c') p), E'Line one\r\nline two\n',
          '... stored as given');
SELECT is(buzz.set_community_profile(:'c', 'description', E'Line one\r\nline two\n'), 'unchanged',
          '... again: unchanged');
SELECT pg_temp.set_throws(:'c', 'description', repeat('d', 2001), '22023', 'a description of 2001 characters: 22023');
SELECT pg_temp.set_throws(:'c', 'description', '', '22023', 'an empty description: 22023');
SELECT pg_temp.set_throws(:'c', 'description', E'bell\x07', '22023', 'a description with BEL: 22023');
SELECT pg_temp.set_throws(:'c', 'description', E'\x1b[2J', '22023', 'a description with an escape: 22023');
SELECT pg_temp.set_throws(:'c', 'description', E'form\x0cfeed', '22023', 'a description with a form feed: 22023');
SELECT pg_temp.set_throws(:'c', 'description', U&'csi\009b', '22023', 'a description with a C1 control: 22023');
SELECT pg_temp.set_throws(:'c', 'description', E'a\tb', '22023', 'a description with a tab: 22023');
SELECT pg_temp.set_throws(:'c', 'description', E'\n \n', '22023', 'a description of blank lines: 22023');
SELECT pg_temp.set_throws(:'c', 'description', U&'one\2029two', '22023', 'a description with U+2029: 22023');
SELECT pg_temp.set_throws(:'c', 'description', U&'bidi \2067isolate\2069', '22023',
                          'a description with a bidirectional isolate: 22023');
SELECT is((SELECT p.description FROM buzz.community_profile(:'c') p), E'Line one\r\nline two\n',
          'the refused descriptions changed nothing');

-- icon
SELECT is(length(pg_temp.icon(500)), 500, '(an icon URL of 500 characters)');
SELECT is(buzz.set_community_profile(:'c', 'icon', pg_temp.icon(500)), 'updated', 'an icon of 500 characters');
SELECT is(buzz.set_community_profile(:'c', 'icon', 'https://img.example.org:8443/a/b.png?size=64&x=%20#top'),
          'updated', 'an icon with a port, a query, an escape and a fragment');
SELECT is(buzz.set_community_profile(:'c', 'icon', 'https://x'), 'updated', 'an icon that is only a host');
SELECT pg_temp.set_throws(:'c', 'icon', pg_temp.icon(501), '22023', 'an icon of 501 characters: 22023');
SELECT pg_temp.set_throws(:'c', 'icon', 'http://img.example.org/i.png', '22023', 'an http:// icon: 22023');
SELECT pg_temp.set_throws(:'c', 'icon', 'img.example.org/i.png', '22023', 'an icon without a scheme: 22023');
SELECT pg_temp.set_throws(:'c', 'icon', 'https://', '22023', 'https:// alone: 22023');
SELECT pg_temp.set_throws(:'c', 'icon', 'https:///i.png', '22023', 'an icon without a host: 22023');
SELECT pg_temp.set_throws(:'c', 'icon', 'javascript:alert(1)', '22023', 'a javascript: URL: 22023');
SELECT pg_temp.set_throws(:'c', 'icon', 'data:image/png;base64,AAAA', '22023', 'a data: URL: 22023');
SELECT pg_temp.set_throws(:'c', 'icon', 'https://img.example.org/a b.png', '22023', 'an icon with a space: 22023');
SELECT pg_temp.set_throws(:'c', 'icon', 'https://img.example.org/a.png ', '22023', '... a trailing space: 22023');
SELECT pg_temp.set_throws(:'c', 'icon', 'https://img.example.org/"onerror="x', '22023', 'an icon with a double quote: 22023');
SELECT pg_temp.set_throws(:'c', 'icon', 'https://img.example.org/<script>', '22023', 'an icon with angle brackets: 22023');
SELECT pg_temp.set_throws(:'c', 'icon', E'https://img.example.org/a\\b.png', '22023', 'an icon with a backslash: 22023');
SELECT pg_temp.set_throws(:'c', 'icon', E'https://img.example.org/\n.png', '22023', 'an icon with a line break: 22023');
SELECT pg_temp.set_throws(:'c', 'icon', '', '22023', 'an empty icon: 22023');
SELECT is((SELECT p.icon FROM buzz.community_profile(:'c') p), 'https://x', 'the refused icons changed nothing');

-- Clearing, fields apart
SELECT is(buzz.set_community_profile(:'c', 'icon', NULL), 'updated', 'the icon cleared: updated');
SELECT is(buzz.set_community_profile(:'c', 'icon', NULL), 'unchanged', '... again: unchanged');
SELECT pg_temp.profile_is(:'c', $$VALUES ($x$Bob's "Relay" <b>$x$, E'Line one\r\nline two\n', NULL::text, 'invite')$$,
                          '... the other fields keep their values');

-- Fields
SELECT pg_temp.set_throws(:'c', NULL, 'x', '22023', 'a NULL field: 22023');
SELECT pg_temp.set_throws(:'c', 'Name', 'x', '22023', 'a field in another case: 22023');
SELECT pg_temp.set_throws(:'c', 'join_policy', 'open', '22023', 'join_policy is not a profile field here: 22023');
SELECT pg_temp.set_throws(:'c', 'banner', 'https://x', '22023', 'an unknown field: 22023');

-- The community
SELECT pg_temp.set_throws(gen_random_uuid(), 'name', 'X', 'BZNCM', 'an unknown community: BZNCM');
SELECT pg_temp.set_throws(NULL, 'name', 'X', 'BZNCM', 'a NULL community: BZNCM');
SELECT pg_temp.set_throws(:'archived', 'name', 'X', 'BZARC', 'an archived community: BZARC');
SELECT pg_temp.set_throws(:'archived', 'name', NULL, 'BZARC', '... also to clear a field');
SELECT pg_temp.set_throws(gen_random_uuid(), 'name', repeat('n', 65), '22023',
                          'a bad value on an unknown community: 22023, arguments first');
SELECT is(pg_temp.rows_of(:'archived'), 0::bigint, 'the archived community got no profile row');
SELECT ok(NOT pg_temp.marked(), 'no call owed a list');

-- Who may call it
SET LOCAL ROLE buzz_writer;
SELECT is(buzz.set_community_profile(:'c', 'name', 'By the writer'), 'updated', 'buzz_writer may set the profile');
RESET ROLE;
SET LOCAL ROLE buzz_reader;
SELECT pg_temp.set_throws(:'c', 'name', 'By the reader', '42501', 'buzz_reader may not');
RESET ROLE;
CREATE ROLE buzz_pgtap_nobody_set_community_profile NOLOGIN;
-- Only the schema: the refusal must come from EXECUTE not being granted to PUBLIC.
GRANT USAGE ON SCHEMA buzz TO buzz_pgtap_nobody_set_community_profile;
SET LOCAL ROLE buzz_pgtap_nobody_set_community_profile;
SELECT pg_temp.set_throws(:'c', 'name', 'By nobody', '42501', 'a role without grants may not');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
