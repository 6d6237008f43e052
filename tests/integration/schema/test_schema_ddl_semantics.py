"""The ALTER semantics the random DDL oracle found (issue 17), one row per case: setup statements, the statement,
and the table the server has afterwards (as the interpreter must model it: column name, type, nullable, default,
auto-increment, and the primary key). The unit test checks the interpreter against the expected rows; the
integration test runs every case on the real MariaDB / PostgreSQL and checks that the server agrees with the
interpreter (so the expected rows are the server's, not guesses). Refused cases must be flagged (an ERROR change,
the table unchanged)."""

from __future__ import annotations

import pytest

from ingest.schema import SchemaState
from tests.support.schema_oracle import MariaOracle, PgOracle, table_diff

T = "t"
# (id, setup, statement, expected columns [(name, type, nullable, default, auto_increment)], expected primary key)
MARIADB_CASES = [
    ("modify-added-column-moves-to-end", ["CREATE TABLE t (a int, b int)"],
     "ALTER TABLE t ADD c int FIRST, MODIFY c mediumint",
     [("a", "int(11)", True, None, False), ("b", "int(11)", True, None, False),
      ("c", "mediumint(9)", True, None, False)], []),
    ("add-pk-then-drop-pk-keeps-new-key", ["CREATE TABLE t (a int PRIMARY KEY, c int)"],
     "ALTER TABLE t ADD PRIMARY KEY (c), DROP PRIMARY KEY",
     [("a", "int(11)", False, None, False), ("c", "int(11)", False, None, False)], ["c"]),
    ("modify-pk-column-then-drop-pk-is-nullable", ["CREATE TABLE t (a int PRIMARY KEY, b int)"],
     "ALTER TABLE t MODIFY a bigint, DROP PRIMARY KEY",
     [("a", "bigint(20)", True, None, False), ("b", "int(11)", True, None, False)], []),
    ("drops-first-then-add-after", ["CREATE TABLE t (a int, b int, c int)"],
     "ALTER TABLE t ADD d int AFTER a, DROP b, MODIFY c int FIRST",
     [("c", "int(11)", True, None, False), ("a", "int(11)", True, None, False),
      ("d", "int(11)", True, None, False)], []),
    ("datetime-fsp-current-timestamp", ["CREATE TABLE t (a int)"],
     "ALTER TABLE t ADD b DATETIME(3) DEFAULT CURRENT_TIMESTAMP, ADD c timestamp(6) NULL DEFAULT now()",
     [("a", "int(11)", True, None, False), ("b", "datetime(3)", True, "current_timestamp(3)", False),
      ("c", "timestamp(6)", True, "current_timestamp(6)", False)], []),
    ("set-default-now-keeps-written-precision", ["CREATE TABLE t (a datetime(6))"],
     "ALTER TABLE t ALTER a SET DEFAULT now()", [("a", "datetime(6)", True, "current_timestamp()", False)], []),
    ("set-default-current-timestamp-0-on-time", ["CREATE TABLE t (a time)"],
     "ALTER TABLE t ALTER a SET DEFAULT CURRENT_TIMESTAMP(0)", [("a", "time", True, "current_timestamp()", False)],
     []),
    ("float-literal-on-varchar", ["CREATE TABLE t (a varchar(20), b int)"],
     "ALTER TABLE t ALTER a SET DEFAULT 2e3, ADD c varchar(20) DEFAULT 1.5e-7, ALTER b SET DEFAULT 1.5e-7, "
     "ADD d binary(16) DEFAULT 2e3",
     [("a", "varchar(20)", True, "2000", False), ("b", "int(11)", True, "0", False),
      ("c", "varchar(20)", True, "0.00000015", False), ("d", "binary(16)", True, "2000", False)], []),
    ("float-literal-on-blob-as-written", ["CREATE TABLE t (a longblob)"], "ALTER TABLE t ALTER a SET DEFAULT 2e3",
     [("a", "longblob", True, "2e3", False)], []),
    ("datetime-literal-on-time", ["CREATE TABLE t (a time(6))"],
     "ALTER TABLE t ALTER a SET DEFAULT '2020-01-02 03:04:05'", [("a", "time(6)", True, "03:04:05.000000", False)],
     []),
    ("year-default-rounds", ["CREATE TABLE t (a year)"], "ALTER TABLE t ALTER a SET DEFAULT 1.5",
     [("a", "year(4)", True, "2002", False)], []),
    ("bit-default-from-string-bytes", ["CREATE TABLE t (a bit(8), b bit(8) DEFAULT 70)"],
     "ALTER TABLE t ALTER a SET DEFAULT 'x'",
     [("a", "bit(8)", True, "b'1111000'", False), ("b", "bit(8)", True, "b'1000110'", False)], []),
    ("year-default-converted", ["CREATE TABLE t (a year)"], "ALTER TABLE t ALTER a SET DEFAULT 1",
     [("a", "year(4)", True, "2001", False)], []),
    ("time-default-converted", ["CREATE TABLE t (a time(2))"], "ALTER TABLE t ALTER a SET DEFAULT 1",
     [("a", "time(2)", True, "00:00:01.00", False)], []),
    ("date-and-int-defaults-converted", ["CREATE TABLE t (a int)"],
     "ALTER TABLE t ADD b date DEFAULT 20200102, ADD c smallint DEFAULT 1.5, ADD d decimal(5,1) DEFAULT '2.25'",
     [("a", "int(11)", True, None, False), ("b", "date", True, "2020-01-02", False),
      ("c", "smallint(6)", True, "2", False), ("d", "decimal(5,1)", True, "2.3", False)], []),
    ("blob-key-with-prefix", [], "CREATE TABLE t (a int, b text, PRIMARY KEY (b(10)))",
     [("a", "int(11)", True, None, False), ("b", "text", False, None, False)], ["b"]),
    ("convert-to-narrower-keeps-text", ["CREATE TABLE t (a text, b mediumtext) CHARSET utf8mb4"],
     "ALTER TABLE t CONVERT TO CHARACTER SET latin1",
     [("a", "text", True, None, False), ("b", "mediumtext", True, None, False)], []),
    ("convert-to-widens-text", ["CREATE TABLE t (a tinytext, b char(4) CHARACTER SET latin1) CHARSET=latin1"],
     "ALTER TABLE t CONVERT TO CHARACTER SET utf8mb4",
     [("a", "text", True, None, False), ("b", "char(4)", True, None, False)], []),
]
MARIADB_REFUSED = [
    ("unknown-column", ["CREATE TABLE t (a int)"], "ALTER TABLE t MODIFY zz int"),
    ("unknown-after-column", ["CREATE TABLE t (a int)"], "ALTER TABLE t ADD b int AFTER zz"),
    ("second-primary-key", ["CREATE TABLE t (a int PRIMARY KEY, b int)"], "ALTER TABLE t ADD PRIMARY KEY (b)"),
    ("blob-key-without-length", ["CREATE TABLE t (a int, b blob)"], "ALTER TABLE t ADD PRIMARY KEY (b)"),
    ("duplicate-column", ["CREATE TABLE t (a int)"], "ALTER TABLE t ADD a bigint"),
    ("modify-twice", ["CREATE TABLE t (a int)"], "ALTER TABLE t MODIFY a bigint, MODIFY a int"),
    ("alter-column-of-modified-column", ["CREATE TABLE t (a int)"],
     "ALTER TABLE t MODIFY a int, ALTER a SET DEFAULT 7"),
    ("alter-column-of-renamed-column", ["CREATE TABLE t (a int)"],
     "ALTER TABLE t RENAME COLUMN a TO b, ALTER a SET DEFAULT 7"),
    ("alter-column-twice", ["CREATE TABLE t (a int)"], "ALTER TABLE t ALTER a SET DEFAULT 7, ALTER a SET DEFAULT 8"),
    ("create-blob-key", ["CREATE TABLE t (a int)"], "CREATE TABLE u (a int, b text, PRIMARY KEY (b))"),
    ("create-two-keys", ["CREATE TABLE t (a int)"], "CREATE TABLE u (a int PRIMARY KEY, b int, PRIMARY KEY (b))"),
]
POSTGRES_CASES = [
    ("drop-column-of-composite-pk-drops-key", ["CREATE TABLE t (a int, b int, c int, PRIMARY KEY (a, b))"],
     "ALTER TABLE t DROP COLUMN b",
     [("a", "integer", False, None, False), ("c", "integer", True, None, False)], []),
    ("array-default", [], "CREATE TABLE t (a int[] DEFAULT ARRAY[1, 2], b int)",
     [("a", "integer[]", True, "ARRAY[1, 2]", False), ("b", "integer", True, None, False)], []),
    ("serial-quoted-mixed-case", [], 'CREATE TABLE t ("Col" serial)',
     [("Col", "integer", False, "nextval('\"t_Col_seq\"'::regclass)", True)], []),
    ("replacing-nextval-ends-serial", ["CREATE TABLE t (a serial)"], "ALTER TABLE t ALTER a SET DEFAULT 5",
     [("a", "integer", False, "5", False)], []),
    ("drop-identity-if-exists-on-serial", ["CREATE TABLE t (a serial)"],
     "ALTER TABLE t ALTER a DROP IDENTITY IF EXISTS",
     [("a", "integer", False, "nextval('t_a_seq'::regclass)", True)], []),
    ("set-default-drop-default-keeps-default", ["CREATE TABLE t (a int)"],
     "ALTER TABLE t ALTER a SET DEFAULT 1, ALTER a DROP DEFAULT",
     [("a", "integer", True, "1", False)], []),
    ("set-not-null-drop-not-null-keeps-not-null", ["CREATE TABLE t (a int)"],
     "ALTER TABLE t ALTER a SET NOT NULL, ALTER a DROP NOT NULL",
     [("a", "integer", False, None, False)], []),
    ("add-pk-after-drop-not-null", ["CREATE TABLE t (a int)"],
     "ALTER TABLE t ADD PRIMARY KEY (a), ALTER a DROP NOT NULL",
     [("a", "integer", False, None, False)], ["a"]),
    ("drop-table-cascade-removes-copied-nextval",
     ["CREATE TABLE s (id serial, v int)", "CREATE TABLE t (LIKE s INCLUDING DEFAULTS)"], "DROP TABLE s CASCADE",
     [("id", "integer", False, None, False), ("v", "integer", True, None, False)], []),
    ("drop-serial-column-cascade-after-default-replaced",
     ["CREATE TABLE s (id serial, v int)", "CREATE TABLE t (LIKE s INCLUDING DEFAULTS)",
      "ALTER TABLE s ALTER id SET DEFAULT 0"], "ALTER TABLE s DROP COLUMN id CASCADE",
     [("id", "integer", False, None, False), ("v", "integer", True, None, False)], []),
    ("literal-defaults-converted", [],
     "CREATE TABLE t (a macaddr DEFAULT '08-00-2B-01-02-03', b varbit(8) DEFAULT B'101', c bool DEFAULT 'off', "
     "d date DEFAULT '2021-3-4', e cidr DEFAULT '10.0.0.1')",
     [("a", "macaddr", True, "08:00:2b:01:02:03", False), ("b", "bit varying(8)", True, "101", False),
      ("c", "boolean", True, "false", False), ("d", "date", True, "2021-03-04", False),
      ("e", "cidr", True, "10.0.0.1/32", False)], []),
]
POSTGRES_REFUSED = [
    ("second-primary-key", ["CREATE TABLE t (a int PRIMARY KEY, b int)"], "ALTER TABLE t ADD PRIMARY KEY (b)"),
    ("unknown-column", ["CREATE TABLE t (a int)"], "ALTER TABLE t ALTER zz SET NOT NULL"),
    ("create-two-keys", ["CREATE TABLE t (a int)"], "CREATE TABLE u (a int PRIMARY KEY, b int, PRIMARY KEY (b))"),
    ("drop-identity-of-plain-column", ["CREATE TABLE t (a int NOT NULL)"], "ALTER TABLE t ALTER a DROP IDENTITY"),
]


