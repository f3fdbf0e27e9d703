-- plpgsql_check reports nothing for any PL/pgSQL function in schemas buzz and buzz_private:
-- fatal errors, warnings, extra warnings (unused variables and parameters, shadowing, ...),
-- security warnings (SQL injection in dynamic SQL) and performance warnings (hidden casts).
-- Trigger functions are checked against the table of their trigger, with its transition
-- tables. One test per function, named after it, showing what plpgsql_check found.
-- The Makefile creates the extension; the suite creates it (inside its transaction) if not.
BEGIN;
SET LOCAL client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS plpgsql_check;
RESET client_min_messages;

-- How each trigger function is checked: the table of its triggers and the transition tables.
CREATE TEMP TABLE trigger_context (fn regprocedure PRIMARY KEY, relid regclass NOT NULL,
                                   oldtable name, newtable name);
INSERT INTO trigger_context VALUES
    ('buzz_private.track_member_changes()', 'buzz_private.relay_members', 'old_rows', 'new_rows'),
    ('buzz_private.refuse_truncate()', 'buzz_private.relay_members', NULL, NULL),
    ('buzz_private.check_list_signed()', 'buzz_private.tx_pending_lists', NULL, NULL),
    ('buzz_private.announce_list()', 'buzz_private.member_lists', NULL, NULL),
    ('buzz_private.track_role_changes()', 'buzz_private.roles', 'old_rows', 'new_rows'),
    ('buzz_private.announce_role_event()', 'buzz_private.role_events', NULL, NULL);
CREATE TEMP TABLE checked AS
SELECT p.oid::regprocedure AS fn, p.prorettype = 'trigger'::regtype AS is_trigger,
       t.relid, t.oldtable, t.newtable
FROM pg_proc p
JOIN pg_language l ON l.oid = p.prolang AND l.lanname = 'plpgsql'
LEFT JOIN trigger_context t ON t.fn = p.oid
WHERE p.pronamespace IN ('buzz'::regnamespace, 'buzz_private'::regnamespace);

SELECT plan(3 + (SELECT count(*)::integer FROM checked));

SELECT is_empty('SELECT c.fn FROM checked c WHERE c.is_trigger AND c.relid IS NULL',
                'every trigger function has its trigger context here');
SELECT is((SELECT count(*) FROM checked c WHERE c.is_trigger AND c.relid IS NOT NULL), 6::bigint,
          'the six trigger functions are checked');
SELECT cmp_ok((SELECT count(*) FROM checked c WHERE c.fn::text LIKE 'buzz.%'), '>=', 20::bigint,
              'the API''s PL/pgSQL functions are checked');

SELECT is(ARRAY(SELECT format('%s (line %s): %s%s', r.level, r.lineno, r.message,
                              coalesce(' - ' || r.detail, ''))
                FROM plpgsql_check_function_tb(c.fn,
                         relid => coalesce(c.relid, 0::regclass),
                         oldtable => c.oldtable, newtable => c.newtable,
                         fatal_errors => false, other_warnings => true, extra_warnings => true,
                         performance_warnings => true, security_warnings => true) r),
          '{}'::text[],
          format('%s: plpgsql_check reports nothing', c.fn))
FROM checked c
WHERE NOT c.is_trigger OR c.relid IS NOT NULL
ORDER BY c.fn::text;

SELECT * FROM finish();
ROLLBACK;
