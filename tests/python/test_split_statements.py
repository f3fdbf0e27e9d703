"""buzz_signer.migrate.split_statements: a file of SQL cut into its statements (Citus takes
a function file's DDL one statement at a time)."""

from __future__ import annotations

from buzz_signer.migrate import function_files, split_statements

FILE = """-- a comment; with a semicolon
CREATE FUNCTION f() RETURNS text LANGUAGE plpgsql AS $body$
BEGIN
    RETURN 'a;b';  -- ; inside the body
END
$body$;
COMMENT ON FUNCTION f() IS 'it''s; one';
CREATE FUNCTION g(x int) RETURNS text LANGUAGE sql
BEGIN ATOMIC
    SELECT CASE WHEN x > 0 THEN 'p' ELSE 'n' END;
    SELECT ";" FROM t;
END;
/* a block comment; too */
GRANT EXECUTE ON FUNCTION g(int) TO "a;b";
;
"""


def test_each_statement_once_whatever_its_semicolons_are_inside():
    statements = [s.strip() for s in split_statements(FILE)]
    assert [s.split()[0] for s in statements] == ["--", "COMMENT", "CREATE", "/*"]
    assert statements[0].endswith("$body$") and "RETURN 'a;b';" in statements[0]
    assert statements[1] == "COMMENT ON FUNCTION f() IS 'it''s; one'"
    assert statements[2].endswith("END") and 'SELECT ";" FROM t;' in statements[2]
    assert statements[3].endswith('TO "a;b"')


def test_the_function_files_split_into_whole_statements():
    for path in function_files():
        sql = path.read_text(encoding="utf-8")
        statements = split_statements(sql)
        assert statements, path
        # Nothing is lost or added: the statements and the ';' between them are the file.
        assert ";".join(statements).strip() == sql.strip().removesuffix(";").strip(), path
