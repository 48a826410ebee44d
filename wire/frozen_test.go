package wire_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/edgebench/edgebench/loadgen/report"
	"github.com/edgebench/edgebench/wire"
	"github.com/edgebench/edgebench/wire/wiretest"
)

// What devices and collectors of schema version 1 sent is frozen in
// testdata/v1: one msgpack payload per message kind and variant, written
// once by the encoder of the day and never rewritten, and beside each the
// JSON of what it decodes to. The collector keeps raw payloads for ever,
// and a device's spool may hold a payload for days: today's decoders must
// read them all. A renamed msg tag, a changed type or a dropped field
// fails TestFrozenPayloads, which a round trip through today's encoder
// cannot see.
//
// A new field gets a new payload that sets it (add it to frozenMessages
// under a new name, run go test -run Frozen -freeze): TestFrozenPayloads
// also fails when a field of the schema is set in none of them.

var (
	freeze     = flag.Bool("freeze", false, "write the payloads of testdata/v1 not frozen yet (never rewrites one)")
	updateJSON = flag.Bool("update-frozen-json", false, "rewrite the JSON views of the frozen payloads (after a wanted change of a json tag; the payloads stay)")
)

const frozenDir = "testdata/v1"

// frozenKinds decodes a payload of each kind as a collector or a device
// does; a frozen payload's name starts with its kind.
var frozenKinds = map[string]func([]byte) (any, error){
	"status":    func(b []byte) (any, error) { return wire.DecodeStatus(b) },
	"heartbeat": func(b []byte) (any, error) { return wire.DecodeHeartbeat(b) },
	"command":   func(b []byte) (any, error) { return wire.DecodeCommand(b) },
	"event":     func(b []byte) (any, error) { return wire.DecodeEvent(b) },
	"ack":       func(b []byte) (any, error) { return wire.DecodeAck(b) },
	"result":    func(b []byte) (any, error) { return wire.DecodeResult(b) },
}

func frozenKind(name string) string { k, _, _ := strings.Cut(name, "-"); return k }

// TestFrozenPayloads decodes every frozen payload with today's decoders
// and compares what it holds with the JSON frozen beside it; then checks
// that every field of every message is set in at least one payload, so
// that no msg tag can change unseen.
func TestFrozenPayloads(t *testing.T) {
	if *freeze {
		writeFrozen(t)
	}
	paths, err := filepath.Glob(filepath.Join(frozenDir, "*.msgpack"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no frozen payloads in %s (%v)", frozenDir, err)
	}
	set := map[string]bool{} // Type.Field set in some payload
	seen := map[string]bool{}
	for _, p := range paths {
		name := strings.TrimSuffix(filepath.Base(p), ".msgpack")
		decode := frozenKinds[frozenKind(name)]
		if decode == nil {
			t.Errorf("%s: no message kind %q", p, frozenKind(name))
			continue
		}
		seen[frozenKind(name)] = true
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		m, err := decode(b)
		if err != nil {
			t.Errorf("%s no longer decodes: %v", p, err)
			continue
		}
		got, err := json.MarshalIndent(m, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, '\n')
		jp := strings.TrimSuffix(p, ".msgpack") + ".json"
		if *updateJSON {
			if err := os.WriteFile(jp, got, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(jp)
		if err != nil {
			t.Fatalf("%v (go test -run Frozen -update-frozen-json writes it)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s decodes to something else than %s: a msg tag, a type or a field changed, and schema version 1 must read it as it was written; %s",
				p, jp, firstDiff(got, want))
		}
		markSet(reflect.ValueOf(m), set)
	}
	for kind := range frozenKinds {
		if !seen[kind] {
			t.Errorf("no frozen payload of kind %s", kind)
		}
	}
	var unset []string
	for _, m := range []any{wire.Status{}, wire.Heartbeat{}, wire.Command{}, wire.Event{}, wire.Ack{}, wire.Result{}} {
		listFields(reflect.TypeOf(m), map[reflect.Type]bool{}, func(f string) {
			if !set[f] {
				unset = append(unset, f)
			}
		})
	}
	if len(unset) > 0 {
		slices.Sort(unset)
		t.Errorf("fields set in no frozen payload (add a payload that sets them: go test -run Frozen -freeze): %s",
			strings.Join(slices.Compact(unset), ", "))
	}
}

// firstDiff shows the first line where got and want differ.
func firstDiff(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := range max(len(g), len(w)) {
		gl, wl := "(end)", "(end)"
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("line %d: got %q, want %q", i+1, strings.TrimSpace(gl), strings.TrimSpace(wl))
		}
	}
	return "no difference"
}

// markSet records in set each Type.Field of v that holds a non-zero value.
func markSet(v reflect.Value, set map[string]bool) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			markSet(v.Elem(), set)
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return
		}
		for i := range v.Len() {
			markSet(v.Index(i), set)
		}
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			return
		}
		for i := range v.NumField() {
			f := v.Field(i)
			if !f.IsZero() && (f.Kind() != reflect.Slice && f.Kind() != reflect.Map || f.Len() > 0) {
				set[v.Type().Name()+"."+v.Type().Field(i).Name] = true
			}
			markSet(f, set)
		}
	}
}

