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
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/edgebench/edgebench/collector/store/storetest"
	"github.com/edgebench/edgebench/internal/testenv"
	"github.com/edgebench/edgebench/wire"
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
	ctx := context.Background()
	listen := testenv.FreeAddr(t)
	col := startCollector(t, Config{DB: filepath.Join(t.TempDir(), "e.db"), Listen: listen, Accounts: testAccounts()})
	defer col.Close()
	d := device(t, "tcp://"+listen, "lab", "pi-1", "one")
	defer d.Close()
	rng := rand.New(rand.NewPCG(3, 3))
	for i := range 3 {
		r := storetest.FakeResult(rng, "lab", "pi-1", map[string]string{"server": "nginx", "build": fmt.Sprint(i)}, time.Now(), 1000+float64(i), 800)
		if err := d.PublishResult(ctx, r); err != nil {
			t.Fatal(err)
		}
		if err := d.WaitAck(ctx, r.ID); err != nil {
			t.Fatal(err)
		}
	}
	if err := col.Store().AddSchedule(ctx, storetest.Schedule("nightly"), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	// pi-2 reports 3 results in its spool (a raw client: the transport
	// reports its own spool's count).
	raw, err := testenv.MQTTClient("tcp://"+listen, "edgebench-lab-pi-2", "pi-2", "two")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Disconnect(0)
	testenv.Until(t, "pi-2's heartbeat with 3 results spooled", func() bool {
		hb, _ := (&wire.Heartbeat{V: wire.SchemaVersion, At: time.Now().UTC(), UptimeS: 5, Spooled: 3}).MarshalMsg(nil)
		raw.Publish(prefix+"/lab/pi-2/heartbeat", 0, false, hb).Wait()
		ds, _ := col.Store().Devices(ctx)
		for _, d := range ds {
			if d.ID == "pi-2" && d.Heartbeat != nil && d.Heartbeat.Spooled == 3 {
				return true
			}
		}
		return false
	})
	url := "http://" + col.WebAddr() + "/metrics"
	body := scrape(t, url)
	for _, want := range []string{
		"edgebench_results_stored_total 3", "edgebench_ingest_batches_total", "edgebench_ingest_batch_seconds_bucket",
		`edgebench_devices{fleet="lab",state="online"} 1`, `edgebench_schedules{state="active"} 1`,
		`edgebench_series_latest{device="pi-1",fleet="lab",metric="rps",server="nginx"} 1002`,
		`edgebench_series_latest{device="pi-1",fleet="lab",metric="p99_us",server="nginx"}`,
		"edgebench_series_not_exported 2", // three builds, one series each: the last one only
		"edgebench_broker_refused_total", "edgebench_store_up 1", `edgebench_device_spooled_results{device="pi-2",fleet="lab"} 3`,
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
	checkDashboard(t, "../packaging/grafana/edgebench.json", body)
	check := exec.Command(testenv.Tool(t, "promtool"), "check", "metrics")
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

// checkDashboard validates the Grafana dashboard: the fields Grafana
// needs to import it (uid, title, schemaVersion, the datasource input,
// panels with an id, a type, a place on the 24-column grid and targets
// with a refId and an expression), and that every edgebench_ metric its
// expressions and variables name is one that /metrics (body) exposes.
func checkDashboard(t *testing.T, path, body string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	type target struct {
		RefID      string         `json:"refId"`
		Expr       string         `json:"expr"`
		Datasource map[string]any `json:"datasource"`
	}
	var d struct {
		UID           string `json:"uid"`
		Title         string `json:"title"`
		SchemaVersion int    `json:"schemaVersion"`
		Inputs        []struct {
			Name, Type, PluginID string
		} `json:"__inputs"`
		Templating struct {
			List []struct {
				Name       string `json:"name"`
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
		Panels []struct {
			ID      int    `json:"id"`
			Title   string `json:"title"`
			Type    string `json:"type"`
			GridPos struct {
				X, Y, W, H int
			} `json:"gridPos"`
			Datasource map[string]any `json:"datasource"`
			Targets    []target       `json:"targets"`
		} `json:"panels"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if d.UID == "" || len(d.UID) > 40 || d.Title == "" || d.SchemaVersion < 30 || len(d.Panels) == 0 {
		t.Errorf("%s: uid %q, title %q, schemaVersion %d, %d panels", path, d.UID, d.Title, d.SchemaVersion, len(d.Panels))
	}
	if len(d.Inputs) != 1 || d.Inputs[0].Name != "DS_PROMETHEUS" || d.Inputs[0].Type != "datasource" {
		t.Errorf("%s: __inputs %+v, want the Prometheus datasource DS_PROMETHEUS", path, d.Inputs)
	}
	exposed := map[string]bool{}
	for _, line := range strings.Split(body, "\n") {
		if f := strings.Fields(line); len(f) >= 3 && f[0] == "#" && f[1] == "TYPE" {
			exposed[f[2]] = true
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				exposed[f[2]+suffix] = true
			}
		}
	}
	names := regexp.MustCompile(`edgebench_[a-z0-9_]+`)
	checkExpr := func(where, e string) {
		if e == "" {
			t.Errorf("%s: no expression", where)
		}
		for _, n := range names.FindAllString(e, -1) {
			if !exposed[n] {
				t.Errorf("%s: %s is not a metric /metrics exposes", where, n)
			}
		}
	}
	ids := map[int]bool{}
	kinds := map[string]bool{"timeseries": true, "stat": true, "table": true, "gauge": true, "bargauge": true}
	for _, p := range d.Panels {
		where := fmt.Sprintf("panel %d %q", p.ID, p.Title)
		if p.ID == 0 || ids[p.ID] || !kinds[p.Type] || p.GridPos.W <= 0 || p.GridPos.H <= 0 || p.GridPos.X+p.GridPos.W > 24 {
			t.Errorf("%s: id, type %q or place %+v", where, p.Type, p.GridPos)
		}
		ids[p.ID] = true
		if p.Datasource["uid"] != "${DS_PROMETHEUS}" || len(p.Targets) == 0 {
			t.Errorf("%s: datasource %v, %d targets", where, p.Datasource, len(p.Targets))
		}
		for _, tg := range p.Targets {
			if tg.RefID == "" {
				t.Errorf("%s: a target without refId", where)
			}
			checkExpr(where, tg.Expr)
		}
	}
	for _, v := range d.Templating.List {
		checkExpr("variable "+v.Name, v.Definition)
	}
}
