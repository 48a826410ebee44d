package retention

import (
	"sync"

	"github.com/edgebench/edgebench/collector/store/sqldb"
)

// Pruner keeps the store's database within its retention: the tables of
// result_samples by day (PostgreSQL), and the pruning of old results,
// commands, events, samples and records (Retain).
type Pruner struct {
	db *sqldb.DB

	partsMu sync.Mutex
	parts   map[int64]bool // PostgreSQL: the days result_samples has a table for, as far as this store knows
}

// New is the pruner of db.
func New(db *sqldb.DB) *Pruner {
	p := &Pruner{db: db}
	if db.D.PG {
		p.parts = map[int64]bool{}
	}
	return p
}