// listFields calls fn with each Type.Field of the schema reachable from t.
func listFields(t reflect.Type, done map[reflect.Type]bool, fn func(string)) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || t == reflect.TypeFor[time.Time]() || done[t] {
		return
	}
	done[t] = true
	for i := range t.NumField() {
		fn(t.Name() + "." + t.Field(i).Name)
		listFields(t.Field(i).Type, done, fn)
	}
}

// writeFrozen writes the payloads of frozenMessages that are not in
// testdata/v1 yet, and their JSON views. It never rewrites a payload.
func writeFrozen(t *testing.T) {
	if err := os.MkdirAll(frozenDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, m := range frozenMessages(t) {
		p := filepath.Join(frozenDir, name+".msgpack")
		if _, err := os.Stat(p); err == nil {
			continue
		}
		b := wiretest.Marshal(t, m)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := frozenKinds[frozenKind(name)](b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		j, err := json.MarshalIndent(m, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(frozenDir, name+".json"), append(j, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("froze %s (%d bytes)", p, len(b))
	}
}

func i32(v int32) *int32   { return &v }
func i64(v int64) *int64   { return &v }
func u32(v uint32) *uint32 { return &v }

// frozenMessages are the messages frozen in testdata/v1, by name: only
// read by -freeze for names not frozen yet. Between them they set every
// field of the schema.
func frozenMessages(t *testing.T) map[string]interface{ MarshalMsg([]byte) ([]byte, error) } {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	const cmdID, resID = "01JNHX6W8V2Q4R7T9Y3B5D6F8G", "01JNHX7A1C3E5G7J9K2M4P6R8S"
	hist := func(n int, base int64, digits int) []byte {
		h := report.NewLatencyHistogram()
		for i := range int64(n) {
			h.Record(base + (i*7919)%(4*base))
		}
		return h.Coarsen(digits).AppendPacked(nil)
	}
	stat := func(m, x int64) wire.WindowStat { return wire.WindowStat{Mean: m, Max: x} }
	pst := func(m, x int64) *wire.WindowStat { return &wire.WindowStat{Mean: m, Max: x} }
	run := wire.Run{
		StartedAt: at, DurationUS: 10_000_123, Interrupted: true, Completed: 1234, OK: 1200,
		Errors:      wire.ErrorCounts{Connect: 1, Read: 2, Write: 3, Timeout: 4, Status: 20, Length: 4},
		StatusCodes: []wire.StatusCount{{Code: 200, N: 1214}, {Code: 503, N: 20}},
		Bytes:       1234 * 850, BodyBytes: 1234 * 612, Connects: 12, DocLength: 612, Server: "nginx/1.22.1",
		Sent: 1240 * 80, KeepAliveResponses: 1222,
		Latency: hist(1234, 900, 3), Connect: hist(12, 80, 3),
		Waiting: hist(1234, 850, 2), Processing: hist(1234, 880, 2),
		Timeline: []wire.Second{{T: 0, Completed: 610, Errors: 10, P50US: 880, P99US: 3100}, {T: 1, Completed: 624, Errors: 20, P50US: 870, P99US: 2900}},
		Drained: &wire.DrainedCounts{Requests: 6, Completed: 4, OK: 3, Errors: wire.ErrorCounts{Timeout: 1, Status: 1}, Cut: 1,
			StatusCodes: []wire.StatusCount{{Code: 200, N: 3}, {Code: 500, N: 1}}, Bytes: 4 * 850, BodyBytes: 4 * 612, Connects: 1},
		WarmupRequests: 345,
		System: &wire.System{
			IntervalMS: 1000, Stride: 2,
			Disks: []string{"mmcblk0", "mmcblk0p2"}, Partitions: []bool{false, true},
			Nets: []string{"lo", "eth0"}, Zones: []string{"cpu-thermal"}, Procs: []string{"nginx", "edgebench"},
			Warnings: []string{"throttled: under-voltage"},
			Samples: []wire.SysSample{{
				T:      1000,
				CPU:    &wire.CPUShares{User: 4100, Nice: 10, System: 3300, Idle: 1200, IOWait: 30, IRQ: 5, SoftIRQ: 1350, Steal: 5},
				CoreBP: []int32{9500, 9400}, Load1: i32(398), Ctxt: i64(63_000), Intr: i64(24_000), Running: i32(4), Blocked: i32(1),
				Mem: &wire.MemSample{Used: 414_000, Free: 2_900_000, Available: i64(3_380_000), Buffers: i64(48_000), Cached: i64(620_000),
					Dirty: i64(120), SwapUsed: i64(8)},
				Disks:  []wire.DiskRate{{I: 0, ReadKBs: 4, WriteKBs: 60, ReadIOPS: 1, WriteIOPS: 6, BusyBP: 45}, {I: 1, WriteKBs: 60, WriteIOPS: 6}},
				Nets:   []wire.NetRate{{I: 1, RxKBs: 97_000, TxKBs: 96_500, RxPps: 27_700, TxPps: 27_600}},
				PSI:    &wire.PSIShares{CPUSome: i32(1200), IOSome: i32(30), IOFull: i32(10), MemSome: i32(2), MemFull: i32(1)},
				TempDC: []int32{631}, FreqMHz: []int32{1800, 1500}, Throttle: u32(0x50005),
				Procs: []wire.ProcRate{{I: 0, PID: 812, Count: 5, CPUBP: i32(19_000), RSSKB: i64(21_400), ReadKBs: i64(2), WriteKBs: i64(4)},
					{I: 1, Count: 1, CPUBP: i32(9_000), RSSKB: i64(18_200)}},
			}},
			Summary: wire.SysSummary{
				Seconds: 10.0, Samples: 10,
				CPU: &wire.CPUWindow{User: stat(4100, 4399), Nice: stat(10, 10), System: stat(3350, 3599), Idle: stat(1250, 1710),
					IOWait: stat(30, 30), IRQ: stat(5, 9), SoftIRQ: stat(1350, 1499), Steal: stat(5, 7)},
				CoreBusyBP: []wire.WindowStat{stat(9500, 9899), stat(9450, 9899)},
				Load1:      pst(398, 419), Ctxt: pst(63_400, 65_990), Intr: pst(24_000, 24_990),
				Mem: &wire.MemWindow{TotalKB: 3_884_000, Used: stat(414_000, 415_990), Free: stat(2_902_000, 2_903_990),
					Available: pst(3_380_000, 3_380_000), Buffers: pst(48_000, 48_000), Cached: pst(620_050, 620_099),
					Dirty: pst(100, 199), SwapUsed: pst(8, 8)},
				Disks:     []wire.DiskWindow{{I: 0, ReadKBs: stat(4, 8), WriteKBs: stat(60, 119), ReadIOPS: stat(1, 2), WriteIOPS: stat(6, 11), BusyBP: stat(45, 89)}, {I: 1, WriteKBs: stat(60, 119), WriteIOPS: stat(6, 11)}},
				Nets:      []wire.NetWindow{{I: 1, RxKBs: stat(97_500, 98_999), TxKBs: stat(97_000, 98_000), RxPps: stat(27_750, 27_999), TxPps: stat(27_600, 27_900)}},
				PSI:       &wire.PSIWindow{CPUSome: pst(1200, 1500), IOSome: pst(30, 60), IOFull: pst(10, 20), MemSome: pst(2, 4), MemFull: pst(1, 2)},
				TempMaxDC: i32(651), FreqMinMHz: i32(1500), FreqMaxMHz: i32(1800), Throttled: u32(0x5),
				Procs: []wire.ProcWindow{{I: 0, PID: 812, Count: 5, CPUBP: pst(19_000, 19_999), RSSKB: pst(21_400, 21_400), ReadKB: i64(20), WriteKB: i64(40)},
					{I: 1, Count: 1, CPUBP: pst(9_000, 9_500), RSSKB: pst(18_200, 18_200)}},
			},
		},
	}
	spread := func(m float64) wire.Spread {
		return wire.Spread{Mean: m, StdDev: m / 50, CILow: m * 0.97, CIHigh: m * 1.03, Min: m * 0.95, Max: m * 1.05}
	}
	info := &wire.DeviceInfo{AgentVersion: "v0.4.0", Hostname: "pi4-07", Board: "Raspberry Pi 4 Model B Rev 1.4", CPUModel: "Cortex-A72",
		Cores: 4, MemKB: 3_884_000, OS: "Debian GNU/Linux 12 (bookworm)", Kernel: "6.6.51+rpt-rpi-v8", Arch: "aarch64",
		GoArch: "arm64", Governor: "ondemand", MaxFreqMHz: 1800, Labels: map[string]string{"rack": "a"}}
	command := func(kind wire.CommandKind, spec wire.CommandSpec) *wire.Command {
		return &wire.Command{V: wire.SchemaVersion, ID: cmdID, IssuedAt: at, ExpiresAt: at.Add(5 * time.Minute), Kind: kind, Spec: spec}
	}
	loadtest := command(wire.KindLoadTest, wire.CommandSpec{LoadTest: &wire.LoadTestSpec{
		URL: "http://127.0.0.1:8080/index.html", Method: "POST", Headers: []wire.Header{{Name: "Content-Type", Value: "text/plain"}},
		Body: []byte("hello"), Connections: 50, Threads: 2, Requests: 100_000, DurationMS: 30_000, Rate: 2000.5, KeepAlive: true,
		TimeoutMS: 2000, WarmupMS: 2000, LengthCheck: true, Repeat: 3, Labels: []wire.Label{{K: "server", V: "nginx"}},
		Watch: []string{"nginx"}, Queue: true,
	}})
	loadtest.Select = []wire.Label{{K: "board", V: "pi4"}}
	loadtest.Sig = []byte("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef")
	// HTTPS and HTTP/2 (issue 14): optional fields, absent from the
	// payloads frozen before them.
	loadtestH2 := command(wire.KindLoadTest, wire.CommandSpec{LoadTest: &wire.LoadTestSpec{
		URL: "https://127.0.0.1:8443/index.html", Connections: 4, DurationMS: 30_000, KeepAlive: true, HTTP2: true, Streams: 10,
		TLS: &wire.TLSSpec{CACerts: wiretest.CABundle(t), Insecure: true, NoResume: true, Version: "1.3"},
	}})
	runH2 := wire.Run{StartedAt: at, DurationUS: 10_000_000, Completed: 5000, OK: 4990, DocLength: 612,
		Errors:      wire.ErrorCounts{TLS: 2, Reset: 8},
		StatusCodes: []wire.StatusCount{{Code: 200, N: 4990}}, Latency: hist(5000, 900, 3), Connect: hist(6, 80, 3),
		TLS: &wire.TLSRun{Version: "TLSv1.3", Cipher: "TLS_AES_128_GCM_SHA256", Group: "X25519", ServerName: "localhost", ALPN: "h2",
			KeyBits: 256, Resume: true, Handshakes: 6, Resumed: 2},
		Handshake: hist(6, 600, 3),
		H2: &wire.H2Run{MaxStreams: 128, GoAways: 1, Retried: 3, HeaderBytes: 5000 * 15,
			Resets: []wire.CodeCount{{Name: "REFUSED_STREAM", N: 8}}},
	}
	return map[string]interface{ MarshalMsg([]byte) ([]byte, error) }{
		"status-birth": &wire.Status{V: wire.SchemaVersion, State: wire.StatusOnline, BootID: "0c4a7f3e-3b8e-4f0c-9a53-1c2d3e4f5a6b",
			ConnSeq: 1_772_366_400_000, At: at, Info: info},
		"status-will":      &wire.Status{V: wire.SchemaVersion, State: wire.StatusLost, BootID: "0c4a7f3e-3b8e-4f0c-9a53-1c2d3e4f5a6b", ConnSeq: 1_772_366_400_001},
		"status-collector": &wire.Status{V: wire.SchemaVersion, State: wire.StatusOnline, BootID: "01JNHX5Z0A2B4C6D8E0F2G4H6J", ConnSeq: 1_772_366_400_002, At: at},
		"heartbeat": &wire.Heartbeat{V: wire.SchemaVersion, At: at, Busy: true, CommandID: cmdID, UptimeS: 86_400, Spooled: 2, Rejected: 1,
			CPUBusy: i32(8700), Load1: i32(390), MemUsedKB: i64(414_000), MemAvail: i64(3_380_000), TempDC: i32(640), FreqMHz: i32(1800),
			Throttled: u32(0x50000)},
		"command-loadtest": loadtest,
		"command-serve":    command(wire.KindServe, wire.CommandSpec{Serve: &wire.ServeSpec{Addr: "127.0.0.1:8080", Dir: "www", DurationMS: 60_000}}),
		"command-probe":    command(wire.KindProbe, wire.CommandSpec{Probe: &wire.ProbeSpec{IntervalMS: 500, DurationMS: 10_000, Watch: []string{"nginx", "812"}}}),
		"command-cancel":   command(wire.KindCancel, wire.CommandSpec{Cancel: &wire.CancelSpec{CommandID: "01JNHX6W8V2Q4R7T9Y3B5D6F8A"}}),
		"command-info":     command(wire.KindInfo, wire.CommandSpec{}),
		"event-running": &wire.Event{V: wire.SchemaVersion, CommandID: cmdID, Seq: 3, State: wire.StateRunning, Reason: "run 1 of 3",
			Progress: &wire.Progress{ElapsedMS: 12_000, Completed: 165_000, RPS: 13_750.5, Errors: 2}, At: at},
		"event-succeeded":   &wire.Event{V: wire.SchemaVersion, CommandID: cmdID, Seq: 9, State: wire.StateSucceeded, ResultID: resID, At: at},
		"event-interrupted": &wire.Event{V: wire.SchemaVersion, CommandID: cmdID, Seq: wire.SeqInterrupted, State: wire.StateFailed, Reason: "interrupted by a restart", At: at},
		"ack":               &wire.Ack{V: wire.SchemaVersion, ResultID: resID},
		"ack-rejected":      &wire.Ack{V: wire.SchemaVersion, ResultID: resID, Rejected: "result of lab/pi4-08 sent by lab/pi4-07"},
		"result-loadtest": &wire.Result{V: wire.SchemaVersion, ID: resID, CommandID: cmdID, Fleet: "lab", Device: "pi4-07",
			BootID: "0c4a7f3e-3b8e-4f0c-9a53-1c2d3e4f5a6b", CreatedAt: at.Add(31 * time.Second), Kind: wire.KindLoadTest,
			Outcome: wire.StateCancelled, Reason: "interrupted", Labels: map[string]string{"server": "nginx"},
			Spec: wire.RunSpec{URL: "http://127.0.0.1:8080/index.html", Method: "POST", Headers: []wire.Header{{Name: "Content-Type", Value: "text/plain"}},
				BodyBytes: 5, Connections: 50, Threads: 2, Requests: 100_000, DurationMS: 10_000, Rate: 2000.5, KeepAlive: true,
				TimeoutMS: 2000, WarmupMS: 2000, NoLengthCheck: true, Repeat: 2, IntervalMS: 1000, Watch: []string{"nginx"}, Mode: "wrk"},
			Fingerprint: wire.Fingerprint{AgentVersion: "v0.4.0", Kernel: "6.6.51+rpt-rpi-v8", OS: "Debian GNU/Linux 12 (bookworm)", Arch: "aarch64",
				Board: "Raspberry Pi 4 Model B Rev 1.4", CPUModel: "Cortex-A72", Cores: 4, MemKB: 3_884_000, Governor: "ondemand",
				MaxFreqMHz: 1800, Server: "nginx/1.22.1", ServerSHA256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
				Throttled: true, FreqDropped: true, Extra: []wire.Label{{K: "nginx_workers", V: "4"}}},
			Runs:     []wire.Run{run, run},
			Repeat:   &wire.Repeat{Runs: 2, RPS: spread(12_340), P50US: spread(880), P99US: spread(3000), RSDPct: 2.1},
			Warnings: []string{"throttled: under-voltage"}},
		"command-loadtest-h2": loadtestH2,
		"result-loadtest-h2": &wire.Result{V: wire.SchemaVersion, ID: resID, CommandID: cmdID, Fleet: "lab", Device: "pi4-07", CreatedAt: at,
			Kind: wire.KindLoadTest, Outcome: wire.StateSucceeded,
			Spec: wire.RunSpec{URL: "https://127.0.0.1:8443/index.html", Method: "GET", Connections: 4, DurationMS: 10_000, KeepAlive: true,
				Protocol: "h2", Streams: 10, NoTLSResume: true, TLSVersion: "1.3"},
			Runs: []wire.Run{runH2}},
		// Errors.Limit (issue 19): absent from the payloads frozen before it.
		"result-loadtest-limit": &wire.Result{V: wire.SchemaVersion, ID: resID, CommandID: cmdID, Fleet: "lab", Device: "pi4-07", CreatedAt: at,
			Kind: wire.KindLoadTest, Outcome: wire.StateSucceeded,
			Spec: wire.RunSpec{URL: "http://127.0.0.1:8080/", Method: "GET", Connections: 1, DurationMS: 8_000, KeepAlive: true,
				Protocol: "h2c", Streams: 1},
			Runs: []wire.Run{{StartedAt: at, DurationUS: 8_000_000, DocLength: -1, Errors: wire.ErrorCounts{Limit: 747}}}},
		"command-loadtest-auto": command(wire.KindLoadTest, wire.CommandSpec{LoadTest: &wire.LoadTestSpec{
			URL: "http://127.0.0.1:8080/index.html", Connections: 10, DurationMS: 10_000, KeepAlive: true, Repeat: 10,
			RepeatAuto: true, RepeatRSDPct: 2.5, RepeatBudgetMS: 300_000,
		}}),
		"result-loadtest-verdict": &wire.Result{V: wire.SchemaVersion, ID: resID, CommandID: cmdID, Fleet: "lab", Device: "pi4-07", CreatedAt: at,
			Kind: wire.KindLoadTest, Outcome: wire.StateSucceeded,
			Spec: wire.RunSpec{URL: "http://127.0.0.1:8080/index.html", Method: "GET", Connections: 10, DurationMS: 10_000, KeepAlive: true,
				Repeat: 10, RepeatAuto: true, RepeatRSDPct: 2.5, RepeatBudgetMS: 300_000},
			Runs: []wire.Run{
				{StartedAt: at, DurationUS: 10_000_000, Completed: 5000, OK: 5000, DocLength: 612, Latency: hist(5000, 900, 3),
					Verdict: &wire.Verdict{LimitedBy: "server", Valid: true, Reasons: []string{"nginx at 99 % of one core (2 processes): its busy workers each hold a full core"}}},
				{StartedAt: at.Add(11 * time.Second), DurationUS: 10_000_000, Completed: 4000, OK: 4000, DocLength: 612, Latency: hist(4000, 900, 3),
					Verdict: &wire.Verdict{LimitedBy: "generator", Reasons: []string{"edgebench itself used 99 % of one core (1 event loop): the server's capacity is at least this"}}},
			},
			Repeat: &wire.Repeat{Runs: 2, RPS: spread(450), P50US: spread(880), P99US: spread(3000), RSDPct: 15.7, Auto: true, Stable: new(false), MaxRSDPct: 2.5}},
		// --repeat auto in open loop: stability judged on p99, not on the
		// req/s the rate fixes.
		"result-loadtest-auto-open": &wire.Result{V: wire.SchemaVersion, ID: resID, CommandID: cmdID, Fleet: "lab", Device: "pi4-07", CreatedAt: at,
			Kind: wire.KindLoadTest, Outcome: wire.StateSucceeded,
			Spec: wire.RunSpec{URL: "http://127.0.0.1:8080/index.html", Method: "GET", Connections: 10, DurationMS: 1000, Rate: 2000, KeepAlive: true,
				Repeat: 10, RepeatAuto: true, RepeatRSDPct: 3.5},
			Runs: []wire.Run{{StartedAt: at, DurationUS: 1_000_000, Completed: 2000, OK: 2000, DocLength: 612, Latency: hist(2000, 900, 3)}},
			Repeat: &wire.Repeat{Runs: 3, RPS: spread(2000), P50US: spread(1961), P99US: spread(49_951), RSDPct: 0.03, Auto: true, Stable: new(false),
				MaxRSDPct: 3.5, Judged: "p99", JudgedRSDPct: 103.5}},
		// Capacity (issue 21): a search's command and its result, the
		// final trial in Runs.
		"command-capacity": command(wire.KindCapacity, wire.CommandSpec{Capacity: &wire.CapacitySpec{
			Load: wire.LoadTestSpec{URL: "http://127.0.0.1:8080/", Connections: 64, KeepAlive: true, TimeoutMS: 2000, WarmupMS: 1000,
				Labels: []wire.Label{{K: "server", V: "nginx"}}, Watch: []string{"nginx"}},
			SLO: "p99<50ms,errors<0.1%", StartRate: 100, MaxRate: 5000, Tolerance: 0.05, TrialMS: 3000, FinalMS: 6000, BudgetMS: 300_000,
		}}),
		"result-capacity": &wire.Result{V: wire.SchemaVersion, ID: resID, CommandID: cmdID, Fleet: "lab", Device: "pi4-07", CreatedAt: at,
			Kind: wire.KindCapacity, Outcome: wire.StateSucceeded, Labels: map[string]string{"server": "nginx"},
			Spec: wire.RunSpec{URL: "http://127.0.0.1:8080/", Method: "GET", Connections: 64, DurationMS: 6000, Rate: 500, KeepAlive: true, WarmupMS: 1000},
			Runs: []wire.Run{runH2},
			Capacity: &wire.Capacity{SLO: "p99<50ms,errors<0.1%", CapacityRPS: 500, AtLeast: true, LimitedBy: "generator", Confirmed: true,
				NonMonotonic: true, UpperBoundRPS: 525, Tolerance: 0.05, Answer: "500 req/s (500 req/s met the SLO and 525 req/s did not)",
				Trials: []wire.CapacityTrial{
					{Kind: "bisect", OfferedRPS: 525, AchievedRPS: 524.5, WarmupMS: 1000, DurationMS: 3000, Requests: 1574, Errors: 75, Timeouts: 1,
						P50US: 105, P90US: 300, P99US: 12_200, P999US: 20_000, MaxUS: 30_000, GoodputBP: 9524, ServerCPUBP: i32(1500), GenCPUBP: i32(1900),
						GenLimited: true, Reasons: []string{"errors: 4.76 % (75 of 1574), want below 0.1 %"}},
					{Kind: "final", OfferedRPS: 500, AchievedRPS: 500, DurationMS: 6000, Requests: 3000, P50US: 100, P90US: 200, P99US: 900,
						P999US: 2000, MaxUS: 3000, GoodputBP: 10_000, Pass: true},
				}}},
		// Link speed and allowed cores (issue 21): the network verdict's
		// and the pinned server's figures in the summary.
		"result-loadtest-link-affinity": &wire.Result{V: wire.SchemaVersion, ID: resID, CommandID: cmdID, Fleet: "lab", Device: "pi4-07", CreatedAt: at,
			Kind: wire.KindLoadTest, Outcome: wire.StateSucceeded,
			Spec: wire.RunSpec{URL: "http://192.168.2.10/index.html", Method: "GET", Connections: 10, DurationMS: 10_000, KeepAlive: true},
			Runs: []wire.Run{{StartedAt: at, DurationUS: 10_000_000, Completed: 90000, OK: 90000, DocLength: 12288, Latency: hist(90000, 1100, 3),
				System: &wire.System{IntervalMS: 1000, Nets: []string{"lo", "eth0"}, Procs: []string{"nginx", "edgebench"},
					Summary: wire.SysSummary{Seconds: 10, Samples: 10,
						Nets: []wire.NetWindow{{I: 0, RxKBs: wire.WindowStat{Mean: 2, Max: 3}},
							{I: 1, RxKBs: wire.WindowStat{Mean: 11304, Max: 11400}, RxPps: wire.WindowStat{Mean: 7800, Max: 7900}, SpeedMbps: 100}},
						Procs: []wire.ProcWindow{{I: 0, Count: 2, CPUBP: &wire.WindowStat{Mean: 4100, Max: 4500}, CPUs: []int32{1}},
							{I: 1, PID: 4242, Count: 1, CPUBP: &wire.WindowStat{Mean: 3000, Max: 3300}, CPUs: []int32{0, 1}}}}},
				Verdict: &wire.Verdict{LimitedBy: "network", Valid: true, Reasons: []string{"eth0 received 94.1 Mb/s of its 100 Mb/s link (94 %)"}}}}},
		// The server's rows (issue 28): nginx listening, php-fpm its
		// upstream, edgebench the generator.
		"result-loadtest-upstream": &wire.Result{V: wire.SchemaVersion, ID: resID, CommandID: cmdID, Fleet: "lab", Device: "pi4-07", CreatedAt: at,
			Kind: wire.KindLoadTest, Outcome: wire.StateSucceeded,
			Spec: wire.RunSpec{URL: "http://127.0.0.1/index.php", Method: "GET", Connections: 10, Threads: 10, DurationMS: 30_000, KeepAlive: true, Mode: "wrk"},
			Runs: []wire.Run{{StartedAt: at, DurationUS: 30_000_000, Completed: 3100, OK: 3100, DocLength: 6144, Latency: hist(3100, 96000, 3),
				System: &wire.System{IntervalMS: 1000, Procs: []string{"nginx", "php-fpm8.2", "edgebench"},
					Summary: wire.SysSummary{Seconds: 30, Samples: 30,
						Procs: []wire.ProcWindow{{I: 0, PID: 812, Count: 2, CPUBP: &wire.WindowStat{Mean: 3900, Max: 4400}, Role: wire.ProcServer},
							{I: 1, PID: 790, Count: 5, CPUBP: &wire.WindowStat{Mean: 13100, Max: 15200}, Role: wire.ProcUpstream, Of: new(int32)},
							{I: 2, PID: 4242, Count: 1, CPUBP: &wire.WindowStat{Mean: 2500, Max: 2900}, Role: wire.ProcGenerator}}}},
				Verdict: &wire.Verdict{LimitedBy: "cpu", Valid: true, Reasons: []string{"the cores were 99 % busy, shared by the server and edgebench: nginx 39 %, php-fpm8.2 (upstream of nginx) 131 %, edgebench 25 %, interrupts 3 %, other processes 0 % of 200 %"}}}}},
		// The event loops that ran the threads (issue 32): -t10 on 2 cores
		// ran 2.
		"result-loadtest-loops": &wire.Result{V: wire.SchemaVersion, ID: resID, CommandID: cmdID, Fleet: "lab", Device: "pi4-07", CreatedAt: at,
			Kind: wire.KindLoadTest, Outcome: wire.StateSucceeded,
			Spec: wire.RunSpec{URL: "http://127.0.0.1/index.html", Method: "GET", Connections: 10, Threads: 10, DurationMS: 30_000, KeepAlive: true, Mode: "wrk"},
			Runs: []wire.Run{{StartedAt: at, DurationUS: 30_000_000, Completed: 90_000, OK: 90_000, DocLength: 612, Latency: hist(90_000, 300, 3),
				Loops: 2}}},
		// Two machines (issue 30): a device's addresses in its birth, the
		// watch on the target and the marks of the load's windows, the
		// loader's window events, the network's figures (drops, duplex,
		// TCP retransmissions, the round-trip time to the target) and a
		// watch's result, one run per marked window.
		"status-birth-addrs": &wire.Status{V: wire.SchemaVersion, State: wire.StatusOnline, BootID: "0c4a7f3e-3b8e-4f0c-9a53-1c2d3e4f5a6b",
			ConnSeq: 1_772_366_400_002, At: at, Info: &wire.DeviceInfo{AgentVersion: "v0.5.0", Hostname: "pi3-02", Board: "Raspberry Pi 3 Model B Rev 1.2",
				Cores: 4, Addrs: []string{"192.168.2.13", "fd00::13"}}},
		"command-probe-watch": command(wire.KindProbe, wire.CommandSpec{Probe: &wire.ProbeSpec{IntervalMS: 500, DurationMS: 45_000,
			URL: "http://192.168.2.13/index.html"}}),
		"command-mark": command(wire.KindMark, wire.CommandSpec{Mark: &wire.MarkSpec{CommandID: "01JNHX6W8V2Q4R7T9Y3B5D6F8H", Run: 2, Edge: wire.MarkEnd}}),
		"event-running-window": &wire.Event{V: wire.SchemaVersion, CommandID: cmdID, Seq: 3, State: wire.StateRunning,
			Reason: "measured window starts (run 1)", Window: &wire.WindowEdge{Edge: wire.MarkStart, Run: 1}, At: at},
		"result-loadtest-network": &wire.Result{V: wire.SchemaVersion, ID: resID, CommandID: cmdID, Fleet: "lab", Device: "laptop", CreatedAt: at,
			Kind: wire.KindLoadTest, Outcome: wire.StateSucceeded,
			Spec: wire.RunSpec{URL: "http://192.168.2.13/big", Method: "GET", Connections: 10, DurationMS: 10_000, KeepAlive: true},
			Runs: []wire.Run{{StartedAt: at, DurationUS: 10_000_000, Completed: 900, OK: 900, DocLength: 1 << 20, Latency: hist(900, 110_000, 3),
				System: &wire.System{IntervalMS: 1000, Nets: []string{"lo", "eth0"},
					Samples: []wire.SysSample{{T: 1000, Nets: []wire.NetRate{{I: 1, RxKBs: 11_300, TxKBs: 250, RxPps: 7800, TxPps: 3900,
						RxDrops: 2, TxDrops: 1, RxErrs: 3, TxErrs: 4}}, TCP: &wire.TCPRate{InSegs: 7800, OutSegs: 3900, RetransSegs: 39}}},
					Summary: wire.SysSummary{Seconds: 10, Samples: 10,
						Nets: []wire.NetWindow{{I: 1, RxKBs: stat(11_300, 11_400), TxKBs: stat(250, 260), RxPps: stat(7800, 7900), TxPps: stat(3900, 3950),
							SpeedMbps: 100, Duplex: "full", RxDrops: i64(20), TxDrops: i64(1), RxErrs: i64(3), TxErrs: i64(4)}},
						TCP: &wire.TCPWindow{InSegs: stat(7800, 7900), OutSegs: stat(3900, 3950), RetransSegs: stat(39, 60), Out: 39_000, Retrans: 390},
						Path: &wire.PathWindow{Target: "192.168.2.13:80", Idle: &wire.RTTWindow{N: 5, MinUS: 310, MedianUS: 350, MaxUS: 1200},
							Loaded: &wire.RTTWindow{N: 41, MinUS: 9_000, MedianUS: 48_000, MaxUS: 61_000}, Lost: 2}}},
				Verdict: &wire.Verdict{LimitedBy: "network", Valid: true,
					Reasons: []string{"the round-trip time to 192.168.2.13:80 grew from 0.35 ms idle to 48.00 ms under load"}}}}},
		"result-probe-watch": &wire.Result{V: wire.SchemaVersion, ID: resID, CommandID: cmdID, Fleet: "lab", Device: "pi3-02", CreatedAt: at,
			Kind: wire.KindProbe, Outcome: wire.StateSucceeded,
			Spec: wire.RunSpec{URL: "http://192.168.2.13/big", DurationMS: 45_000, IntervalMS: 500},
			Runs: []wire.Run{
				{StartedAt: at, DurationUS: 10_000_000, DocLength: -1, System: run.System, Window: &wire.WatchWindow{Run: 0}},
				{StartedAt: at.Add(12 * time.Second), DurationUS: 7_000_000, DocLength: -1, System: run.System, Window: &wire.WatchWindow{Run: 1, Open: true}},
			}},
		"result-probe": &wire.Result{V: wire.SchemaVersion, ID: resID, CommandID: cmdID, Fleet: "lab", Device: "pi4-07", CreatedAt: at,
			Kind: wire.KindProbe, Outcome: wire.StateSucceeded, Spec: wire.RunSpec{DurationMS: 10_000, IntervalMS: 1000, Watch: []string{"nginx"}},
			Runs: []wire.Run{{StartedAt: at, DurationUS: 10_000_000, DocLength: -1, System: run.System}}},
	}
}
