package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"time"

	"github.com/edgebench/edgebench/collector/store/migrations"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// openSQLite opens (creating if needed) the SQLite file at path and brings
// its schema up to date. A new file is readable by its owner only, and so
// are its -wal and -shm files (SQLite gives them the database's mode).
//
// It writes through one connection (SQLite has one writer anyway; this
// keeps lock waits out of the busy timeout) and reads through a small
// pool, in WAL mode so readers never block the writer.
func openSQLite(ctx context.Context, path string) (*DB, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	f.Close()
	dsn := func(extra string) string {
		q := url.Values{}
		for _, p := range []string{"busy_timeout(10000)", "journal_mode(wal)", "synchronous(full)", "foreign_keys(1)"} {
			q.Add("_pragma", p)
		}
		if extra != "" {
			q.Add("_pragma", extra)
		}
		q.Set("_txlock", "immediate")
		return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
	}
	w, err := sql.Open("sqlite", dsn(""))
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	s := &DB{W: w, D: Dialect{unavailable: sqliteBusy}}
	if err := s.migrateWhenFree(ctx); err != nil {
		w.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	r, err := sql.Open("sqlite", dsn("query_only(1)"))
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	r.SetMaxOpenConns(4)
	s.R = r
	return s, nil
}

// sqliteBusy reports a lock held past the busy timeout.
func sqliteBusy(err error) bool {
	var e *sqlite.Error
	if !errors.As(err, &e) {
		return false
	}
	code := e.Code() & 0xff // the primary code of an extended one
	return code == sqlite3.SQLITE_BUSY || code == sqlite3.SQLITE_LOCKED
}

// migrateWhenFree migrates the file, trying again for a while when SQLite
// answers busy at once: a process that closes the file last takes it
// whole for a moment to fold its write-ahead log back, and one opening it
// then is refused without the busy timeout's wait (SQLite's "WAL mode"
// notes), as the collector and a command started beside it would be.
func (s *DB) migrateWhenFree(ctx context.Context) error {
	deadline := time.Now().Add(10 * time.Second)
	for wait := 5 * time.Millisecond; ; wait = min(2*wait, 200*time.Millisecond) {
		err := s.migrateSQLite(ctx)
		if err == nil || !sqliteBusy(err) || time.Now().Add(wait).After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
	}
}

// migrateSQLite applies the SQLite migrations the file lacks; PRAGMA
// user_version counts the applied ones.
func (s *DB) migrateSQLite(ctx context.Context) error {
	ms, err := migrations.Of("sqlite")
	if err != nil {
		return err
	}
	var v int
	if err := s.W.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return fmt.Errorf("schema version: %w", err)
	}
	if v > len(ms) {
		return fmt.Errorf("schema version %d is newer than this collector's %d", v, len(ms))
	}
	for _, m := range ms[v:] {
		if err := s.applySQLite(ctx, m); err != nil {
			return fmt.Errorf("migration %d (%s): %w", m.Version, m.Name, err)
		}
	}
	return nil
}

func (s *DB) applySQLite(ctx context.Context, m migrations.Migration) error {
	tx, err := s.W.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	// Another process opening the store may have applied it while this
	// one waited for the write lock.
	var now int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&now); err != nil {
		return err
	}
	if now >= m.Version {
		return nil
	}
	if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", m.Version)); err != nil {
		return err
	}
	return tx.Commit()
}
