package transport

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"runtime"
	"testing"

	"github.com/tinylib/msgp/msgp"

	"github.com/edgebench/edgebench/loadgen/report"
)

func TestRoundTrip(t *testing.T) {
	res := testResult(t)
	got, err := DecodeResult(mustMarshal(t, res))
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

	cmd := testCommand()
	gc, err := DecodeCommand(mustMarshal(t, cmd))
	if err != nil || !reflect.DeepEqual(gc, cmd) {
		t.Errorf("command round trip: %v\n got %+v\nwant %+v", err, gc, cmd)
	}
	gs, err := DecodeStatus(mustMarshal(t, testStatus()))
	if err != nil || !reflect.DeepEqual(gs, testStatus()) {
		t.Errorf("status round trip: %v %+v", err, gs)
	}
	ge, err := DecodeEvent(mustMarshal(t, testEvent()))
	if err != nil || !reflect.DeepEqual(ge, testEvent()) {
		t.Errorf("event round trip: %v %+v", err, ge)
	}
	gh, err := DecodeHeartbeat(mustMarshal(t, testHeartbeat()))
	if err != nil || !reflect.DeepEqual(gh, testHeartbeat()) {
		t.Errorf("heartbeat round trip: %v %+v", err, gh)
	}
	ga, err := DecodeAck(mustMarshal(t, testAck()))
	if err != nil || !reflect.DeepEqual(ga, testAck()) {
		t.Errorf("ack round trip: %v %+v", err, ga)
	}
}

// TestUnknownFieldsSkipped decodes a message from a newer sender: extra
// keys, nested too, are skipped.
func TestUnknownFieldsSkipped(t *testing.T) {
	b := mustMarshal(t, testAck())
	// The ack is a fixmap of 2; make it 3 with an unknown nested key.
	b[0] = 0x83
	b = msgp.AppendString(b, "future")
	b = msgp.AppendMapHeader(b, 1)
	b = msgp.AppendString(b, "x")
	b = msgp.AppendArrayHeader(b, 2)
	b = msgp.AppendInt(b, 1)
	b = msgp.AppendString(b, "two")
	got, err := DecodeAck(b)
	if err != nil {
		t.Fatal(err)
	}
	if got.ResultID != testAck().ResultID {
		t.Errorf("result id %q", got.ResultID)
	}
}