def _state(dialect: str) -> SchemaState:
    return SchemaState(server_charset="latin1") if dialect == "mariadb" else SchemaState()


def _table(state: SchemaState):
    return next(table for tid, table in state.tables.items() if tid.table == T)


def _run_case(dialect: str, setup: list[str], statement: str) -> tuple[SchemaState, list]:
    state = _state(dialect)
    for stmt in setup:
        assert all(c.kind != "ERROR" for c in state.apply(stmt, dialect, "db")), stmt
    return state, state.apply(statement, dialect, "db")


@pytest.mark.parametrize(("dialect", "setup", "statement", "columns", "pk"),
                         [pytest.param("mariadb", *case[1:], id="mariadb-" + case[0]) for case in MARIADB_CASES] +
                         [pytest.param("postgres", *case[1:], id="postgres-" + case[0]) for case in POSTGRES_CASES])
def test_interpreter_models_the_server(dialect, setup, statement, columns, pk):
    state, changes = _run_case(dialect, setup, statement)
    assert all(c.kind != "ERROR" for c in changes), changes
    table = _table(state)
    got = [(c.name, c.source_type, c.nullable, c.default if c.has_default else None,
            c.auto_increment) for c in table.columns]
    assert got == columns
    assert table.primary_key == pk


@pytest.mark.parametrize(("dialect", "setup", "statement"),
                         [pytest.param("mariadb", *case[1:], id="mariadb-" + case[0]) for case in MARIADB_REFUSED] +
                         [pytest.param("postgres", *case[1:], id="postgres-" + case[0]) for case in POSTGRES_REFUSED])
