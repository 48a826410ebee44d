//go:build linux

package measure

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/edgebench/edgebench/loadgen"
	"github.com/edgebench/edgebench/probe"
	"github.com/edgebench/edgebench/wire"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// server answers every request and counts them: the witness.
func server(t *testing.T) (string, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Header().Set("Server", "measure-test")
		fmt.Fprint(w, "hello")
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/", &n
}

// TestRepeat measures three runs with the probe: each hook is called once
// a run, in order, and every request the server answered is in a run.
func TestRepeat(t *testing.T) {
	url, served := server(t)
	var before, after []int
	progress := 0
	runs, err := Repeat(context.Background(), Test{
		Load:     loadgen.Config{URL: url, Connections: 2, Requests: 100, KeepAlive: true},
		Repeat:   3,
		Interval: 100 * time.Millisecond,
		Watches:  []probe.Watch{{Name: "nothing-by-this-name"}},
		Before:   func(i int) { before = append(before, i) },
		Progress: func(i int) func(loadgen.Progress) { progress++; return nil },
		After: func(i int, r Run) error {
			after = append(after, i)
			if r.Load == nil || r.System == nil {
				t.Errorf("run %d: load %v, system %v", i, r.Load, r.System)
			}
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 3 || fmt.Sprint(before) != "[0 1 2]" || fmt.Sprint(after) != "[0 1 2]" || progress != 3 {
		t.Fatalf("%d runs, before %v, after %v, progress %d", len(runs), before, after, progress)
	}
	var total int64
	for _, r := range runs {
		total += r.Load.Completed + r.Load.Drained.Completed
	}
	if total != served.Load() || OK(runs) != 300 {
		t.Errorf("the runs hold %d responses (%d ok), the server answered %d", total, OK(runs), served.Load())
	}
}

// TestRepeatStops: an error of the After hook, a target that refuses every
// connection, and a cancelled context each end the runs, with the runs
// measured so far returned.
func TestRepeatStops(t *testing.T) {
	url, _ := server(t)
	load := loadgen.Config{URL: url, Requests: 20}
	stop := errors.New("stop")
	runs, err := Repeat(context.Background(), Test{Load: load, Repeat: 5, NoProbe: true,
		After: func(i int, _ Run) error {
			if i == 1 {
				return stop
			}
			return nil
		}})
	if !errors.Is(err, stop) || len(runs) != 2 {
		t.Errorf("After's error: %d runs, %v", len(runs), err)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + ln.Addr().String() + "/"
	ln.Close()
	runs, err = Repeat(context.Background(), Test{Load: loadgen.Config{URL: refused, Requests: 5}, Repeat: 3, NoProbe: true})
	var de *loadgen.DialError
	if !errors.As(err, &de) || len(runs) != 0 {
		t.Errorf("refused target: %d runs, %v", len(runs), err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	runs, err = Repeat(ctx, Test{Load: load, Repeat: 5, NoProbe: true, After: func(int, Run) error { cancel(); return nil }})
	if err != nil || len(runs) != 1 {
		t.Errorf("cancelled between runs: %d runs, %v", len(runs), err)
	}
}

// TestAddRuns: the wire result of two runs holds both, their spread, the
// target's Server header and the probe's warnings.
func TestAddRuns(t *testing.T) {
	url, _ := server(t)
	runs, err := Repeat(context.Background(), Test{Load: loadgen.Config{URL: url, Requests: 50}, Repeat: 2,
		Interval: 100 * time.Millisecond, Watches: []probe.Watch{{Name: "nothing-by-this-name"}}})
	if err != nil {
		t.Fatal(err)
	}
	runs[1].System.Warnings = []string{"a warning"}
	res := &wire.Result{}
	AddRuns(res, runs)
	if len(res.Runs) != 2 || res.Repeat == nil || res.Repeat.Runs != 2 || res.Fingerprint.Server != "measure-test" ||
		len(res.Warnings) != len(runs[0].System.Warnings)+1 || res.Runs[1].System == nil || res.Runs[0].Completed != 50 {
		t.Errorf("wire result %+v", res)
	}
}

// A name that resolves to loopback addresses only leaves the links out of
// the verdict; addresses are the verdict's to tell.
func TestLoopbackName(t *testing.T) {
	if !loopbackName("localhost") {
		t.Error("localhost is not loopback")
	}
	for _, h := range []string{"", "127.0.0.1", "::1", "[::1]", "192.168.2.10"} {
		if loopbackName(h) {
			t.Errorf("%q taken for a loopback name", h)
		}
	}
}

// A target is another machine's when its address is neither loopback nor
// one of this machine's; only the live machine's probe measures the path.
// Nothing is dialled here.
func TestRemoteTarget(t *testing.T) {
	ctx := context.Background()
	got, ok := RemoteTarget(ctx, loadgen.Config{URL: "http://192.0.2.7:8080/x"}, "/")
	if !ok || got != netip.MustParseAddrPort("192.0.2.7:8080") {
		t.Errorf("TEST-NET address: %v %v", got, ok)
	}
	// The policy's checked address wins over the URL's host.
	got, ok = RemoteTarget(ctx, loadgen.Config{URL: "http://board.lan/", Addrs: []net.IP{net.ParseIP("192.0.2.9")}}, "")
	if !ok || got != netip.MustParseAddrPort("192.0.2.9:80") {
		t.Errorf("checked address: %v %v", got, ok)
	}
	if got, ok = RemoteTarget(ctx, loadgen.Config{URL: "https://[2001:db8::1]/"}, "/"); !ok || got.Port() != 443 {
		t.Errorf("IPv6: %v %v", got, ok)
	}
	for _, c := range []struct {
		url, root string
	}{
		{"http://127.0.0.1:8080/", "/"}, {"http://[::1]/", "/"}, {"http://localhost/", "/"},
		{"http://192.0.2.7/", "testdata/pi3/t0"}, {"http://0.0.0.0/", "/"}, {"not a url", "/"},
	} {
		if got, ok := RemoteTarget(ctx, loadgen.Config{URL: c.url}, c.root); ok {
			t.Errorf("%s below %s taken for remote: %v", c.url, c.root, got)
		}
	}
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() {
			if got, ok := RemoteTarget(ctx, loadgen.Config{URL: "http://" + n.IP.String() + "/"}, "/"); ok {
				t.Errorf("this machine's %s taken for remote: %v", n.IP, got)
			}
		}
	}
}
