"""The tests of LangGraph's store suites that cannot pass against MemoirStore, and why.
``../conftest.py`` skips them with these reasons. (Async tests run by pytest-asyncio's auto
mode, set in ``../pytest.ini`` as LangGraph sets it.)"""

from __future__ import annotations

#: Tests of the suites that cannot pass against MemoirStore, and why.
CANNOT_PASS = {
    # SqliteStore's SQL and schema, not the store's behaviour.
    "test_sqlite_store.py::test_vector_store_initialization":
        "reads SQLite's schema (store.conn, sqlite_master); a memoir store has no SQL tables",
    "test_sqlite_store_more.py::test_nonnull_migrations":
        "checks SqliteStore.MIGRATIONS, SQL statements memoir does not have",
    "test_sqlite_store_more.py::test_escape_glob_literal":
        "tests SqliteStore's private SQL GLOB escaping helper",
    "test_sqlite_store_more.py::test_namespace_match_pattern":
        "tests SqliteStore's private namespace regex helper",
    "test_sqlite_store_more.py::test_list_namespaces_prefix_uses_indexable_condition":
        "inspects the SQL text SqliteStore generates (BaseSqliteStore queries)",
    "test_sqlite_store_more.py::test_sql_injection_vulnerability":
        "expects ValueError('Invalid filter key') for a key SqliteStore cannot put into SQL; "
        "memoir builds no SQL, so that key is an ordinary member name that matches nothing",
    # AsyncSqliteStore is async only; MemoirStore serves sync and async calls alike.
    "test_sqlite_async_store.py::test_no_running_loop":
        "expects the synchronous methods to refuse to run inside an event loop, as the "
        "async-only AsyncSqliteStore does; MemoirStore's synchronous methods work anywhere, "
        "like InMemoryStore's",
}

