package collector

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgebench/edgebench/collector/store/scheduledb"
	"github.com/edgebench/edgebench/collector/store/storetest"
	"github.com/edgebench/edgebench/internal/testenv"
)

// TestScheduleLimits: over the API's socket, with the default limits but
// a count of 3, a schedule every 1 s or 59 s, a jitter of 1,000 h (of a
// cron schedule) or of 61 min, and a period of 251 years (past 2262, where
// the store's nanoseconds wrap: due in 1944, fired at once, on main at
// 588e3ea) are refused with the reason; every 1 min and a jitter of
// exactly 1 h are taken; a fourth schedule is refused with 409 and
// nothing of the refused ones is stored.
func TestScheduleLimits(t *testing.T) {
	col := startCollector(t, Config{DB: filepath.Join(t.TempDir(), "s.db"), Listen: testenv.FreeAddr(t), Accounts: testAccounts(),
		Schedules: scheduledb.ScheduleLimits{Max: 3}})
	defer col.Close()
	post := func(sch *scheduledb.Schedule) (int, string) {
		t.Helper()
		body, _ := json.Marshal(sch)
		resp, err := http.Post("http://"+col.WebAddr()+"/api/schedules", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	sch := func(name string, every, jitter time.Duration, cron string) *scheduledb.Schedule {
		s := storetest.Schedule(name)
		s.Every, s.Jitter, s.Cron = every, jitter, cron
		return s
	}
	const year = 365 * 24 * time.Hour
	for _, c := range []struct {
		sch  *scheduledb.Schedule
		code int
		want string
	}{
		{sch("second", time.Second, 0, ""), 400, "--every 1s is shorter than this collector's shortest period 1m0s"},
		{sch("fifty-nine", 59*time.Second, 0, ""), 400, "shorter than"},
		{sch("minute", time.Minute, 0, ""), 200, `"every":60000000000`},
		{sch("late", 0, 1000*time.Hour, "0 2 * * *"), 400, "--jitter 1000h0m0s is longer than this collector's longest 1h0m0s"},
		{sch("late2", 2*time.Hour, time.Hour+time.Minute, ""), 400, "longer than"},
		{sch("spread", 2*time.Hour, time.Hour, ""), 200, `"jitter":3600000000000`},
		{sch("ages", 251*year, 0, ""), 400, "first firing would be after 2262"},
		{sch("nightly", 0, 0, "30 2 * * *"), 200, `"cron":"30 2 * * *"`},
		{sch("fourth", time.Hour, 0, ""), 409, "3 stored, this collector's most"},
	} {
		code, body := post(c.sch)
		if code != c.code || !strings.Contains(body, c.want) {
			t.Errorf("%s: %d %q, want %d with %q", c.sch.Name, code, body, c.code, c.want)
		}
	}
	ss, err := col.Store().Schedules(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range ss {
		names = append(names, s.Name)
		if s.NextAt.Before(time.Now()) || s.NextAt.After(time.Now().Add(25*time.Hour)) {
			t.Errorf("%s: next firing %v, want within a day", s.Name, s.NextAt)
		}
	}
	if strings.Join(names, " ") != "minute nightly spread" {
		t.Errorf("stored %q, want minute nightly spread", names)
	}
}
