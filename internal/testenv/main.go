package testenv

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// Main runs a package's tests, from its TestMain: they fail if a goroutine
// is left running once they end, and the PostgreSQL server they started
// (PostgresDB), if any, is stopped.
func Main(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		StopPostgres()
		os.Exit(code)
	}))
}
