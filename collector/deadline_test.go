package collector

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/edgebench/edgebench/collector/store/scheduledb"
	"github.com/edgebench/edgebench/collector/store/sqldb"
	"github.com/edgebench/edgebench/internal/testenv"
	"github.com/edgebench/edgebench/wire"
)

// TestHungPostgresHoldsNothing: a PostgreSQL that stops answering (its
// processes stopped, its connections open) costs each store call the
// store's deadline: an API request fails instead of hanging, a trigger
// says so, and the collector, with heartbeats to write, still stops.
func TestHungPostgresHoldsNothing(t *testing.T) {
	pg := testenv.StartPostgres(t)
	const timeout = time.Second
	c := startCollector(t, Config{DB: pg.NewDatabase(t), Listen: testenv.FreeAddr(t), Accounts: testAccounts(), storeTimeout: timeout})
	thaw := pg.Freeze(t)
	defer thaw()

	start := time.Now()
	resp, err := http.Get("http://" + c.WebAddr() + "/api/devices")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode < 500 || time.Since(start) > 20*timeout {
		t.Errorf("GET /api/devices on a hung store: %s after %v, want a server error after about %v", resp.Status, time.Since(start), timeout)
	}
	_, err = c.Trigger(context.Background(), scheduledb.TriggerRequest{Fleet: "lab", Spec: wire.LoadTestSpec{URL: "http://127.0.0.1/"}})
	if !sqldb.Unavailable(err) || !strings.Contains(err.Error(), "did not answer") {
		t.Errorf("trigger on a hung store: %v, want the store unavailable", err)
	}

	c.hbMu.Lock()
	c.heartbeat = map[wire.Addr]*wire.Heartbeat{{Fleet: "lab", Device: "pi-1"}: {V: wire.SchemaVersion, At: time.Now().UTC()}}
	c.hbMu.Unlock()
	done := make(chan error, 1)
	go func() { done <- c.Close() }()
	select {
	case <-done:
	case <-time.After(20 * timeout):
		thaw()
		<-done
		t.Fatal("Close waited on the hung store for more than its deadline")
	}
}
