package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// The store's errors that are not the engine's.
var (
	// ErrNotFound is returned by the store's lookups of one thing by id
	// that find none.
	ErrNotFound = errors.New("not found")
	// ErrUnavailable wraps the store's errors that say the database
	// could not be reached or was going away (a PostgreSQL restart, a
	// lock held too long), as opposed to errors of the data: the same
	// writes may succeed when tried again.
	ErrUnavailable = errors.New("store unavailable")
)

// DB is the store's database: its pools and its engine's dialect (Open).
// Its statements (Exec, Query, QueryRow, InsertRows) are written once for
// both engines, in SQLite's placeholders.
type DB struct {
	W *sql.DB // writes
	R *sql.DB // reads: SQLite's query-only pool, or W
	D Dialect

	Trace func(query string, args []any) // tests: each statement as the engine gets it
}

// Open opens the database at dsn, a postgres:// (or postgresql://) URL or
// else the path of a SQLite file, created if needed, and brings its schema
// up to date.
func Open(ctx context.Context, dsn string) (*DB, error) {
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

// Close closes the database.
func (s *DB) Close() error {
	if s.R == s.W {
		return s.W.Close()
	}
	return errors.Join(s.R.Close(), s.W.Close())
}

// Dialect is what differs in SQL between SQLite and PostgreSQL. The
// queries are written for SQLite with ? (or ?N) placeholders; Q rewrites
// them for PostgreSQL.
type Dialect struct {
	PG bool
	// unavailable reports whether an error of the engine says the database
	// is down or busy, not that the data is wrong.
	unavailable func(error) bool
}

// Q is query in the engine's placeholders: PostgreSQL's $N for ? (the
// next one) and ?N. The queries hold no ? of their own.
func (d Dialect) Q(query string) string {
	if !d.PG || !strings.Contains(query, "?") {
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

// Args are the arguments of a query as the engine takes them: PostgreSQL's
// text holds neither NUL nor bytes that are not UTF-8, which a device may
// send; they become U+FFFD there (the payload keeps them, as bytes).
func (d Dialect) Args(args []any) []any {
	if !d.PG {
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

// Label is the SQL of the value of a label of the result r (text, NULL
// when it has none) and its argument.
func (d Dialect) Label(key string) (string, any) {
	if d.PG {
		return "(r.labels::jsonb ->> ?)", key
	}
	// SQLite reads the path up to a NUL: a key with one matches none.
	return "json_extract(r.labels, ?)", `$."` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\x00", "\uFFFD").Replace(key) + `"`
}

// LabelKeys is the FROM item of the label keys of the result r, as j.key.
func (d Dialect) LabelKeys() string {
	if d.PG {
		return "jsonb_object_keys(r.labels::jsonb) AS j(key)"
	}
	return "json_each(r.labels) j"
}

// InJSON is the SQL condition that col is one of the strings of a JSON
// array argument.
func (d Dialect) InJSON(col string) string {
	if d.PG {
		return col + " IN (SELECT jsonb_array_elements_text(?::jsonb))"
	}
	return col + " IN (SELECT value FROM json_each(?))"
}

// NotIndexed is col as a condition's column that no index is read for,
// when another condition's index is the one to read: SQLite, without
// statistics, takes the index of r.fleet = ? as soon as the one of
// r.device = ?, and a fleet may be the whole store (its unary +, as its
// manual advises). PostgreSQL chooses by its statistics.
func (d Dialect) NotIndexed(col string) string {
	if d.PG {
		return col
	}
	return "+" + col
}

// Greatest is the SQL function of the larger of two values.
func (d Dialect) Greatest() string {
	if d.PG {
		return "greatest"
	}
	return "max"
}

// Querier is a *sql.DB or a *sql.Tx.
type Querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Exec runs query on db (a pool or a transaction) in the engine's
// placeholders, its error marked when the database is unavailable.
func (s *DB) Exec(ctx context.Context, db Querier, query string, args ...any) (sql.Result, error) {
	q, a := s.statement(query, args)
	res, err := db.ExecContext(ctx, q, a...)
	return res, s.Wrap(err)
}

// Query is Exec's query that returns rows.
func (s *DB) Query(ctx context.Context, db Querier, query string, args ...any) (*sql.Rows, error) {
	q, a := s.statement(query, args)
	rows, err := db.QueryContext(ctx, q, a...)
	return rows, s.Wrap(err)
}

// QueryRow is Exec's query of one row.
func (s *DB) QueryRow(ctx context.Context, db Querier, query string, args ...any) *sql.Row {
	q, a := s.statement(query, args)
	return db.QueryRowContext(ctx, q, a...)
}

// statement is query and args as the engine takes them.
func (s *DB) statement(query string, args []any) (string, []any) {
	q, a := s.D.Q(query), s.D.Args(args)
	if s.Trace != nil {
		s.Trace(q, a)
	}
	return q, a
}

// Wrap marks an error that says the database is unavailable with
// ErrUnavailable.
func (s *DB) Wrap(err error) error {
	if err == nil || errors.Is(err, ErrUnavailable) || s.D.unavailable == nil || !s.D.unavailable(err) {
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

// Unavailable reports whether err, from a store's method, says the database
// could not be reached or was going away: the same call may succeed later.
func Unavailable(err error) bool { return errors.Is(err, ErrUnavailable) }

// maxParams bounds the placeholders of one statement (SQLite allows 32,766,
// PostgreSQL 65,535).
const maxParams = 30000

// InsertRows runs head (an INSERT up to VALUES) with rows, each of ncol
// values, in as few statements as the placeholder limit allows, then tail
// (ON CONFLICT ..., RETURNING ...). With each set, it is called on every
// row the statements return.
func (s *DB) InsertRows(ctx context.Context, tx *sql.Tx, head string, ncol int, rows [][]any, tail string, each func(*sql.Rows) error) error {
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
			if _, err := s.Exec(ctx, tx, b.String(), args...); err != nil {
				return err
			}
			continue
		}
		rs, err := s.Query(ctx, tx, b.String(), args...)
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
			return s.Wrap(err)
		}
		if err := rs.Err(); err != nil {
			return s.Wrap(err)
		}
	}
	return nil
}

// Null is v as a column: NULL for NaN and the infinities.
func Null(v float64) any {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return v
}

// Float is a column read back: NaN for NULL.
func Float(v sql.NullFloat64) float64 {
	if !v.Valid {
		return math.NaN()
	}
	return v.Float64
}

// NonNil is m, or an empty map for nil.
func NonNil(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// UnixTime is a column of nanoseconds as a time: the zero time for 0.
func UnixTime(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}