def test_invalid_statements_are_flagged(dialect, setup, statement):
    before, _ = _run_case(dialect, setup, "SELECT 1")
    state, changes = _run_case(dialect, setup, statement)
    assert [c.kind for c in changes] == ["ERROR"]
    assert _table(state) == _table(before)


@pytest.mark.integration
def test_cases_agree_with_mariadb(mariadb_params):
    oracle = MariaOracle(mariadb_params, "schemahist_cases")
    try:
        for name, setup, statement, *_ in MARIADB_CASES:
            _check_on_server(oracle, "mariadb", name, setup, statement)
        for name, setup, statement in MARIADB_REFUSED:
            _check_refused(oracle, name, setup, statement)
    finally:
        oracle.close()


@pytest.mark.integration
def test_cases_agree_with_postgres(pg_dsn):
    oracle = PgOracle(pg_dsn, "schemahist_cases")
    try:
        for name, setup, statement, *_ in POSTGRES_CASES:
            _check_on_server(oracle, "postgres", name, setup, statement)
        for name, setup, statement in POSTGRES_REFUSED:
            _check_refused(oracle, name, setup, statement)
    finally:
        oracle.close()


def _reset(oracle) -> None:
    for table in ("t", "s"):
        oracle.execute(f"DROP TABLE IF EXISTS {table}" + (" CASCADE" if isinstance(oracle, PgOracle) else ""))


def _check_on_server(oracle, dialect: str, name: str, setup: list[str], statement: str) -> None:
    _reset(oracle)
    state = oracle.new_state()
    for stmt in [*setup, statement]:
        assert oracle.execute(stmt) is None, (name, stmt)
        state.apply(stmt, dialect, oracle.db)
    server, parsed = oracle.server_tables(), oracle.parsed_tables(state)
    assert server == parsed, f"{name}: {table_diff(server, parsed)}"


def _check_refused(oracle, name: str, setup: list[str], statement: str) -> None:
    _reset(oracle)
    for stmt in setup:
        assert oracle.execute(stmt) is None, (name, stmt)
    assert oracle.execute(statement) is not None, f"{name}: the server accepts {statement!r}"
