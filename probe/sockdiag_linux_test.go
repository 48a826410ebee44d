package probe

import (
	"net"
	"os"
	"slices"
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

// The kernel's filter keeps the connections whose local or remote port is
// one of the ports asked, and only those: what the unfiltered table has
// of them, over IPv4 and IPv6.
func TestTCPSocketsFilteredByPort(t *testing.T) {
	if testing.Short() {
		t.Skip("the kernel's sock_diag: not in -short (the 32-bit pass runs under qemu-user, which has no NETLINK_SOCK_DIAG)")
	}
	var lns []net.Listener
	for _, nw := range []string{"tcp4", "tcp4", "tcp4", "tcp6"} {
		addr := "127.0.0.1:0"
		if nw == "tcp6" {
			addr = "[::1]:0"
		}
		ln, err := net.Listen(nw, addr)
		if err != nil {
			t.Skipf("no %s listener on loopback: %v", nw, err)
		}
		defer ln.Close()
		lns = append(lns, ln)
		for range 2 {
			c, err := net.Dial(nw, ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			s, err := ln.Accept()
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
		}
	}
	port := func(ln net.Listener) uint16 { return uint16(ln.Addr().(*net.TCPAddr).Port) }
	ask := []uint16{port(lns[0]), port(lns[2]), port(lns[3])} // not lns[1]'s
	all, err := tcpSockets(1<<tcpEstablished, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := tcpSockets(1<<tcpEstablished, ask)
	if err != nil {
		t.Fatalf("the filter: %v", err)
	}
	var want []uint64
	for _, s := range all {
		if slices.Contains(ask, s.src.Port()) || slices.Contains(ask, s.dst.Port()) {
			want = append(want, s.ino)
		}
	}
	var have []uint64
	for _, s := range got {
		have = append(have, s.ino)
	}
	slices.Sort(want)
	slices.Sort(have)
	if len(want) != 12 || !slices.Equal(have, want) {
		t.Errorf("filtered %d sockets %v, want the %d of the ports %v (12: 2 connections, both ends, on 3 ports)", len(have), have, len(want), want)
	}
}
