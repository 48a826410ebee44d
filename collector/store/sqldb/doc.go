// Package sqldb is the store's database under its tables: it opens a
// SQLite file or a PostgreSQL database (Open), applies the engine's
// migrations, and runs the statements written once for both (Exec,
// Query, QueryRow, InsertRows) in the engine's dialect (Dialect: its
// placeholders, its JSON and label spellings), marking the errors that
// say the database is unavailable (Unavailable). It knows no table of
// its own; the store's parts share it.
package sqldb
