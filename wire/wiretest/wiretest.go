// Package wiretest builds realistic messages of every kind, for the tests
// of the packages that send, carry and store them.
package wiretest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	crand "crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/edgebench/edgebench/loadgen/report"
	"github.com/edgebench/edgebench/wire"
)

func i32(v int32) *int32             { return &v }
func i64(v int64) *int64             { return &v }
func u32(v uint32) *uint32           { return &v }
func st(m, x int64) *wire.WindowStat { return &wire.WindowStat{Mean: m, Max: x} }
func stv(m, x int64) wire.WindowStat { return wire.WindowStat{Mean: m, Max: x} }

// hist is a wire histogram of n latencies around medianUS with a tail,
// with the given significant digits, packed as FromRun packs them.
func hist(t testing.TB, seed uint64, n int, medianUS float64, digits int) []byte {
	t.Helper()
	h := report.NewLatencyHistogram()
	r := rand.New(rand.NewPCG(seed, 7))
	for range n {
		// log-normal-ish around the median with a tail
		v := medianUS * (0.5 + r.ExpFloat64())
		h.Record(int64(v))
	}
	return h.Coarsen(digits).AppendPacked(nil)
}

// Result is a realistic 30-second result from a Raspberry Pi 4: nginx
// on loopback, 50 connections, the probe sampling every second.
func Result(t testing.TB) *wire.Result { return ResultN(t, 412_345) }

