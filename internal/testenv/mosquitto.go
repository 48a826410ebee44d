package testenv

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// Mosquitto runs Debian's mosquitto on a free loopback port, anonymous
// clients allowed, until the test ends, and returns its tcp:// URL.
// Without mosquitto the test is skipped, except in CI (CI=true), where it
// fails.
func Mosquitto(t testing.TB) string {
	t.Helper()
	return MosquittoConfig(t, "allow_anonymous true\npersistence false\n")
}

// MosquittoConfig is Mosquitto with config (mosquitto.conf lines) instead
// of the anonymous default; the listener is added.
func MosquittoConfig(t testing.TB, config string) string {
	t.Helper()
	bin := Tool(t, "mosquitto")
	addr := FreeAddr(t)
	_, port, _ := net.SplitHostPort(addr)
	conf := filepath.Join(t.TempDir(), "mosquitto.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf("listener %s 127.0.0.1\n%s", port, config)), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-c", conf)
	out := start(t, cmd, os.Kill)
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return "tcp://" + addr
		}
		if time.Now().After(deadline) {
			t.Fatalf("mosquitto did not listen on %s: %v\n%s", addr, err, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// start starts cmd, its output going to the buffer it returns, and stops
// it with sig (and waits for it) when the test ends.
func start(t testing.TB, cmd *exec.Cmd, sig os.Signal) *lockedBuffer {
	t.Helper()
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(sig)
		cmd.Wait()
	})
	return out
}

type lockedBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b = append(l.b, p...)
	return len(p), nil
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return string(l.b)
}
