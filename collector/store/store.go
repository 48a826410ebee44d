package store

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Errors of the Store's lookups of one thing by id.
var (
	ErrNotFound  = errors.New("not found")
	ErrAmbiguous = errors.New("prefix is ambiguous")
)

// ErrNotRunning is returned when a command to cancel runs nowhere: every
// device it went to has finished it.
var ErrNotRunning = errors.New("not running")

// ErrUnavailable wraps the store's errors that say the database could not
// be reached or was going away (a PostgreSQL restart, a lock held too
// long), as opposed to errors of the data: the same writes may succeed
// when tried again.
var ErrUnavailable = errors.New("store unavailable")

// Store keeps devices, commands, events and results in a SQLite file or a
// PostgreSQL database (Open). The SQL is one for both, with the few
// spellings that differ in dialect; the schemas are their engines'
// migrations (migrations/sqlite, migrations/postgres).
//
// The files of the store: sqlite.go and postgres.go open each engine,
// migrate.go runs the migrations, write.go holds what the collector
// writes, read.go what the commands and pages read, figures.go the
// errors recounted from the payloads, verdicts.go and specs.go the columns filled from the
// payloads, schedules.go and alerts.go the fleet's tables over time,
// retention.go the pruning.
type Store struct {
	w *sql.DB // writes
	r *sql.DB // reads: SQLite's query-only pool, or w
	d dialect
	// backfilled is what opening the store did to the verdicts of the
	// results stored before the store kept them (zero when none were
	// left), for the log.
	backfilled VerdictBackfill

	partsMu sync.Mutex
	parts   map[int64]bool // PostgreSQL: the days result_samples has a table for, as far as this store knows

	trace func(query string, args []any) // tests: each statement as the engine gets it
}

// Backfilled is what opening the store did to the verdicts of the
// results stored before the store kept them (zero when none were left).
func (s *Store) Backfilled() VerdictBackfill { return s.backfilled }

// Open opens the store at dsn, a postgres:// (or postgresql://) URL or
// else the path of a SQLite file, created if needed, and brings its schema
// up to date.
func Open(ctx context.Context, dsn string) (*Store, error) {
	if IsPostgres(dsn) {
		return openPostgres(ctx, dsn)
	}
	return openSQLite(ctx, dsn)
}

// IsPostgres reports whether a --db value names a PostgreSQL database
// rather than a SQLite file.
func IsPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// Engine is the store's engine: "sqlite" or "postgres".
func (s *Store) Engine() string {
	if s.d.pg {
		return "postgres"
	}
	return "sqlite"
}

// Close closes the database.
func (s *Store) Close() error {
	if s.r == s.w {
		return s.w.Close()
	}
	return errors.Join(s.r.Close(), s.w.Close())
}

// dialect is what differs in SQL between SQLite and PostgreSQL. The
// queries are written for SQLite with ? (or ?N) placeholders; q rewrites
// them for PostgreSQL.
type dialect struct {
	pg bool
	// unavailable reports whether an error of the engine says the database
	// is down or busy, not that the data is wrong.
	unavailable func(error) bool
}

// q is query in the engine's placeholders: PostgreSQL's $N for ? (the
// next one) and ?N. The queries hold no ? of their own.
func (d dialect) q(query string) string {
	if !d.pg || !strings.Contains(query, "?") {
		return query
	}
	var b strings.Builder
	b.Grow(len(query) + len(query)/8)
	n := 0
	for i := 0; i < len(query); i++ {
		c := query[i]
		if c != '?' {
			b.WriteByte(c)
			continue
		}
		j := i + 1
		for j < len(query) && query[j] >= '0' && query[j] <= '9' {
			j++
		}
		b.WriteByte('$')
		if j > i+1 {
			b.WriteString(query[i+1 : j])
			i = j - 1
			continue
		}
		n++
		b.WriteString(strconv.Itoa(n))
	}
	return b.String()
}

// args are the arguments of a query as the engine takes them: PostgreSQL's
// text holds neither NUL nor bytes that are not UTF-8, which a device may
// send; they become U+FFFD there (the payload keeps them, as bytes).
func (d dialect) args(args []any) []any {
	if !d.pg {
		return args
	}
	for i, a := range args {
		if s, ok := a.(string); ok {
			args[i] = pgText(s)
		}
	}
	return args
}

