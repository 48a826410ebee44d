package agent

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/edgebench/edgebench/internal/testenv"
)

// listenNotify opens a unixgram socket that stands for systemd's.
func listenNotify(t *testing.T, name string) *net.UnixConn {
	t.Helper()
	c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: name, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func readNotify(t *testing.T, c *net.UnixConn) string {
	t.Helper()
	buf := make([]byte, 4096)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, err := c.Read(buf)
	if err != nil {
		t.Fatalf("read notify socket: %v", err)
	}
	return string(buf[:n])
}

func TestNotifyAndWatchdog(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "notify.sock")
	srv := listenNotify(t, sock)
	t.Setenv("NOTIFY_SOCKET", sock)

	if err := Notify(NotifyReady); err != nil {
		t.Fatal(err)
	}
	if got := readNotify(t, srv); got != "READY=1" {
		t.Errorf("got %q, want READY=1", got)
	}

	env := map[string]string{"WATCHDOG_USEC": "200000", "WATCHDOG_PID": strconv.Itoa(os.Getpid())}
	timeout, err := WatchdogInterval(envMap(env))
	if err != nil || timeout != 200*time.Millisecond {
		t.Fatalf("WatchdogInterval = %v, %v", timeout, err)
	}
	n := NewNotifier(os.Getenv)
	start := time.Now()
	w := StartWatchdog(n, timeout)
	for i := range 3 {
		if got := readNotify(t, srv); got != "WATCHDOG=1" {
			t.Fatalf("ping %d: got %q", i, got)
		}
	}
	// Three pings, the first at once, then every 100ms: at least 200ms.
	if el := time.Since(start); el < 150*time.Millisecond {
		t.Errorf("3 pings in %v: pinging faster than half the interval", el)
	}
	if err := w.Stop(); err != nil {
		t.Errorf("Stop: %v", err)
	}
	if err := w.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	// Drain pings sent before Stop, then nothing more may arrive.
	srv.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	buf := make([]byte, 64)
	for {
		if _, err := srv.Read(buf); err != nil {
			break
		}
	}
	if err := n.Notify(NotifyStopping); err != nil {
		t.Fatal(err)
	}
	if got := readNotify(t, srv); got != "STOPPING=1" {
		t.Errorf("got %q after Stop, want STOPPING=1 (a ping after Stop?)", got)
	}
}

func TestNotifyAbstractSocket(t *testing.T) {
	name := fmt.Sprintf("@edgebench-test-%d-%d", os.Getpid(), time.Now().UnixNano())
	srv := listenNotify(t, name)
	n := NewNotifier(envMap(map[string]string{"NOTIFY_SOCKET": name}))
	if err := n.Notify(NotifyStatus("idle") + "\n" + NotifyReady); err != nil {
		t.Fatal(err)
	}
	if got := readNotify(t, srv); got != "STATUS=idle\nREADY=1" {
		t.Errorf("got %q", got)
	}
}

func TestNotifyWithoutSocket(t *testing.T) {
	n := NewNotifier(envMap(nil))
	if n.Enabled() {
		t.Error("enabled without NOTIFY_SOCKET")
	}
	if err := n.Notify(NotifyReady); err != nil {
		t.Errorf("no socket: %v", err)
	}
	w := StartWatchdog(n, time.Second)
	if err := w.Stop(); err != nil {
		t.Error(err)
	}
	bad := NewNotifier(envMap(map[string]string{"NOTIFY_SOCKET": "relative.sock"}))
	if err := bad.Notify(NotifyReady); err == nil {
		t.Error("relative socket accepted")
	}
	gone := NewNotifier(envMap(map[string]string{"NOTIFY_SOCKET": filepath.Join(t.TempDir(), "gone.sock")}))
	if err := gone.Notify(NotifyReady); err == nil {
		t.Error("missing socket: no error")
	}
}

func TestWatchdogReportsPingErrors(t *testing.T) {
	gone := NewNotifier(envMap(map[string]string{"NOTIFY_SOCKET": filepath.Join(t.TempDir(), "gone.sock")}))
	w := StartWatchdog(gone, time.Hour)
	// The first ping is sent at once; give it a bounded while.
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		w.mu.Lock()
		e := w.err
		w.mu.Unlock()
		if e != nil {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := w.Stop(); err == nil {
		t.Error("Stop returned no error for a missing socket")
	}
}

func TestWatchdogInterval(t *testing.T) {
	for _, tc := range []struct {
		env     map[string]string
		want    time.Duration
		wantErr bool
	}{
		{nil, 0, false},
		{map[string]string{"WATCHDOG_USEC": "30000000"}, 30 * time.Second, false},
		{map[string]string{"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "42"}, 30 * time.Second, false},
		{map[string]string{"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "43"}, 0, false},
		{map[string]string{"WATCHDOG_USEC": "x"}, 0, true},
		{map[string]string{"WATCHDOG_USEC": "0"}, 0, true},
		{map[string]string{"WATCHDOG_USEC": "1", "WATCHDOG_PID": "me"}, 0, true},
	} {
		got, err := watchdogInterval(envMap(tc.env), 42)
		if got != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("%v: got %v, %v", tc.env, got, err)
		}
	}
}

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		testenv.RemoveBinaries() // the agent binary the end-to-end tests built
		os.Exit(code)
	}))
}
