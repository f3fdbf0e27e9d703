-- buzz.define_role(p_community uuid, p_role text, p_label text, p_description text DEFAULT NULL,
--                  p_color integer DEFAULT NULL, p_order integer DEFAULT NULL) -> text
-- Outcomes defined / updated / unchanged, the stored definition and its prepared 33534 (exact
-- serialized text and tags with all, some or none of the optional fields, JSON escaping of
-- quotes, backslashes and non-ASCII text), no list for a definition-only change (also of a
-- role that is held), the created_at rule against the community's newest list and role event,
-- base roles redefined, every bound of label (1-64 printable characters), description (at
-- most 500), color (0-360) and order (any integer): 22023; malformed role ids (BZIRL, also
-- where the call would otherwise answer an outcome), BZNCM, BZARC, BZISO under REPEATABLE READ
-- and SERIALIZABLE, and who may call it.

-- BZISO: a transaction of its own (its isolation level is set before its first statement),
-- rolled back; psql keeps the SQLSTATEs for the suite's transaction below.
BEGIN ISOLATION LEVEL REPEATABLE READ;
\ir lib/fixtures.sql
SELECT pg_temp.sqlstate_of(format($$SELECT buzz.define_role(%L, 'mod', 'Moderator')$$, gen_random_uuid()))
       AS iso_repeatable_read \gset
ROLLBACK;
BEGIN ISOLATION LEVEL SERIALIZABLE;
\ir lib/fixtures.sql
SELECT pg_temp.sqlstate_of(format($$SELECT buzz.define_role(%L, 'mod', 'Moderator')$$, gen_random_uuid()))
       AS iso_serializable \gset
ROLLBACK;

BEGIN;
\ir lib/fixtures.sql

CREATE FUNCTION pg_temp.bad(p_sql text, p_description text) RETURNS text LANGUAGE sql
RETURN throws_ok(p_sql, '22023', NULL, p_description);
CREATE FUNCTION pg_temp.irl(p_sql text, p_description text) RETURNS text LANGUAGE sql
RETURN throws_ok(p_sql, 'BZIRL', NULL, p_description);
-- The stored definition of a role as (label, description, color, order).
CREATE FUNCTION pg_temp.definition(p_community uuid, p_role text)
RETURNS TABLE (label text, description text, color integer, sort_order integer) LANGUAGE sql
BEGIN ATOMIC
    SELECT r.label, r.description, r.color, r.sort_order FROM buzz_private.roles r
    WHERE r.community_id = p_community AND r.role_id = p_role;
END;
-- The live 33534 of a role (json), or NULL.
CREATE FUNCTION pg_temp.live(p_community uuid, p_role text) RETURNS json LANGUAGE sql
BEGIN ATOMIC
    SELECT d FROM buzz.role_definitions(p_community) d WHERE d #>> '{tags,1,1}' = p_role;
END;

SELECT plan(116);

SELECT function_returns('buzz', 'define_role', ARRAY['uuid', 'text', 'text', 'text', 'integer', 'integer'],
                        'text', 'define_role returns text');
SELECT is(pg_get_function_arguments('buzz.define_role(uuid, text, text, text, integer, integer)'::regprocedure),
          'p_community uuid, p_role text, p_label text, p_description text DEFAULT NULL::text, '
          'p_color integer DEFAULT NULL::integer, p_order integer DEFAULT NULL::integer',
          '... description, color and order default to NULL');

SELECT pg_temp.community() AS c \gset
SELECT pg_temp.community('archived.example.org') AS archived \gset
SELECT buzz.add_relay_member(:'c', pg_temp.pk(1)) AS setup_1 \gset
SELECT pg_temp.flush() AS setup_published \gset
SELECT buzz.archive_community(:'archived') AS archive_outcome \gset
SELECT buzz.member_list(:'c') ->> 'id' AS list_id \gset

