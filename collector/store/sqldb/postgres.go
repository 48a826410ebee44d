package sqldb

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/edgebench/edgebench/collector/store/migrations"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// openPostgres opens the PostgreSQL database at a postgres:// URL (any of
// libpq's parameters: host, sslmode, a password from PGPASSWORD or
// ~/.pgpass...) and brings its schema up to date. Several collectors may
// share it: each write is idempotent, and the migrations run once, under
// a lock.
func openPostgres(ctx context.Context, dsn string) (*DB, error) {
	name := RedactDB(dsn)
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", name, err)
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = 10 * time.Second
	}
	if _, ok := cfg.RuntimeParams["application_name"]; !ok {
		cfg.RuntimeParams["application_name"] = "edgebench-collector"
	}
	db := stdlib.OpenDB(*cfg)
	// The batcher writes one transaction at a time; the rest are reads
	// of the web UI and API, heartbeats, statuses and events.
	db.SetMaxOpenConns(16)
	db.SetMaxIdleConns(16)
	db.SetConnMaxIdleTime(5 * time.Minute)
	s := &DB{W: db, R: db, D: Dialect{PG: true, unavailable: pgUnavailable}}
	if err := s.migratePostgres(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open store %s: %w", name, s.Wrap(oneLineError{err}))
	}
	return s, nil
}

// oneLineError is an error of pgx told in one line: pgx lists each
// attempt to connect on a line of its own, and with sslmode=prefer (the
// default) it tries twice, with TLS and without, so that a refused
// connection read as the same dial line twice. The lines are joined with
// "; ", each said once.
type oneLineError struct{ err error }

func (e oneLineError) Error() string {
	var out []string
	for l := range strings.SplitSeq(e.err.Error(), "\n") {
		if l = strings.TrimSpace(l); l != "" && !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return strings.ReplaceAll(strings.Join(out, "; "), ":; ", ": ")
}

func (e oneLineError) Unwrap() error { return e.err }

// RedactDB is a --db value fit for a log line: a URL's password is
// replaced by xxxxx.
func RedactDB(dsn string) string {
	if !IsPostgres(dsn) {
		return dsn
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return "postgres://(a URL that does not parse)"
	}
	q := u.Query()
	if q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

// migrationLock is the key of the advisory lock under which a collector
// migrates a PostgreSQL store ("edgebenc").
const migrationLock = 0x6564676562656e63

// migratePostgres applies the PostgreSQL migrations the database lacks, in
// one transaction, under an advisory lock: collectors started together
// migrate it once. The table edgebench_migrations lists the applied ones.
func (s *DB) migratePostgres(ctx context.Context) error {
	ms, err := migrations.Of("postgres")
	if err != nil {
		return err
	}
	tx, err := s.W.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1)", int64(migrationLock)); err != nil {
		return fmt.Errorf("migration lock: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS edgebench_migrations (
		version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`); err != nil {
		return fmt.Errorf("schema version: %w", err)
	}
	var v int
	if err := tx.QueryRowContext(ctx, "SELECT coalesce(max(version), 0) FROM edgebench_migrations").Scan(&v); err != nil {
		return fmt.Errorf("schema version: %w", err)
	}
	if v > len(ms) {
		return fmt.Errorf("schema version %d is newer than this collector's %d", v, len(ms))
	}
	for _, m := range ms[v:] {
		if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
			return fmt.Errorf("migration %d (%s): %w", m.Version, m.Name, err)
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO edgebench_migrations (version, name) VALUES ($1, $2)", m.Version, m.Name); err != nil {
			return fmt.Errorf("migration %d (%s): %w", m.Version, m.Name, err)
		}
	}
	return tx.Commit()
}

// pgUnavailable reports whether err says the server could not be reached,
// went away or asked to be tried again: a connection that failed or
// closed, a server shutting down or starting, a deadlock or serialization
// failure, too many connections. Errors the server reports about the
// statement or its data are not.
func pgUnavailable(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		c := pe.Code
		return strings.HasPrefix(c, "08") || strings.HasPrefix(c, "57P") || strings.HasPrefix(c, "53") ||
			c == "40001" || c == "40P01" || c == "55P03"
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	return errors.As(err, &ce) || errors.As(err, &ne) || pgconn.SafeToRetry(err) || pgconn.Timeout(err) ||
		errors.Is(err, pgconn.ErrConnClosed) || errors.Is(err, driver.ErrBadConn) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}
