package collector

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgebench/edgebench/internal/testenv"
)

func scrape(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("%s: %s %s", url, resp.Status, b)
	}
	return string(b)
}

// TestMetrics: /metrics in the exposition format, passed by promtool
// check metrics, with the ingest's counts and each series' latest figures
// labelled by fleet, device, server and metric only; then scraped by a
// real Prometheus, whose query API returns them.
func TestMetrics(t *testing.T) {
	promtool := testenv.Tool(t, "promtool")
	ctx := context.Background()
	listen := testenv.FreeAddr(t)
	col := startCollector(t, Config{DB: filepath.Join(t.TempDir(), "e.db"), Listen: listen, Accounts: testAccounts()})
	defer col.Close()
	d := device(t, "tcp://"+listen, "lab", "pi-1", "one")
	defer d.Close()
	rng := rand.New(rand.NewPCG(3, 3))
	for i := range 3 {
		r := fakeResult(rng, "lab", "pi-1", map[string]string{"server": "nginx", "build": fmt.Sprint(i)}, time.Now(), 1000+float64(i), 800)
		if err := d.PublishResult(ctx, r); err != nil {
			t.Fatal(err)
		}
		if err := d.WaitAck(ctx, r.ID); err != nil {
			t.Fatal(err)
		}
	}
	if err := col.Store().AddSchedule(ctx, testSchedule("nightly"), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	url := "http://" + col.WebAddr() + "/metrics"
	body := scrape(t, url)
	for _, want := range []string{
		"edgebench_results_stored_total 3", "edgebench_ingest_batches_total", "edgebench_ingest_batch_seconds_bucket",
		`edgebench_devices{fleet="lab",state="online"} 1`, `edgebench_schedules{state="active"} 1`,
		`edgebench_series_latest{device="pi-1",fleet="lab",metric="rps",server="nginx"} 1002`,
		`edgebench_series_latest{device="pi-1",fleet="lab",metric="p99_us",server="nginx"}`,
		"edgebench_series_not_exported 2", // three builds, one series each: the last one only
		"edgebench_broker_refused_total", "edgebench_store_up 1",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	for _, line := range strings.Split(body, "\n") {
		if strings.Contains(line, "build=") || strings.Contains(line, "result") && strings.Contains(line, "{") && strings.Contains(line, "id=") {
			t.Errorf("an unbounded label: %s", line)
		}
	}
	check := exec.Command(promtool, "check", "metrics")
	check.Stdin = strings.NewReader(body)
	if out, err := check.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}

	// A real Prometheus scrapes it.
	prom := testenv.Tool(t, "prometheus")
	dir := t.TempDir()
	web := testenv.FreeAddr(t)
	conf := filepath.Join(dir, "prometheus.yml")
	os.WriteFile(conf, []byte(fmt.Sprintf("global: {scrape_interval: 1s}\nscrape_configs:\n  - job_name: edgebench\n    static_configs: [{targets: ['%s']}]\n", col.WebAddr())), 0o644)
	var log bytes.Buffer
	cmd := exec.Command(prom, "--config.file="+conf, "--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+web)
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	var got struct {
		Data struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
				Value  []any             `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get("http://" + web + `/api/v1/query?query=edgebench_series_latest{metric="rps"}`)
		if err == nil {
			json.NewDecoder(resp.Body).Decode(&got)
			resp.Body.Close()
			if len(got.Data.Result) > 0 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("Prometheus has no edgebench_series_latest after a minute:\n%s", log.String())
		}
		time.Sleep(500 * time.Millisecond)
	}
	r := got.Data.Result[0]
	if r.Metric["device"] != "pi-1" || r.Metric["server"] != "nginx" || r.Metric["job"] != "edgebench" || fmt.Sprint(r.Value[1]) != "1002" {
		t.Errorf("Prometheus holds %+v", r)
	}
}
