package broker

import (
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/edgebench/edgebench/internal/testenv"
	"github.com/edgebench/edgebench/wire"
)

func TestMain(m *testing.M) { testenv.Main(m) }

const prefix = wire.DefaultPrefix

// testAccounts are the collector's account and two devices of fleet lab,
// checked.
func testAccounts(t testing.TB) *Accounts {
	t.Helper()
	a := &Accounts{
		Collector: Account{Username: "collector", Password: "collector-secret"},
		Devices:   []Account{{Fleet: "lab", ID: "pi-1", Password: "one"}, {Fleet: "lab", ID: "pi-2", Password: "two"}},
	}
	if err := a.Check(); err != nil {
		t.Fatal(err)
	}
	return a
}

// startObserved starts a broker on listen with accounts a and limits lim,
// whose log the test reads; it is closed when the test ends.
func startObserved(t *testing.T, listen string, a *Accounts, lim Limits) *observer.ObservedLogs {
	t.Helper()
	core, logs := observer.New(zapcore.DebugLevel)
	b, err := Start(Config{Listen: listen, Accounts: a, Prefix: prefix, Limits: lim, Log: zap.New(core)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return logs
}