-- defined
SELECT is(buzz.define_role(:'c', 'mod', 'Moderator'), 'defined', 'a new role is defined');
SELECT results_eq(format('SELECT * FROM pg_temp.definition(%L, %L)', :'c', 'mod'),
                  $$VALUES ('Moderator', NULL::text, NULL::integer, NULL::integer)$$,
                  '... stored with its label, no description, color or order');
SELECT ok(pg_temp.marked(), '... the community owes its 33534');
SELECT is(pg_temp.shapes(),
          ARRAY[pg_temp.shape(33534, '[["-"],["d","mod"],["label","Moderator"]]')],
          '... prepared as its 33534 alone: [["-"],["d","mod"],["label","Moderator"]], no list');
SELECT is(pg_temp.flush(), 1, '... published');
SELECT is((pg_temp.live(:'c', 'mod') -> 'tags')::text, '[["-"],["d","mod"],["label","Moderator"]]',
          '... the live 33534 has those tags');
SELECT is(buzz.member_list(:'c') ->> 'id', :'list_id', '... and the list is the same one');
SELECT pg_temp.members_are(:'c', $$VALUES (pg_temp.pk(0), 'owner'), (pg_temp.pk(1), 'member')$$,
                           '... no member changed');
SELECT ok(NOT pg_temp.marked(), 'nothing is owed once published');

-- unchanged
SELECT is(buzz.define_role(:'c', 'mod', 'Moderator'), 'unchanged', 'the same definition again: unchanged');
SELECT is(buzz.define_role(:'c', 'mod', 'Moderator', NULL, NULL, NULL), 'unchanged',
          '... also with the defaults spelled out');
SELECT ok(NOT pg_temp.marked(), '... owes nothing');
SELECT is_empty('SELECT * FROM pg_temp.prepared()', '... prepares nothing');

-- updated: all, some, none of the optional fields
SELECT is(buzz.define_role(:'c', 'mod', 'Moderator', 'Keeps order', 200, 5), 'updated',
          'description, color and order set: updated');
SELECT results_eq(format('SELECT * FROM pg_temp.definition(%L, %L)', :'c', 'mod'),
                  $$VALUES ('Moderator', 'Keeps order', 200, 5)$$, '... stored');
SELECT is(pg_temp.shapes(),
          ARRAY[pg_temp.shape(33534, '[["-"],["d","mod"],["label","Moderator"],["description","Keeps order"],'
                                     '["color","200"],["order","5"]]')],
          '... its 33534 has every tag, in the order label, description, color, order');
SELECT is(pg_temp.flush(), 1, '... published');
SELECT is(buzz.define_role(:'c', 'mod', 'Moderator', 'Keeps order', 200, 5), 'unchanged', '... then unchanged');
SELECT is(buzz.define_role(:'c', 'mod', 'Moderator', NULL, 0, NULL), 'updated', 'description and order unset, color 0: updated');
SELECT is(pg_temp.shapes(),
          ARRAY[pg_temp.shape(33534, '[["-"],["d","mod"],["label","Moderator"],["color","0"]]')],
          '... unset fields have no tag, color 0 is one');
SELECT is(pg_temp.flush(), 1, '... published');
SELECT is(buzz.define_role(:'c', 'mod', 'Moderator', 'Keeps order'), 'updated', 'a description alone: updated');
SELECT is(pg_temp.shapes(),
          ARRAY[pg_temp.shape(33534, '[["-"],["d","mod"],["label","Moderator"],["description","Keeps order"]]')],
          '... its tags');
SELECT is(buzz.define_role(:'c', 'mod', 'Moderator', p_order => -7), 'updated', 'a negative order alone: updated');
SELECT is(pg_temp.shapes(),
          ARRAY[pg_temp.shape(33534, '[["-"],["d","mod"],["label","Moderator"],["order","-7"]]')],
          '... ["order","-7"]; prepared again, the earlier definition is replaced');