func pgText(s string) string {
	if utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

// label is the SQL of the value of a label of the result r (text, NULL
// when it has none) and its argument.
func (d dialect) label(key string) (string, any) {
	if d.pg {
		return "(r.labels::jsonb ->> ?)", key
	}
	// SQLite reads the path up to a NUL: a key with one matches none.
	return "json_extract(r.labels, ?)", `$."` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\x00", "\uFFFD").Replace(key) + `"`
}

// labelKeys is the FROM item of the label keys of the result r, as j.key.
func (d dialect) LabelKeys() string {
	if d.pg {
		return "jsonb_object_keys(r.labels::jsonb) AS j(key)"
	}
	return "json_each(r.labels) j"
}

// inJSON is the SQL condition that col is one of the strings of a JSON
// array argument.
func (d dialect) inJSON(col string) string {
	if d.pg {
		return col + " IN (SELECT jsonb_array_elements_text(?::jsonb))"
	}
	return col + " IN (SELECT value FROM json_each(?))"
}

// greatest is the SQL function of the larger of two values.
func (d dialect) greatest() string {
	if d.pg {
		return "greatest"
	}
	return "max"
}

// querier is a *sql.DB or a *sql.Tx.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func (s *Store) exec(ctx context.Context, db querier, query string, args ...any) (sql.Result, error) {
	q, a := s.statement(query, args)
	res, err := db.ExecContext(ctx, q, a...)
	return res, s.wrap(err)
}

func (s *Store) query(ctx context.Context, db querier, query string, args ...any) (*sql.Rows, error) {
	q, a := s.statement(query, args)
	rows, err := db.QueryContext(ctx, q, a...)
	return rows, s.wrap(err)
}

func (s *Store) queryRow(ctx context.Context, db querier, query string, args ...any) *sql.Row {
	q, a := s.statement(query, args)
	return db.QueryRowContext(ctx, q, a...)
}

// statement is query and args as the engine takes them.
func (s *Store) statement(query string, args []any) (string, []any) {
	q, a := s.d.q(query), s.d.args(args)
	if s.trace != nil {
		s.trace(q, a)
	}
	return q, a
}

// wrap marks an error that says the database is unavailable with
// ErrUnavailable.
func (s *Store) wrap(err error) error {
	if err == nil || errors.Is(err, ErrUnavailable) || s.d.unavailable == nil || !s.d.unavailable(err) {
		return err
	}
	return &unavailableError{err}
}

// AsUnavailable is err marked with ErrUnavailable: what a caller that
// gave up waiting for the store (a deadline) says of its call.
func AsUnavailable(err error) error { return &unavailableError{err} }

type unavailableError struct{ err error }

func (e *unavailableError) Error() string { return e.err.Error() }
func (e *unavailableError) Unwrap() []error {
	return []error{ErrUnavailable, e.err}
}

// Unavailable reports whether err, from a Store method, says the database
// could not be reached or was going away: the same call may succeed later.
func Unavailable(err error) bool { return errors.Is(err, ErrUnavailable) }

// maxParams bounds the placeholders of one statement (SQLite allows 32,766,
// PostgreSQL 65,535).
const maxParams = 30000

// insertRows runs head (an INSERT up to VALUES) with rows, each of ncol
// values, in as few statements as the placeholder limit allows, then tail
// (ON CONFLICT ..., RETURNING ...). With each set, it is called on every
// row the statements return.
func (s *Store) insertRows(ctx context.Context, tx *sql.Tx, head string, ncol int, rows [][]any, tail string, each func(*sql.Rows) error) error {
	per := max(1, maxParams/ncol)
	one := "(" + strings.TrimSuffix(strings.Repeat("?,", ncol), ",") + ")"
	for len(rows) > 0 {
		chunk := rows[:min(per, len(rows))]
		rows = rows[len(chunk):]
		var b strings.Builder
		b.WriteString(head)
		args := make([]any, 0, len(chunk)*ncol)
		for i, r := range chunk {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(one)
			args = append(args, r...)
		}
		b.WriteString(tail)
		if each == nil {
			if _, err := s.exec(ctx, tx, b.String(), args...); err != nil {
				return err
			}
			continue
		}
		rs, err := s.query(ctx, tx, b.String(), args...)
		if err != nil {
			return err
		}
		for rs.Next() {
			if err := each(rs); err != nil {
				rs.Close()
				return err
			}
		}
		if err := rs.Close(); err != nil {
			return s.wrap(err)
		}
		if err := rs.Err(); err != nil {
			return s.wrap(err)
		}
	}
	return nil
}

func null(v float64) any {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return v
}

func nf(v sql.NullFloat64) float64 {
	if !v.Valid {
		return math.NaN()
	}
	return v.Float64
}

func nonNil(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

func unixTime(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}