// ResultN is Result with n requests in its histograms.
func ResultN(t testing.TB, n int) *wire.Result {
	t.Helper()
	start := time.Date(2025, 11, 3, 14, 5, 0, 0, time.UTC)
	r := rand.New(rand.NewPCG(1, 2))
	run := wire.Run{
		StartedAt:   start,
		DurationUS:  30_000_412,
		Completed:   412_345,
		OK:          412_300,
		Errors:      wire.ErrorCounts{Timeout: 12, Status: 45, Read: 3},
		StatusCodes: []wire.StatusCount{{Code: 200, N: 412_300}, {Code: 503, N: 45}},
		Bytes:       412_345 * 2398,
		BodyBytes:   412_345 * 2159,
		Connects:    62,
		DocLength:   2159,
		Server:      "nginx/1.22.1",
		Latency:     hist(t, 1, n, 3600, 3),
		Connect:     hist(t, 2, 62, 90, 3),
		Waiting:     hist(t, 3, n, 3400, 2),
		Processing:  hist(t, 4, n, 3550, 2),
	}
	for s := range 30 {
		run.Timeline = append(run.Timeline, wire.Second{
			T: int32(s), Completed: 13_700 + int64(r.IntN(300)), Errors: int64(r.IntN(3)),
			P50US: 3500 + int64(r.IntN(200)), P99US: 9000 + int64(r.IntN(3000)),
		})
	}
	sys := &wire.System{
		IntervalMS: 1000,
		Disks:      []string{"mmcblk0", "mmcblk0p1", "mmcblk0p2"},
		Partitions: []bool{false, true, true},
		Nets:       []string{"lo", "eth0", "wlan0"},
		Zones:      []string{"cpu-thermal"},
		Procs:      []string{"nginx", "edgebench"},
		Warnings:   []string{"cpu frequency dropped from 1800 to 1500 MHz"},
	}
	for s := range 30 {
		user := int32(3800 + r.IntN(600))
		sysbp := int32(3100 + r.IntN(500))
		soft := int32(1200 + r.IntN(300))
		idle := 10000 - user - sysbp - soft - 40
		sys.Samples = append(sys.Samples, wire.SysSample{
			T:       int32(1000 * (s + 1)),
			CPU:     &wire.CPUShares{User: user, System: sysbp, Idle: idle, IOWait: 30, IRQ: 0, SoftIRQ: soft, Nice: 10},
			CoreBP:  []int32{9100 + int32(r.IntN(800)), 9000 + int32(r.IntN(900)), 8800 + int32(r.IntN(900)), 9200 + int32(r.IntN(700))},
			Load1:   i32(380 + int32(r.IntN(40))),
			Ctxt:    i64(61_000 + int64(r.IntN(5000))),
			Intr:    i64(23_000 + int64(r.IntN(2000))),
			Running: i32(int32(3 + r.IntN(4))),
			Blocked: i32(0),
			Mem: &wire.MemSample{Used: 412_000 + int64(r.IntN(4000)), Free: 2_900_000 + int64(r.IntN(4000)),
				Available: i64(3_380_000), Buffers: i64(48_000), Cached: i64(620_000 + int64(r.IntN(100))),
				Dirty: i64(int64(r.IntN(200))), SwapUsed: i64(0)},
			Disks: []wire.DiskRate{
				{I: 0, WriteKBs: int64(r.IntN(120)), WriteIOPS: int32(r.IntN(12)), BusyBP: int32(r.IntN(90))},
				{I: 2, WriteKBs: int64(r.IntN(120)), WriteIOPS: int32(r.IntN(12)), BusyBP: int32(r.IntN(90))},
			},
			Nets: []wire.NetRate{
				{I: 0, RxKBs: 96_000 + int64(r.IntN(3000)), TxKBs: 96_000 + int64(r.IntN(3000)), RxPps: 27_500 + int64(r.IntN(500)), TxPps: 27_500 + int64(r.IntN(500))},
				{I: 1, RxKBs: int64(r.IntN(3)), TxKBs: int64(r.IntN(3)), RxPps: int64(r.IntN(20)), TxPps: int64(r.IntN(20))},
			},
			TempDC:   []int32{612 + int32(r.IntN(40))},
			FreqMHz:  []int32{1800, 1800, 1800, 1800},
			Throttle: u32(0),
			Procs: []wire.ProcRate{
				{I: 0, Count: 5, CPUBP: i32(18_000 + int32(r.IntN(2000))), RSSKB: i64(21_400), ReadKBs: i64(0), WriteKBs: i64(0)},
				{I: 1, Count: 1, CPUBP: i32(14_000 + int32(r.IntN(2000))), RSSKB: i64(18_200), ReadKBs: i64(0), WriteKBs: i64(4)},
			},
		})
	}
	sys.Summary = wire.SysSummary{
		Seconds: 30.0, Samples: 30,
		CPU: &wire.CPUWindow{User: stv(4100, 4399), Nice: stv(10, 10), System: stv(3350, 3599), Idle: stv(1250, 1710),
			IOWait: stv(30, 30), SoftIRQ: stv(1350, 1499)},
		CoreBusyBP: []wire.WindowStat{stv(9500, 9899), stv(9450, 9899), stv(9250, 9699), stv(9550, 9899)},
		Load1:      st(398, 419), Ctxt: st(63_400, 65_990), Intr: st(24_000, 24_990),
		Mem: &wire.MemWindow{TotalKB: 3_884_000, Used: stv(414_000, 415_990), Free: stv(2_902_000, 2_903_990),
			Available: st(3_380_000, 3_380_000), Buffers: st(48_000, 48_000), Cached: st(620_050, 620_099), Dirty: st(100, 199), SwapUsed: st(0, 0)},
		Disks: []wire.DiskWindow{{I: 0, WriteKBs: stv(60, 119), WriteIOPS: stv(6, 11), BusyBP: stv(45, 89)},
			{I: 2, WriteKBs: stv(60, 119), WriteIOPS: stv(6, 11), BusyBP: stv(45, 89)}},
		Nets:       []wire.NetWindow{{I: 0, RxKBs: stv(97_500, 98_999), TxKBs: stv(97_500, 98_999), RxPps: stv(27_750, 27_999), TxPps: stv(27_750, 27_999)}},
		TempMaxDC:  i32(651),
		FreqMinMHz: i32(1500),
		FreqMaxMHz: i32(1800),
		Throttled:  u32(0),
		Procs: []wire.ProcWindow{{I: 0, Count: 5, CPUBP: st(19_000, 19_999), RSSKB: st(21_400, 21_400), ReadKB: i64(0), WriteKB: i64(0)},
			{I: 1, Count: 1, CPUBP: st(15_000, 15_999), RSSKB: st(18_200, 18_200), ReadKB: i64(0), WriteKB: i64(120)}},
	}
	run.System = sys
	return &wire.Result{
		V:         wire.SchemaVersion,
		ID:        "01JB6Z3K9W2XQ8V5T4R7N1M0PA",
		CommandID: "01JB6Z3H00A1B2C3D4E5F6G7H8",
		Fleet:     "lab",
		Device:    "pi4-07",
		BootID:    "0c4a7f3e-3b8e-4f0c-9a53-1c2d3e4f5a6b",
		CreatedAt: start.Add(31 * time.Second),
		Kind:      wire.KindLoadTest,
		Outcome:   wire.StateSucceeded,
		Labels:    map[string]string{"server": "nginx", "build": "gcc-9.3", "access_log": "off"},
		Spec: wire.RunSpec{URL: "http://127.0.0.1/index.html", Method: "GET", Connections: 50, Threads: 2,
			DurationMS: 30_000, KeepAlive: true, TimeoutMS: 2000, WarmupMS: 2000, IntervalMS: 1000, Watch: []string{"nginx"}},
		Fingerprint: wire.Fingerprint{AgentVersion: "v0.3.0", Kernel: "6.6.51+rpt-rpi-v8", OS: "Debian GNU/Linux 12 (bookworm)",
			Arch: "aarch64", Board: "Raspberry Pi 4 Model B Rev 1.4", CPUModel: "Cortex-A72", Cores: 4, MemKB: 3_884_000,
			Governor: "ondemand", MaxFreqMHz: 1800, Server: "nginx/1.22.1", FreqDropped: true},
		Runs: []wire.Run{run},
	}
}

