package seriesdb

import "github.com/edgebench/edgebench/collector/store/sqldb"

// SeriesTables are the series, their state and their changes, in the
// store's database.
type SeriesTables struct {
	db *sqldb.DB
}

// New is the series' tables of db.
func New(db *sqldb.DB) *SeriesTables { return &SeriesTables{db: db} }
