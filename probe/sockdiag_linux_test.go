package probe

import (
	"net"
	"os"
	"strconv"
	"testing"
)

// The kernel's answer over sock_diag is the listening sockets of the port,
// as proc/net/tcp and tcp6 list them: not the port's connections, not
// other ports.
func TestListenInodesMatchProc(t *testing.T) {
	if testing.Short() {
		t.Skip("the kernel's sock_diag: not in -short (the 32-bit pass runs under qemu-user, which has no NETLINK_SOCK_DIAG; ListenerPIDs then reads proc/net/tcp)")
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	if ln6, err := net.Listen("tcp6", "[::1]:"+strconv.Itoa(port)); err == nil {
		defer ln6.Close()
	} else {
		t.Logf("no IPv6 listener on loopback: %v", err)
	}
	other, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	// An established connection and a closed one on the port: sockets
	// with the port as their local port that are not listening.
	for i := 0; i < 2; i++ {
		c, err := net.Dial("tcp4", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		s, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if i == 1 {
			s.Close() // the server closes first: TIME_WAIT on the port
			c.Close()
		} else {
			defer s.Close()
		}
	}

	got, err := listenInodes(port)
	if err != nil {
		t.Fatalf("listenInodes: %v", err)
	}
	want, err := procListenInodes("/", port)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) == 0 {
		t.Fatal("proc/net/tcp lists no listener on the port")
	}
	if len(got) != len(want) {
		t.Fatalf("sock_diag: %v, proc/net/tcp: %v", got, want)
	}
	for ino := range want {
		if !got[ino] {
			t.Fatalf("sock_diag: %v, proc/net/tcp: %v", got, want)
		}
	}
	pids, err := ListenerPIDs("", port)
	if err != nil || len(pids) != 1 || pids[0] != os.Getpid() {
		t.Fatalf("ListenerPIDs = %v, %v; want [%d]", pids, err, os.Getpid())
	}
}

// BenchmarkListenerInodes compares the two ways of finding a port's
// listening sockets on this machine; the difference grows with the number
// of sockets (TIME_WAIT after a run without keep-alive): compare with
// `ss -tan state time-wait | wc -l`.
func BenchmarkListenerInodes(b *testing.B) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	b.Run("sock_diag", func(b *testing.B) {
		for b.Loop() {
			if _, err := listenInodes(port); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("proc", func(b *testing.B) {
		for b.Loop() {
			if _, err := procListenInodes("/", port); err != nil {
				b.Fatal(err)
			}
		}
	})
}
