package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/edgebench/edgebench/collector/store/retention"
	"github.com/edgebench/edgebench/collector/store/scheduledb"
	"github.com/edgebench/edgebench/collector/store/seriesdb"
	"github.com/edgebench/edgebench/collector/store/sqldb"
)

// ErrAmbiguous is returned by a lookup by an id's prefix that several
// ids have (the lookups of one thing by id that find none return
// sqldb.ErrNotFound).
var ErrAmbiguous = errors.New("prefix is ambiguous")

// ErrNotRunning is returned when a command to cancel runs nowhere: every
// device it went to has finished it.
var ErrNotRunning = errors.New("not running")

// Store keeps devices, commands, events and results in a SQLite file or a
// PostgreSQL database (Open). The SQL is one for both, with the few
// spellings that differ in the dialect of sqldb, which opens each engine
// and applies its migrations (migrations/sqlite, migrations/postgres).
//
// The files of the store: write.go holds what the collector writes,
// read.go what the commands and pages read, figures.go the errors
// recounted from the payloads, verdicts.go and specs.go the columns
// filled from the payloads. The schedules, their firings and the alerts
// are scheduledb's tables, the series and their changes seriesdb's, the
// samples' days and the pruning retention's, which the Store holds: the
// ingest feeds the series in its transaction (IngestSeries).
type Store struct {
	db *sqldb.DB
	*scheduledb.ScheduleTables
	*seriesdb.SeriesTables
	*retention.Pruner
	// backfilled is what opening the store did to the verdicts of the
	// results stored before the store kept them (zero when none were
	// left), for the log.
	backfilled VerdictBackfill
}

// Backfilled is what opening the store did to the verdicts of the
// results stored before the store kept them (zero when none were left).
func (s *Store) Backfilled() VerdictBackfill { return s.backfilled }

// Open opens the store at dsn, a postgres:// (or postgresql://) URL or
// else the path of a SQLite file, created if needed, brings its schema
// up to date and fills the columns the results stored before them lack.
func Open(ctx context.Context, dsn string) (*Store, error) {
	db, err := sqldb.Open(ctx, dsn)
	if err != nil {
		return nil, err
	}
	s := &Store{db: db, ScheduleTables: scheduledb.New(db), SeriesTables: seriesdb.New(db), Pruner: retention.New(db)}
	if err := s.backfill(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open store %s: %w", sqldb.RedactDB(dsn), err)
	}
	return s, nil
}

// backfill fills the columns of the results stored before the store kept
// them, from their payloads, and on PostgreSQL makes the tables of the
// samples' days to come.
func (s *Store) backfill(ctx context.Context) error {
	if err := s.backfillSpecs(ctx); err != nil {
		return err
	}
	if err := s.recountErrors(ctx); err != nil {
		return err
	}
	var err error
	if s.backfilled, err = s.backfillVerdicts(ctx); err != nil {
		return err
	}
	if err := s.backfillRuns(ctx); err != nil {
		return err
	}
	if s.db.D.PG {
		return s.PrepareDays(ctx, time.Now())
	}
	return nil
}

// Engine is the store's engine: "sqlite" or "postgres".
func (s *Store) Engine() string {
	if s.db.D.PG {
		return "postgres"
	}
	return "sqlite"
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }
