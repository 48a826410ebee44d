package wire_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"runtime"
	"testing"

	"github.com/tinylib/msgp/msgp"

	"github.com/edgebench/edgebench/loadgen/report"
	"github.com/edgebench/edgebench/wire"
	"github.com/edgebench/edgebench/wire/wiretest"
)

func TestRoundTrip(t *testing.T) {
	res := wiretest.Result(t)
	got, err := wire.DecodeResult(wiretest.Marshal(t, res))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, res) {
		t.Errorf("result round trip differs:\n got %+v\nwant %+v", got, res)
	}
	h, err := report.DecodeHistogram(got.Runs[0].Latency)
	if err != nil {
		t.Fatalf("latency histogram: %v", err)
	}
	if h.Count() != 412_345 {
		t.Errorf("latency histogram count %d, want 412345", h.Count())
	}

	cmd := wiretest.Command()
	gc, err := wire.DecodeCommand(wiretest.Marshal(t, cmd))
	if err != nil || !reflect.DeepEqual(gc, cmd) {
		t.Errorf("command round trip: %v\n got %+v\nwant %+v", err, gc, cmd)
	}
	gs, err := wire.DecodeStatus(wiretest.Marshal(t, wiretest.Status()))
	if err != nil || !reflect.DeepEqual(gs, wiretest.Status()) {
		t.Errorf("status round trip: %v %+v", err, gs)
	}
	ge, err := wire.DecodeEvent(wiretest.Marshal(t, wiretest.Event()))
	if err != nil || !reflect.DeepEqual(ge, wiretest.Event()) {
		t.Errorf("event round trip: %v %+v", err, ge)
	}
	gh, err := wire.DecodeHeartbeat(wiretest.Marshal(t, wiretest.Heartbeat()))
	if err != nil || !reflect.DeepEqual(gh, wiretest.Heartbeat()) {
		t.Errorf("heartbeat round trip: %v %+v", err, gh)
	}
	ga, err := wire.DecodeAck(wiretest.Marshal(t, wiretest.Ack()))
	if err != nil || !reflect.DeepEqual(ga, wiretest.Ack()) {
		t.Errorf("ack round trip: %v %+v", err, ga)
	}
}

// TestUnknownFieldsSkipped decodes a message from a newer sender: extra
// keys, nested too, are skipped.
func TestUnknownFieldsSkipped(t *testing.T) {
	b := wiretest.Marshal(t, wiretest.Ack())
	// The ack is a fixmap of 2; make it 3 with an unknown nested key.
	b[0] = 0x83
	b = msgp.AppendString(b, "future")
	b = msgp.AppendMapHeader(b, 1)
	b = msgp.AppendString(b, "x")
	b = msgp.AppendArrayHeader(b, 2)
	b = msgp.AppendInt(b, 1)
	b = msgp.AppendString(b, "two")
	got, err := wire.DecodeAck(b)
	if err != nil {
		t.Fatal(err)
	}
	if got.ResultID != wiretest.Ack().ResultID {
		t.Errorf("result id %q", got.ResultID)
	}
}

func TestDecodeRejects(t *testing.T) {
	good := wiretest.Marshal(t, wiretest.Ack())
	v2 := *wiretest.Ack()
	v2.V = 2
	noV := *wiretest.Ack()
	noV.V = 0
	badID := *wiretest.Ack()
	badID.ResultID = "../../etc/passwd"
	cases := []struct {
		name string
		b    []byte
		want error
	}{
		{"empty", nil, wire.ErrMalformed},
		{"truncated", good[:len(good)-1], wire.ErrMalformed},
		{"trailing", append(append([]byte{}, good...), 0xc0), wire.ErrMalformed},
		{"not a map", []byte{0x93, 1, 2, 3}, wire.ErrMalformed},
		{"bad prefix", []byte{0xc1}, wire.ErrMalformed},
		{"newer version", wiretest.Marshal(t, &v2), wire.ErrVersion},
		{"no version", wiretest.Marshal(t, &noV), wire.ErrVersion},
		{"bad id", wiretest.Marshal(t, &badID), wire.ErrMalformed},
		{"too large", make([]byte, wire.DefaultMaxPayload+1), wire.ErrTooLarge},
		{"deep", bytes.Repeat([]byte{0x91}, 1000), wire.ErrMalformed},
	}
	for _, c := range cases {
		_, err := wire.DecodeAck(c.b)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: error %v, want %v", c.name, err, c.want)
		}
	}
	if _, err := wire.DecodeResultMax(wiretest.Marshal(t, wiretest.Result(t)), 1000); !errors.Is(err, wire.ErrTooLarge) {
		t.Errorf("result over a 1000-byte cap: %v", err)
	}
}

// TestHugeClaimNoAllocation is the 8-byte message that claims an array of
// 4 billion runs: rejected by the shape check without a large allocation.
func TestHugeClaimNoAllocation(t *testing.T) {
	msg := []byte{0x81, 0xa2, 'r', 's', 0xdd, 0xff, 0xff, 0xff} // {"rs": array32(0xffffff..)} cut short
	if len(msg) != 8 {
		t.Fatal(len(msg))
	}
	msg2 := []byte{0x81, 0xa2, 't', 'l', 0xdc, 0xff, 0xff, 0x80} // {"tl": array16(65535) with one element}
	for _, m := range [][]byte{msg, msg2, {0x81, 0xa2, 'h', 'l', 0xc6, 0x00, 0xff, 0xff}} {
		if _, err := wire.DecodeResult(m); !errors.Is(err, wire.ErrMalformed) {
			t.Errorf("% x: error %v, want ErrMalformed", m, err)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range 100 {
			_, _ = wire.DecodeResult(m)
		}
		runtime.ReadMemStats(&after)
		if per := (after.TotalAlloc - before.TotalAlloc) / 100; per > 4096 {
			t.Errorf("% x: %d bytes allocated per decode", m, per)
		}
	}
}

// TestElementLimit shows the second fence: a message whose array really
// holds more elements than the field's limit fails in the generated code.
func TestElementLimit(t *testing.T) {
	var b []byte
	b = msgp.AppendMapHeader(b, 1)
	b = msgp.AppendString(b, "rs")
	b = msgp.AppendArrayHeader(b, 1001)
	for range 1001 {
		b = msgp.AppendMapHeader(b, 0)
	}
	_, err := wire.DecodeResult(b)
	if !errors.Is(err, msgp.ErrLimitExceeded) {
		t.Errorf("1001 runs: %v, want ErrLimitExceeded", err)
	}
}

func TestSigningBytes(t *testing.T) {
	c := wiretest.Command()
	a, err := c.SigningBytes("lab", "pi-1")
	if err != nil {
		t.Fatal(err)
	}
	if c.Sig == nil {
		t.Fatal("SigningBytes cleared the caller's Sig")
	}
	// The receiver decodes and re-encodes: the same bytes.
	d, err := wire.DecodeCommand(wiretest.Marshal(t, c))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := d.SigningBytes("lab", "pi-1")
	if !bytes.Equal(a, b) {
		t.Error("signing bytes differ after a round trip")
	}
	unsigned := *c
	unsigned.Sig = nil
	if !bytes.HasSuffix(a, wiretest.Marshal(t, &unsigned)) {
		t.Error("signing bytes do not end with the unsigned encoding")
	}
	// The target is covered: another device, another fleet, the fleet's
	// broadcast, or the same strings split differently.
	for _, target := range [][2]string{{"lab", "pi-2"}, {"lab2", "pi-1"}, {"lab", wire.AllDevices}, {"labp", "i-1"}, {"", "labpi-1"}} {
		if b, _ := d.SigningBytes(target[0], target[1]); bytes.Equal(a, b) {
			t.Errorf("signing bytes for %s/%s equal those for lab/pi-1", target[0], target[1])
		}
	}
	d.Spec.LoadTest.Connections++
	b, _ = d.SigningBytes("lab", "pi-1")
	if bytes.Equal(a, b) {
		t.Error("signing bytes do not cover the spec")
	}
	d.Spec.LoadTest.Connections--
	d.Select = append(d.Select, wire.Label{K: "server", V: "nginx"})
	if b, _ = d.SigningBytes("lab", "pi-1"); bytes.Equal(a, b) {
		t.Error("signing bytes do not cover the selector")
	}
}

func TestValidTransition(t *testing.T) {
	ok := [][2]wire.EventState{
		{"", wire.StateAccepted}, {"", wire.StateRejected}, {wire.StateAccepted, wire.StateRunning}, {wire.StateAccepted, wire.StateCancelled},
		{wire.StateRunning, wire.StateRunning}, {wire.StateRunning, wire.StateSucceeded}, {wire.StateRunning, wire.StateFailed},
		{wire.StateRunning, wire.StateCancelled}, {wire.StateRunning, wire.StateTimedOut},
	}
	bad := [][2]wire.EventState{
		{"", wire.StateRunning}, {"", wire.StateSucceeded}, {wire.StateRejected, wire.StateAccepted}, {wire.StateSucceeded, wire.StateRunning},
		{wire.StateAccepted, wire.StateSucceeded}, {wire.StateAccepted, wire.StateAccepted}, {wire.StateFailed, wire.StateFailed}, {wire.StateRunning, "bogus"},
	}
	for _, p := range ok {
		if !wire.ValidTransition(p[0], p[1]) {
			t.Errorf("%q -> %q refused", p[0], p[1])
		}
	}
	for _, p := range bad {
		if wire.ValidTransition(p[0], p[1]) {
			t.Errorf("%q -> %q allowed", p[0], p[1])
		}
	}
	for _, s := range []wire.EventState{wire.StateRejected, wire.StateSucceeded, wire.StateFailed, wire.StateCancelled, wire.StateTimedOut} {
		if !s.Terminal() {
			t.Errorf("%s not terminal", s)
		}
	}
}

// TestResultSize checks the compactness goal: a 30-second result with its
// per-second samples is at most 0.4x the same result as JSON (encoding/json
// of the same struct, histograms as base64 of the same bytes), with and
// without histograms. JSON with each histogram as [value_us, count]
// buckets, as HDR histogram JSON exports do, is logged beside it.
func TestResultSize(t *testing.T) {
	res := wiretest.Result(t)
	mp := wiretest.Marshal(t, res)
	js, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	buckets := resultJSON(t, res, true)
	bare := *res
	bare.Runs = append([]wire.Run(nil), res.Runs...)
	bare.Runs[0].Latency, bare.Runs[0].Connect, bare.Runs[0].Waiting, bare.Runs[0].Processing = nil, nil, nil, nil
	mpBare := wiretest.Marshal(t, &bare)
	jsBare, _ := json.Marshal(&bare)

	ratio := float64(len(mp)) / float64(len(js))
	hists := len(res.Runs[0].Latency) + len(res.Runs[0].Connect) + len(res.Runs[0].Waiting) + len(res.Runs[0].Processing)
	t.Logf("30 s result, 30 samples: msgpack %d bytes (histograms %d); JSON %d bytes; ratio %.3f", len(mp), hists, len(js), ratio)
	t.Logf("JSON with histograms as bucket lists: %d bytes, ratio %.3f", len(buckets), float64(len(mp))/float64(len(buckets)))
	t.Logf("without histograms: msgpack %d bytes, JSON %d bytes, ratio %.3f", len(mpBare), len(jsBare), float64(len(mpBare))/float64(len(jsBare)))
	if ratio > 0.4 {
		t.Errorf("msgpack is %.3f of JSON, want <= 0.4", ratio)
	}
	if r := float64(len(mpBare)) / float64(len(jsBare)); r > 0.4 {
		t.Errorf("without histograms msgpack is %.3f of JSON, want <= 0.4", r)
	}
}

// resultJSON is res as JSON, with histograms as bucket lists when buckets.
func resultJSON(t testing.TB, res *wire.Result, buckets bool) []byte {
	t.Helper()
	b, err := json.Marshal(res)
	if err != nil || !buckets {
		return b
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for i, r := range m["runs"].([]any) {
		run := r.(map[string]any)
		for key, h := range map[string][]byte{"latency_hist": res.Runs[i].Latency, "connect_hist": res.Runs[i].Connect,
			"waiting_hist": res.Runs[i].Waiting, "processing_hist": res.Runs[i].Processing} {
			hh, err := report.DecodeHistogram(h)
			if err != nil {
				t.Fatal(err)
			}
			var bs [][2]int64
			hh.ForEach(func(v, c int64) { bs = append(bs, [2]int64{v, c}) })
			run[key] = bs
		}
	}
	b, err = json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestMarshalNoAllocs(t *testing.T) {
	res := wiretest.Result(t)
	buf := make([]byte, 0, 64<<10)
	allocs := testing.AllocsPerRun(100, func() {
		var err error
		buf, err = res.MarshalMsg(buf[:0])
		if err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("MarshalMsg into a reused buffer: %v allocations", allocs)
	}
}

func BenchmarkResultMarshal(b *testing.B) {
	res := wiretest.Result(b)
	buf, _ := res.MarshalMsg(nil)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = res.MarshalMsg(buf[:0])
	}
	b.ReportMetric(float64(len(buf)), "msgpack-bytes")
}

func BenchmarkResultUnmarshal(b *testing.B) {
	buf := wiretest.Marshal(b, wiretest.Result(b))
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := wire.DecodeResult(buf); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkResultJSON(b *testing.B) {
	res := wiretest.Result(b)
	var n int
	b.ReportAllocs()
	for b.Loop() {
		js, _ := json.Marshal(res)
		n = len(js)
	}
	b.ReportMetric(float64(n), "json-bytes")
	b.ReportMetric(float64(len(resultJSON(b, res, true))), "json-bucket-bytes")
}