SELECT is(buzz.define_role(:'c', 'mod', 'Mod', p_color => 360, p_order => 0), 'updated', 'a new label, color 360, order 0: updated');
SELECT is(pg_temp.shapes(),
          ARRAY[pg_temp.shape(33534, '[["-"],["d","mod"],["label","Mod"],["color","360"],["order","0"]]')],
          '... its tags');
SELECT is(pg_temp.flush(), 1, '... published once');
SELECT is((pg_temp.live(:'c', 'mod') -> 'tags')::text, '[["-"],["d","mod"],["label","Mod"],["color","360"],["order","0"]]',
          '... the live 33534 is the last definition');

-- JSON escaping: as JSON.stringify writes it (quotes and backslashes escaped, non-ASCII as is)
SELECT is(buzz.define_role(:'c', 'quote', 'Say "hi" \ back', 'C:\path "x" \\ y'), 'defined',
          'a label and description with quotes and backslashes');
SELECT is(pg_temp.shapes(),
          ARRAY[pg_temp.shape(33534, '[["-"],["d","quote"],["label","Say \"hi\" \\ back"],'
                                     '["description","C:\\path \"x\" \\\\ y"]]')],
          '... escaped as \" and \\');
SELECT is(buzz.define_role(:'c', 'intl', U&'Mod\00E9rateur \+01F6E1', U&'\65E5\672C\8A9E \00FF'), 'defined',
          'a label and description with non-ASCII characters');
SELECT is(pg_temp.shapes(),
          ARRAY[pg_temp.shape(33534, '[["-"],["d","intl"],["label","Mod' || U&'\00E9rateur \+01F6E1'
                                     || '"],["description","' || U&'\65E5\672C\8A9E \00FF' || '"]]'),
                pg_temp.shape(33534, '[["-"],["d","quote"],["label","Say \"hi\" \\ back"],'
                                     '["description","C:\\path \"x\" \\\\ y"]]')],
          '... written as UTF-8, not escaped, ids the sha256 of those bytes (both roles, by role id)');
SELECT is(pg_temp.flush(), 2, '... published');
SELECT ok(pg_temp.id_ok(pg_temp.live(:'c', 'intl')) AND pg_temp.id_ok(pg_temp.live(:'c', 'quote')),
          '... the live events hash their content');
