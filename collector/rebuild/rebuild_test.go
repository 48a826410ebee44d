package rebuild

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/edgebench/edgebench/internal/testenv"
	"github.com/edgebench/edgebench/loadgen"
	"github.com/edgebench/edgebench/loadgen/report"
	"github.com/edgebench/edgebench/measure"
	"github.com/edgebench/edgebench/probe"
	"github.com/edgebench/edgebench/probe/machine"
	"github.com/edgebench/edgebench/wire"
	"github.com/edgebench/edgebench/wire/wiretest"
)

// TestRunSurvivesTheWire runs a real load test with the probe on the live
// machine, maps it onto the wire as a device does (measure), sends it
// through msgpack and checks that the reports rebuilt here (LoadResult,
// SystemReport) say what the device's did.
func TestRunSurvivesTheWire(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Server", "wire-test")
		w.Header().Set("Content-Length", "2159") // an HTTP/1.0 request is kept alive only with it
		w.Write(bytes.Repeat([]byte("x"), 2159))
	}))
	defer srv.Close()
	cfg := loadgen.Config{URL: srv.URL + "/index.html", Connections: 4, Duration: 1500 * time.Millisecond, KeepAlive: true,
		Warmup: 200 * time.Millisecond, Dialect: loadgen.DialectAB, Method: "POST", Body: []byte("a=1")}
	p := probe.New("/")
	rec := p.Record(context.Background(), 500*time.Millisecond, []probe.Watch{{Name: "nothing-by-this-name"}})
	res, err := loadgen.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	rec.MarkEnd()
	sys := rec.Stop()
	p.Close()

	out := wire.Result{V: wire.SchemaVersion, ID: wire.NewID(), Fleet: "f", Device: "d", CreatedAt: time.Now().UTC(),
		Kind: wire.KindLoadTest, Outcome: wire.StateSucceeded, Spec: measure.SpecOf(cfg, 1, 500*time.Millisecond, nil),
		Runs: []wire.Run{measure.FromRun(res, sys)}}
	b, err := out.MarshalMsg(nil)
	if err != nil {
		t.Fatal(err)
	}
	in, err := wire.DecodeResult(b)
	if err != nil {
		t.Fatalf("decode %d bytes: %v", len(b), err)
	}
	back, err := LoadResult(&in.Runs[0], in.Spec)
	if err != nil {
		t.Fatal(err)
	}
	if back.Completed != res.Completed || back.OK != res.OK || back.Server != "wire-test" || back.DocLength != 2159 ||
		back.StatusCodes[200] != res.StatusCodes[200] || len(back.Timeline) != len(res.Timeline) {
		t.Errorf("counts changed on the wire: %+v", back)
	}
	for _, q := range report.Percentiles {
		if back.Latency.Quantile(q/100) != res.Latency.Quantile(q/100) {
			t.Errorf("p%v: %d, sent %d", q, back.Latency.Quantile(q/100), res.Latency.Quantile(q/100))
		}
	}
	var sent, got bytes.Buffer
	res.Duration = res.Duration.Truncate(time.Microsecond) // the wire's unit
	report.WriteAB(&sent, res, report.ABOptions{})
	report.WriteAB(&got, back, report.ABOptions{})
	if sent.String() != got.String() || in.Spec.Mode != "ab" || res.KeepAliveResponses == 0 || res.Sent == 0 ||
		!strings.Contains(got.String(), "Total body sent:") {
		t.Errorf("ab report differs after the wire (mode %q):\n%s\nvs\n%s", in.Spec.Mode, sent.String(), got.String())
	}
	// The text report, with its drained and warm-up lines.
	sent.Reset()
	got.Reset()
	report.WriteText(&sent, res)
	report.WriteText(&got, back)
	if sent.String() != got.String() || res.WarmupRequests == 0 || back.LengthCheck {
		t.Errorf("text report differs after the wire (warm-up %d, length check %v):\n%s\nvs\n%s", res.WarmupRequests, back.LengthCheck, sent.String(), got.String())
	}
	if res.Drained.StatusCodes == nil || len(res.Drained.StatusCodes) != len(back.Drained.StatusCodes) || res.Drained.Requests != back.Drained.Requests {
		t.Errorf("drained %+v after the wire, %+v before", back.Drained, res.Drained)
	}

	sysIn := in.Runs[0].System
	if sysIn == nil || len(sysIn.Samples) < 2 || sysIn.Summary.CPU == nil || sysIn.Summary.Mem == nil {
		t.Fatalf("system section lost: %+v", sysIn)
	}
	rep := SystemReport(sysIn)
	if d := rep.Summary.CPU.User.Mean - sys.Summary.CPU.User.Mean; d > 0.01 || d < -0.01 {
		t.Errorf("CPU user %.3f after the wire, %.3f before", rep.Summary.CPU.User.Mean, sys.Summary.CPU.User.Mean)
	}
	var text bytes.Buffer
	if err := rep.WriteText(&text); err != nil || !bytes.Contains(text.Bytes(), []byte("CPU %")) {
		t.Errorf("system text: %v\n%s", err, text.String())
	}
	js, _ := json.Marshal(struct {
		R *report.JSON    `json:"r"`
		S *machine.Report `json:"s"`
	}{new(res.JSON()), sys})
	t.Logf("one %.1f s run: %d bytes of msgpack, %d of edgebench's JSON report", res.Duration.Seconds(), len(b), len(js))
}