// Command is a signed loadtest command for the devices of a board, queued
// behind a running test.
func Command() *wire.Command {
	return &wire.Command{
		V: wire.SchemaVersion, ID: "01JB6Z3H00A1B2C3D4E5F6G7H8",
		IssuedAt:  time.Date(2025, 11, 3, 14, 4, 58, 0, time.UTC),
		ExpiresAt: time.Date(2025, 11, 3, 14, 9, 58, 0, time.UTC),
		Kind:      wire.KindLoadTest,
		Select:    []wire.Label{{K: "board", V: "pi4"}},
		Spec: wire.CommandSpec{LoadTest: &wire.LoadTestSpec{
			URL: "http://127.0.0.1/index.html", Method: "GET",
			Headers:     []wire.Header{{Name: "Accept-Encoding", Value: "gzip"}},
			Connections: 50, Threads: 2, DurationMS: 30_000, KeepAlive: true, TimeoutMS: 2000, WarmupMS: 2000,
			Repeat: 3, Labels: []wire.Label{{K: "server", V: "nginx"}}, Watch: []string{"nginx"}, Queue: true,
		}},
		Sig: []byte("0123456789abcdef0123456789abcdef"),
	}
}

// Status is a device's retained birth.
func Status() *wire.Status {
	return &wire.Status{V: wire.SchemaVersion, State: wire.StatusOnline, BootID: "0c4a7f3e", ConnSeq: 1_762_178_700_000,
		At: time.Date(2025, 11, 3, 14, 5, 0, 0, time.UTC),
		Info: &wire.DeviceInfo{AgentVersion: "v0.3.0", Hostname: "pi4-07", Board: "Raspberry Pi 4 Model B Rev 1.4", Cores: 4,
			MemKB: 3_884_000, OS: "Debian GNU/Linux 12 (bookworm)", Kernel: "6.6.51", Arch: "aarch64", GoArch: "arm64",
			Labels: map[string]string{"rack": "a"}}}
}

// Event is a running command's progress.
func Event() *wire.Event {
	return &wire.Event{V: wire.SchemaVersion, CommandID: "01JB6Z3H00A1B2C3D4E5F6G7H8", Seq: 3, State: wire.StateRunning,
		Progress: &wire.Progress{ElapsedMS: 12_000, Completed: 165_000, RPS: 13_750.5, Errors: 2},
		At:       time.Date(2025, 11, 3, 14, 5, 12, 0, time.UTC)}
}

// Heartbeat is a busy device's heartbeat.
func Heartbeat() *wire.Heartbeat {
	return &wire.Heartbeat{V: wire.SchemaVersion, At: time.Date(2025, 11, 3, 14, 5, 12, 0, time.UTC), Busy: true,
		CommandID: "01JB6Z3H00A1B2C3D4E5F6G7H8", UptimeS: 86_400, Spooled: 1, CPUBusy: i32(8700), Load1: i32(390),
		MemUsedKB: i64(414_000), MemAvail: i64(3_380_000), TempDC: i32(640), FreqMHz: i32(1800), Throttled: u32(0)}
}

// Ack is the collector's ack of Result.
func Ack() *wire.Ack { return &wire.Ack{V: wire.SchemaVersion, ResultID: "01JB6Z3K9W2XQ8V5T4R7N1M0PA"} }

