package web

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/edgebench/edgebench/collector/store/storetest"
)

// TestSchedulesPageShowsTheTarget: /schedules names both devices of a
// schedule of runs across two devices, the target in its own fleet when
// it has one and in the loader's otherwise, and a schedule of one device
// as before.
func TestSchedulesPageShowsTheTarget(t *testing.T) {
	ctx := context.Background()
	s := storetest.SQLite.Open(t)
	for _, c := range []struct{ name, device, target, targetFleet string }{
		{"alone", "pi-1", "", ""},
		{"pair", "laptop", "pi3", ""},
		{"across", "laptop", "pi4", "lab2"},
	} {
		sch := storetest.Schedule(c.name)
		sch.Every, sch.Trigger.Device, sch.Trigger.TargetDevice, sch.Trigger.TargetFleet = time.Hour, c.device, c.target, c.targetFleet
		if err := s.AddSchedule(ctx, sch, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(SchedulesPage(s, zap.NewNop(), false))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/schedules")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /schedules: %d %v", resp.StatusCode, err)
	}
	cell := regexp.MustCompile(`(?s)<tr data-name="([^"]+)">.*?<td class="l labels">(.*?)</td>`)
	got := map[string]string{}
	for _, m := range cell.FindAllStringSubmatch(string(b), -1) {
		got[m[1]] = strings.TrimSpace(m[2])
	}
	for name, want := range map[string]string{"alone": "lab/pi-1", "pair": "lab/laptop loads lab/pi3", "across": "lab/laptop loads lab2/pi4"} {
		if got[name] != want {
			t.Errorf("schedule %s's devices %q, want %q", name, got[name], want)
		}
	}
}