// TestHTTPSRunSurvivesTheWire: an HTTP/2 run over TLS against a real
// nginx, mapped onto the wire as a device does and rebuilt here, says
// what the device's said: the protocol and streams, what TLS negotiated
// and the handshake's time, what the HTTP/2 connections saw, h2load's
// summary.
func TestHTTPSRunSurvivesTheWire(t *testing.T) {
	ngx := testenv.NginxWith(t, testenv.NginxConfig{TLS: true})
	ca, err := os.ReadFile(ngx.Certs.CA)
	if err != nil {
		t.Fatal(err)
	}
	cfg := loadgen.Config{URL: "https://" + ngx.HTTPS + "/index.html", Connections: 2, Duration: 800 * time.Millisecond, KeepAlive: true,
		HTTP2: true, Streams: 4, TLS: loadgen.TLSConfig{CACerts: ca, NoResume: true, Version: tls.VersionTLS13}}
	res, err := loadgen.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	out := wire.Result{V: wire.SchemaVersion, ID: wire.NewID(), Fleet: "f", Device: "d", CreatedAt: time.Now().UTC(),
		Kind: wire.KindLoadTest, Outcome: wire.StateSucceeded, Spec: measure.SpecOf(cfg, 1, time.Second, nil),
		Runs: []wire.Run{measure.FromRun(res, nil)}}
	in, err := wire.DecodeResult(wiretest.Marshal(t, &out))
	if err != nil {
		t.Fatal(err)
	}
	if sp := in.Spec; sp.Protocol != "h2" || sp.Streams != 4 || !sp.NoTLSResume || sp.TLSVersion != "1.3" {
		t.Errorf("spec after the wire: %+v", sp)
	}
	back, err := LoadResult(&in.Runs[0], in.Spec)
	if err != nil {
		t.Fatal(err)
	}
	res.Duration = res.Duration.Truncate(time.Microsecond) // the wire's unit
	if res.OK == 0 || res.TLS == nil || res.TLS.ALPN != "h2" || res.H2 == nil {
		t.Fatalf("the run: ok %d, tls %+v, h2 %+v", res.OK, res.TLS, res.H2)
	}
	sent, got := res.JSON(), back.JSON()
	if sent.Protocol != got.Protocol || !reflect.DeepEqual(sent.TLS, got.TLS) || !reflect.DeepEqual(sent.H2, got.H2) {
		t.Errorf("JSON after the wire: protocol %q tls %+v h2 %+v, sent %q %+v %+v", got.Protocol, got.TLS, got.H2, sent.Protocol, sent.TLS, sent.H2)
	}
	// h2load's summary, but for two lines the wire does not carry as they
	// are: time to 1st byte (the waiting times travel with 2 significant
	// digits, as for ab's table) and the per-connection req/s (as wrk's
	// per-thread figures, they stay on the device).
	var a, b bytes.Buffer
	report.WriteH2load(&a, res)
	report.WriteH2load(&b, back)
	h2lines := func(s string) string {
		return regexp.MustCompile(`(?m)^(time to 1st byte|req/s           ):.*$`).ReplaceAllString(s, "$1: (not on the wire)")
	}
	if h2lines(a.String()) != h2lines(b.String()) || !strings.Contains(b.String(), "succeeded, 0 failed") {
		t.Errorf("h2load's summary differs after the wire:\n%s\nvs\n%s", a.String(), b.String())
	}
	a.Reset()
	b.Reset()
	report.WriteText(&a, res)
	report.WriteText(&b, back)
	if a.String() != b.String() || !strings.Contains(b.String(), "TLSv1.3") {
		t.Errorf("text report differs after the wire:\n%s\nvs\n%s", a.String(), b.String())
	}
}