func TestDecodeRejects(t *testing.T) {
	good := mustMarshal(t, testAck())
	v2 := *testAck()
	v2.V = 2
	noV := *testAck()
	noV.V = 0
	badID := *testAck()
	badID.ResultID = "../../etc/passwd"
	cases := []struct {
		name string
		b    []byte
		want error
	}{
		{"empty", nil, ErrMalformed},
		{"truncated", good[:len(good)-1], ErrMalformed},
		{"trailing", append(append([]byte{}, good...), 0xc0), ErrMalformed},
		{"not a map", []byte{0x93, 1, 2, 3}, ErrMalformed},
		{"bad prefix", []byte{0xc1}, ErrMalformed},
		{"newer version", mustMarshal(t, &v2), ErrVersion},
		{"no version", mustMarshal(t, &noV), ErrVersion},
		{"bad id", mustMarshal(t, &badID), ErrMalformed},
		{"too large", make([]byte, DefaultMaxPayload+1), ErrTooLarge},
		{"deep", bytes.Repeat([]byte{0x91}, 1000), ErrMalformed},
	}
	for _, c := range cases {
		_, err := DecodeAck(c.b)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: error %v, want %v", c.name, err, c.want)
		}
	}
	if _, err := DecodeResultMax(mustMarshal(t, testResult(t)), 1000); !errors.Is(err, ErrTooLarge) {
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
		if _, err := DecodeResult(m); !errors.Is(err, ErrMalformed) {
			t.Errorf("% x: error %v, want ErrMalformed", m, err)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range 100 {
			_, _ = DecodeResult(m)
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
	_, err := DecodeResult(b)
	if !errors.Is(err, msgp.ErrLimitExceeded) {
		t.Errorf("1001 runs: %v, want ErrLimitExceeded", err)
	}
}

func TestSigningBytes(t *testing.T) {
	c := testCommand()
	a, err := c.SigningBytes("lab", "pi-1")
	if err != nil {
		t.Fatal(err)
	}
	if c.Sig == nil {
		t.Fatal("SigningBytes cleared the caller's Sig")
	}
	// The receiver decodes and re-encodes: the same bytes.
	d, err := DecodeCommand(mustMarshal(t, c))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := d.SigningBytes("lab", "pi-1")
	if !bytes.Equal(a, b) {
		t.Error("signing bytes differ after a round trip")
	}
	unsigned := *c
	unsigned.Sig = nil
	if !bytes.HasSuffix(a, mustMarshal(t, &unsigned)) {
		t.Error("signing bytes do not end with the unsigned encoding")
	}
	// The target is covered: another device, another fleet, the fleet's
	// broadcast, or the same strings split differently.
	for _, target := range [][2]string{{"lab", "pi-2"}, {"lab2", "pi-1"}, {"lab", AllDevices}, {"labp", "i-1"}, {"", "labpi-1"}} {
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
	d.Select = append(d.Select, Label{K: "server", V: "nginx"})
	if b, _ = d.SigningBytes("lab", "pi-1"); bytes.Equal(a, b) {
		t.Error("signing bytes do not cover the selector")
	}
}

func TestValidTransition(t *testing.T) {
	ok := [][2]EventState{
		{"", StateAccepted}, {"", StateRejected}, {StateAccepted, StateRunning}, {StateAccepted, StateCancelled},
		{StateRunning, StateRunning}, {StateRunning, StateSucceeded}, {StateRunning, StateFailed},
		{StateRunning, StateCancelled}, {StateRunning, StateTimedOut},
	}
	bad := [][2]EventState{
		{"", StateRunning}, {"", StateSucceeded}, {StateRejected, StateAccepted}, {StateSucceeded, StateRunning},
		{StateAccepted, StateSucceeded}, {StateAccepted, StateAccepted}, {StateFailed, StateFailed}, {StateRunning, "bogus"},
	}
	for _, p := range ok {
		if !ValidTransition(p[0], p[1]) {
			t.Errorf("%q -> %q refused", p[0], p[1])
		}
	}
	for _, p := range bad {
		if ValidTransition(p[0], p[1]) {
			t.Errorf("%q -> %q allowed", p[0], p[1])
		}
	}
	for _, s := range []EventState{StateRejected, StateSucceeded, StateFailed, StateCancelled, StateTimedOut} {
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
	res := testResult(t)
	mp := mustMarshal(t, res)
	js, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	buckets := resultJSON(t, res, true)
	bare := *res
	bare.Runs = append([]Run(nil), res.Runs...)
	bare.Runs[0].Latency, bare.Runs[0].Connect, bare.Runs[0].Waiting, bare.Runs[0].Processing = nil, nil, nil, nil
	mpBare := mustMarshal(t, &bare)
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
func resultJSON(t testing.TB, res *Result, buckets bool) []byte {
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
	res := testResult(t)
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
	res := testResult(b)
	buf, _ := res.MarshalMsg(nil)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = res.MarshalMsg(buf[:0])
	}
	b.ReportMetric(float64(len(buf)), "msgpack-bytes")
}

func BenchmarkResultUnmarshal(b *testing.B) {
	buf := mustMarshal(b, testResult(b))
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeResult(buf); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkResultJSON(b *testing.B) {
	res := testResult(b)
	var n int
	b.ReportAllocs()
	for b.Loop() {
		js, _ := json.Marshal(res)
		n = len(js)
	}
	b.ReportMetric(float64(n), "json-bytes")
	b.ReportMetric(float64(len(resultJSON(b, res, true))), "json-bucket-bytes")
}
