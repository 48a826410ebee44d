package scheduledb

import "github.com/edgebench/edgebench/collector/store/sqldb"

// ScheduleTables are the schedules, their firings and the alerts raised,
// in the store's database.
type ScheduleTables struct {
	db *sqldb.DB
}

// New is the schedules' tables of db.
func New(db *sqldb.DB) *ScheduleTables { return &ScheduleTables{db: db} }
