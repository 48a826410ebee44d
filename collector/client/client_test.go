package client_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/edgebench/edgebench/collector"
	"github.com/edgebench/edgebench/collector/broker"
	"github.com/edgebench/edgebench/collector/client"
	"github.com/edgebench/edgebench/collector/store/scheduledb"
	"github.com/edgebench/edgebench/internal/testenv"
	"github.com/edgebench/edgebench/wire"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// The client against a real collector with an API token: without it
// every call is refused with the collector's own words; with it a
// trigger that selects nothing and the cancel of a command never sent
// say so, such a command has no events, the schedules list, and a comparison's text arrives as the
// collector wrote it.
func TestClientAgainstACollector(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	col, err := collector.Start(ctx, collector.Config{DB: filepath.Join(t.TempDir(), "c.db"), Listen: testenv.FreeAddr(t),
		Web: "127.0.0.1:0", APIToken: "s3cret", Log: zaptest.NewLogger(t),
		Accounts: &broker.Accounts{Collector: broker.Account{Username: "collector", Password: "pw"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer col.Close()
	server := "http://" + col.WebAddr() + "/" // a trailing slash is taken too
	req := scheduledb.TriggerRequest{Device: "pi-9", Spec: wire.LoadTestSpec{URL: "http://127.0.0.1:8080/", Connections: 1, DurationMS: 1000}}

	anon := client.New(server, "")
	if _, err := anon.Trigger(ctx, req); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("a trigger without the token: %v", err)
	}

	c := client.New(server, "s3cret")
	if _, err := c.Trigger(ctx, req); err == nil || !strings.Contains(err.Error(), "no device matches") {
		t.Errorf("a trigger of a device the collector does not know: %v", err)
	}
	id := wire.NewID()
	if st, err := c.Command(ctx, id); err != nil || len(st.Events) != 0 || len(st.Results) != 0 {
		t.Errorf("a command never sent: %+v %v, want nothing of it", st, err)
	}
	if _, err := c.Cancel(ctx, id); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("the cancel of a command never sent: %v", err)
	}
	var ss []scheduledb.Schedule
	if err := c.Do(ctx, http.MethodGet, "/api/schedules", nil, &ss); err != nil || len(ss) != 0 {
		t.Errorf("schedules: %v %v", ss, err)
	}
	var b bytes.Buffer
	if err := c.Text(ctx, "/api/compare?by=device", &b); err != nil {
		t.Errorf("compare: %v", err)
	}
	if b.Len() == 0 {
		t.Error("compare: no text")
	}
	// The deadline is the caller's too.
	done, stop := context.WithCancel(ctx)
	stop()
	if _, err := c.Command(done, id); !errors.Is(err, context.Canceled) {
		t.Errorf("a call on a cancelled context: %v", err)
	}
}
