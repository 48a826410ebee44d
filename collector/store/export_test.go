package store

import (
	"database/sql"
	"sort"

	"github.com/edgebench/edgebench/collector/store/migrations"
	"github.com/edgebench/edgebench/collector/store/retention"
	"github.com/edgebench/edgebench/wire"
)

// What the store's tests (package store_test) reach inside it.

// W is the store's pool of writes, for the tests' own SQL.
func (s *Store) W() *sql.DB { return s.db.W }

// R is the store's pool of reads.
func (s *Store) R() *sql.DB { return s.db.R }

// Q is query in the placeholders of the store's engine.
func (s *Store) Q(query string) string { return s.db.D.Q(query) }

// MigrationNames are the names of engine's migrations, in order.
func MigrationNames(engine string) ([]string, error) {
	ms, err := migrations.Of(engine)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(ms))
	for i, m := range ms {
		names[i] = m.Name
	}
	return names, nil
}

// PruneChunk is how many results one pruning transaction deletes.
const PruneChunk = retention.PruneChunk

// Summarize sums up the verdicts of a result's runs as the runs listing
// does.
func Summarize(vs []*wire.Verdict) string { return summarize(vs) }

// GroupColumns are the keys the store has a column of results for, in
// order.
func GroupColumns() []string {
	keys := make([]string, 0, len(groupColumns))
	for k := range groupColumns {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Trace calls f with each statement the store runs, as its engine gets
// it (nil: none).
func (s *Store) Trace(f func(query string, args []any)) { s.db.Trace = f }