// Marshal encodes m, failing t if it cannot.
func Marshal(t testing.TB, m interface{ MarshalMsg([]byte) ([]byte, error) }) []byte {
	t.Helper()
	b, err := m.MarshalMsg(nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// CABundle is a PEM bundle of one self-signed ECDSA P-256 CA certificate,
// as a command's TLSSpec carries it.
func CABundle(t testing.TB) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), crand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2025, 11, 3, 0, 0, 0, 0, time.UTC)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "edgebench wire test CA"},
		NotBefore: at, NotAfter: at.AddDate(10, 0, 0), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(crand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// CommandH2 is Command over HTTPS and HTTP/2: 10 streams per connection,
// TLS 1.3 only, resumption off, the server's CA in the command.
func CommandH2(t testing.TB) *wire.Command {
	c := Command()
	lt := c.Spec.LoadTest
	lt.URL = "https://127.0.0.1/index.html"
	lt.HTTP2, lt.Streams = true, 10
	lt.TLS = &wire.TLSSpec{CACerts: CABundle(t), NoResume: true, Version: "1.3"}
	return c
}

// ResultH2 is ResultN's result of an HTTPS and HTTP/2 run: its spec says
// h2 with 10 streams and resumption off, its run what the handshakes
// negotiated and what the HTTP/2 connections saw.
func ResultH2(t testing.TB, n int) *wire.Result {
	t.Helper()
	r := ResultN(t, n)
	r.Spec.URL = "https://127.0.0.1/index.html"
	r.Spec.Protocol, r.Spec.Streams, r.Spec.NoTLSResume, r.Spec.TLSVersion = "h2", 10, true, "1.3"
	run := &r.Runs[0]
	run.Errors.TLS, run.Errors.Reset = 2, 1
	run.TLS = &wire.TLSRun{Version: "TLSv1.3", Cipher: "TLS_AES_128_GCM_SHA256", Group: "X25519", ServerName: "127.0.0.1", ALPN: "h2",
		KeyBits: 256, Handshakes: 62, Resumed: 0}
	run.Handshake = hist(t, 5, 62, 600, 3)
	run.H2 = &wire.H2Run{MaxStreams: 128, GoAways: 1, Retried: 3, HeaderBytes: 412_345 * 15,
		Resets: []wire.CodeCount{{Name: "REFUSED_STREAM", N: 1}}}
	return r
}

// ResultNet is ResultN of a loader on another machine than its target:
// its interfaces' drops and duplex, the TCP segments and retransmissions,
// and the round-trip time to the target before and under the load.
func ResultNet(t testing.TB, n int) *wire.Result {
	r := ResultN(t, n)
	r.Spec.URL = "http://192.168.2.13/index.html"
	sys := r.Runs[0].System
	for i := range sys.Samples {
		s := &sys.Samples[i]
		s.Nets[0].RxDrops, s.Nets[0].TxErrs = int64(i%3), int64(i%2)
		s.TCP = &wire.TCPRate{InSegs: 27_000, OutSegs: 27_500, RetransSegs: int64(i % 7)}
	}
	nw := &sys.Summary.Nets[0]
	nw.SpeedMbps, nw.Duplex = 1000, "full"
	nw.RxDrops, nw.TxDrops, nw.RxErrs, nw.TxErrs = i64(20), i64(0), i64(0), i64(15)
	sys.Summary.TCP = &wire.TCPWindow{InSegs: stv(27_000, 27_100), OutSegs: stv(27_500, 27_600), RetransSegs: stv(3, 6), Out: 825_000, Retrans: 90}
	sys.Summary.Path = &wire.PathWindow{Target: "192.168.2.13:80", Idle: &wire.RTTWindow{N: 5, MinUS: 280, MedianUS: 300, MaxUS: 900},
		Loaded: &wire.RTTWindow{N: 120, MinUS: 310, MedianUS: 450, MaxUS: 3000}, Lost: 1}
	return r
}

// Watch is the collector's watch on the target of a two-machine run, and
// Mark a mark of its load's window.
func Watch() *wire.Command {
	c := Command()
	c.Kind, c.Select, c.Sig = wire.KindProbe, nil, nil
	c.Spec = wire.CommandSpec{Probe: &wire.ProbeSpec{IntervalMS: 500, DurationMS: 45_000, URL: "http://192.168.2.13/index.html"}}
	return c
}

// Mark is the end mark of the second window of Watch's load.
func Mark() *wire.Command {
	c := Command()
	c.ID, c.Kind, c.Select, c.Sig = "01JB6Z3H00A1B2C3D4E5F6G7H9", wire.KindMark, nil, nil
	c.Spec = wire.CommandSpec{Mark: &wire.MarkSpec{CommandID: "01JB6Z3H00A1B2C3D4E5F6G7H8", Run: 1, Edge: wire.MarkEnd}}
	return c
}
