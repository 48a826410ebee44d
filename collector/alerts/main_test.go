package alerts

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/edgebench/edgebench/internal/testenv"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		testenv.StopPostgres()
		os.Exit(code)
	}))
}