SELECT is(pg_temp.live(:'c', 'quote') #>> '{tags,2,1}', 'Say "hi" \ back', '... and read back as given');

-- Bounds that are accepted
SELECT is(buzz.define_role(:'c', repeat('a', 64), 'X'), 'defined', 'a role id of 64 characters, a label of 1');
SELECT is(buzz.define_role(:'c', '0-_z', repeat('L', 64), repeat('d', 500)), 'defined',
          'a role id of digits, - and _; a label of 64 characters; a description of 500');
SELECT is(buzz.define_role(:'c', 'wide', repeat(U&'\00E9', 64), repeat(U&'\00E9', 500)), 'defined',
          '... counted in characters, not bytes');
SELECT is(buzz.define_role(:'c', 'min', 'Min', p_order => -2147483648), 'defined', 'order -2147483648');
SELECT is(buzz.define_role(:'c', 'max', 'Max', p_order => 2147483647), 'defined', 'order 2147483647');
SELECT is(buzz.define_role(:'c', 'spaces', ' x  y ', ' z '), 'defined', 'spaces around a name are kept, never trimmed');
SELECT is((SELECT count(*)::integer FROM pg_temp.prepared() p WHERE p.kind = 33534), 6, '... six 33534s prepared');
SELECT is(pg_temp.flush(), 6, '... published');

-- A role that is held: redefining it changes no member tag, so no list
SELECT is(buzz.assign_role(:'c', pg_temp.pk(1), 'mod'), 'assigned', 'the role is assigned');
SELECT is(pg_temp.flush(), 1, '... the list published');
SELECT buzz.member_list(:'c') ->> 'id' AS list_id \gset
SELECT is(buzz.define_role(:'c', 'mod', 'Moderator'), 'updated', 'a held role redefined');
SELECT pg_temp.events_are($$VALUES (33534, 'mod')$$, '... its 33534 alone: no list');
SELECT is(pg_temp.flush(), 1, '... published');
SELECT is(buzz.member_list(:'c') ->> 'id', :'list_id', '... the list is the same one');
SELECT is((SELECT m.roles FROM buzz.relay_members(:'c') m WHERE m.pubkey = pg_temp.pk(1)), ARRAY['mod'],
          '... the member still holds it');

-- Base roles may be redefined
SELECT is(buzz.define_role(:'c', 'owner', 'Proprietor', 'Runs the place', 30, 0), 'updated', 'owner redefined');
SELECT is(pg_temp.shapes(),
          ARRAY[pg_temp.shape(33534, '[["-"],["d","owner"],["label","Proprietor"],["description","Runs the place"],'
                                     '["color","30"],["order","0"]]')],
          '... its 33534 alone');
SELECT is(pg_temp.flush(), 1, '... published');
SELECT pg_temp.members_are(:'c', $$VALUES (pg_temp.pk(0), 'owner'), (pg_temp.pk(1), 'member')$$,
                           '... the owner is still the owner');
SELECT is(buzz.define_role(:'c', 'admin', 'Admin', NULL, NULL, 1), 'unchanged', 'admin as created: unchanged');
SELECT is(buzz.define_role(:'c', 'member', 'Member', p_order => 2), 'unchanged', 'member as created: unchanged');

-- created_at: one second past the community's newest list and newest role event
SELECT pg_temp.clock() AS now \gset
-- (Moved ahead, the list's and the admin 33534's ids no longer hash their content; both are
-- republished at the end.)
UPDATE buzz_private.member_lists SET created_at = :now + 40 WHERE community_id = :'c';
SELECT is(buzz.define_role(:'c', 'mod', 'Moderator', 'again'), 'updated', 'the list 40 s ahead: a redefinition ...');
SELECT is((SELECT p.created_at FROM pg_temp.prepared() p), :now + 41::bigint,
          '... its 33534 one second past the newest list');
UPDATE buzz_private.role_events SET created_at = :now + 60 WHERE community_id = :'c' AND role_id = 'admin';
SELECT is((SELECT p.created_at FROM pg_temp.prepared() p), :now + 61::bigint,
          'a role event 60 s ahead: one second past the newest role event');
SELECT is(pg_temp.flush(), 1, '... published');
SELECT is((pg_temp.live(:'c', 'mod') ->> 'created_at')::bigint, :now + 61::bigint, '... live with that created_at');
SELECT is(buzz.define_role(:'c', 'mod', 'Moderator', 'once more'), 'updated', 'redefined again');
SELECT is((SELECT p.created_at FROM pg_temp.prepared() p), :now + 62::bigint,
          '... one second past its own previous 33534');
SELECT is(pg_temp.flush(), 1, '... published');

-- 22023: label
SELECT pg_temp.bad(format($$SELECT buzz.define_role(%L, 'x', NULL)$$, :'c'), 'a NULL label: 22023');
SELECT pg_temp.bad(format($$SELECT buzz.define_role(%L, 'x', '')$$, :'c'), 'an empty label: 22023');
SELECT pg_temp.bad(format($$SELECT buzz.define_role(%L, 'x', %L)$$, :'c', repeat('L', 65)),
                   'a label of 65 characters: 22023');
SELECT pg_temp.bad(format($$SELECT buzz.define_role(%L, 'x', %L)$$, :'c', E'a\nb'), 'a newline in the label: 22023');
SELECT pg_temp.bad(format($$SELECT buzz.define_role(%L, 'x', %L)$$, :'c', E'a\tb'), 'a tab in the label: 22023');
SELECT pg_temp.bad(format($$SELECT buzz.define_role(%L, 'x', %L)$$, :'c', E'\x01'), 'U+0001 in the label: 22023');
SELECT pg_temp.bad(format($$SELECT buzz.define_role(%L, 'x', %L)$$, :'c', E'a\x7f'), 'U+007F (DEL) in the label: 22023');
SELECT pg_temp.bad(format($$SELECT buzz.define_role(%L, 'x', %L)$$, :'c', U&'a\0085'), 'U+0085 (C1) in the label: 22023');
SELECT pg_temp.bad(format($$SELECT buzz.define_role(%L, 'x', %L)$$, :'c', U&'\009F'), 'U+009F (C1) in the label: 22023');
SELECT pg_temp.bad(format($$SELECT buzz.define_role(%L, 'x', %L)$$, :'c', '   '), 'a label of spaces: 22023');
SELECT pg_temp.bad(format($$SELECT buzz.define_role(%L, 'x', %L)$$, :'c', U&'\00A0\3000'),
                   'a label of Unicode spaces: 22023');
SELECT pg_temp.bad(format($$SELECT buzz.define_role(%L, 'x', %L)$$, :'c', U&'Mod\202Esrotare'),
                   'U+202E (right-to-left override) in the label: 22023');
SELECT pg_temp.bad(format($$SELECT buzz.define_role(%L, 'x', %L)$$, :'c', U&'ad\200Bmin'),
                   'U+200B (zero-width space) in the label: 22023');
SELECT pg_temp.bad(format($$SELECT buzz.define_role(%L, 'x', %L)$$, :'c', U&'\FEFFmod'),
                   'U+FEFF (byte order mark) in the label: 22023');
SELECT pg_temp.bad(format($$SELECT buzz.define_role(%L, 'x', %L)$$, :'c', U&'mod\+0E0041'),
                   'U+E0041 (a tag character) in the label: 22023');
-- 22023: description
SELECT pg_temp.bad(format($$SELECT buzz.define_role(%L, 'x', 'X', %L)$$, :'c', repeat('d', 501)),
                   'a description of 501 characters: 22023');
SELECT pg_temp.bad(format($$SELECT buzz.define_role(%L, 'x', 'X', %L)$$, :'c', E'line\nbreak'),
                   'a newline in the description: 22023 (one line, SPEC section 6)');
SELECT pg_temp.bad(format($$SELECT buzz.define_role(%L, 'x', 'X', %L)$$, :'c', E'a\tb'),
                   'a tab in the description: 22023');
SELECT pg_temp.bad(format($$SELECT buzz.define_role(%L, 'x', 'X', %L)$$, :'c', ''),
                   'an empty description: 22023 (NULL is none)');
SELECT pg_temp.bad(format($$SELECT buzz.define_role(%L, 'x', 'X', %L)$$, :'c', U&' \3000 '),
                   'a description of whitespace: 22023');
SELECT pg_temp.bad(format($$SELECT buzz.define_role(%L, 'x', 'X', %L)$$, :'c', U&'a\2028b'),
                   'U+2028 (line separator) in the description: 22023');
SELECT pg_temp.bad(format($$SELECT buzz.define_role(%L, 'x', 'X', %L)$$, :'c', U&'\0080'),
                   'U+0080 (C1) in the description: 22023');
-- 22023: color
SELECT pg_temp.bad(format($$SELECT buzz.define_role(%L, 'x', 'X', NULL, -1)$$, :'c'), 'color -1: 22023');
SELECT pg_temp.bad(format($$SELECT buzz.define_role(%L, 'x', 'X', NULL, 361)$$, :'c'), 'color 361: 22023');
SELECT pg_temp.bad(format($$SELECT buzz.define_role(%L, 'mod', 'Moderator', 'once more', 361)$$, :'c'),
                   '... also for an existing role (before any outcome)');
SELECT is_empty(format($$SELECT * FROM buzz_private.roles r WHERE r.community_id = %L AND r.role_id = 'x'$$, :'c'),
                'the refused definitions stored nothing');
SELECT ok(NOT pg_temp.marked(), '... and owe nothing');

-- BZIRL: malformed role ids, nothing lower-cased
SELECT pg_temp.irl(format($$SELECT buzz.define_role(%L, 'Mod', 'Moderator')$$, :'c'),
                   'an uppercase role id: BZIRL (not lower-cased into mod, which would answer unchanged)');
SELECT pg_temp.irl(format($$SELECT buzz.define_role(%L, %L, 'X')$$, :'c', repeat('a', 65)), 'a role id of 65 characters: BZIRL');
SELECT pg_temp.irl(format($$SELECT buzz.define_role(%L, 'a b', 'X')$$, :'c'), 'a space in the role id: BZIRL');
SELECT pg_temp.irl(format($$SELECT buzz.define_role(%L, '', 'X')$$, :'c'), 'an empty role id: BZIRL');
SELECT pg_temp.irl(format($$SELECT buzz.define_role(%L, NULL, 'X')$$, :'c'), 'a NULL role id: BZIRL');
SELECT pg_temp.irl(format($$SELECT buzz.define_role(%L, %L, 'X')$$, :'c', U&'mod\00E9'), 'a non-ASCII role id: BZIRL');
SELECT pg_temp.irl(format($$SELECT buzz.define_role(%L, %L, 'X')$$, :'c', E'mod\n'), 'a trailing newline: BZIRL');
SELECT pg_temp.irl(format($$SELECT buzz.define_role(%L, 'mod.x', 'X')$$, :'c'), 'a dot in the role id: BZIRL');

-- BZNCM, BZARC
SELECT throws_ok(format($$SELECT buzz.define_role(NULL, 'x', 'X')$$), 'BZNCM', NULL, 'a NULL community: BZNCM');
SELECT throws_ok(format($$SELECT buzz.define_role(%L, 'x', 'X')$$, gen_random_uuid()), 'BZNCM', NULL,
                 'an unknown community: BZNCM');
SELECT throws_ok(format($$SELECT buzz.define_role(%L, 'x', 'X')$$, :'archived'), 'BZARC', NULL,
                 'an archived community: BZARC');
SELECT throws_ok(format($$SELECT buzz.define_role(%L, 'owner', 'Owner', NULL, NULL, 0)$$, :'archived'), 'BZARC', NULL,
                 '... also when it would be unchanged');
SELECT ok(NOT pg_temp.marked(), 'the failed calls owe nothing');

-- BZISO (the transactions at the top)
SELECT is(:'iso_repeatable_read'::text, 'BZISO', 'under REPEATABLE READ: BZISO');
SELECT is(:'iso_serializable'::text, 'BZISO', 'under SERIALIZABLE: BZISO');

-- privileges
SET LOCAL ROLE buzz_writer;
SELECT is(buzz.define_role(:'c', 'writer', 'Writer'), 'defined', 'buzz_writer may define a role');
SELECT is(pg_temp.flush(), 1, '... and publish its 33534');
RESET ROLE;
SET LOCAL ROLE buzz_reader;
SELECT throws_ok(format($$SELECT buzz.define_role(%L, 'reader', 'Reader')$$, :'c'), '42501', NULL,
                 'buzz_reader may not define a role');
RESET ROLE;
CREATE ROLE buzz_pgtap_nobody_define_role NOLOGIN;
-- Only the schema: the refusal must come from EXECUTE not being granted to PUBLIC.
GRANT USAGE ON SCHEMA buzz TO buzz_pgtap_nobody_define_role;
SET LOCAL ROLE buzz_pgtap_nobody_define_role;
SELECT throws_ok(format($$SELECT buzz.define_role(%L, 'nobody', 'Nobody')$$, :'c'), '42501', NULL,
                 'a role without grants may not define a role');
RESET ROLE;

SELECT is(buzz.republish_member_list(:'c')::text, '', 'republished');
SELECT is(pg_temp.flush(), 1 + 13, '... the list and every definition');
SELECT is_empty(format('SELECT * FROM buzz.member_list_drift(%L)', :'c'), 'in the end no drift');

SELECT * FROM finish();
ROLLBACK;
