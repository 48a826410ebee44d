package probe

import (
	"fmt"
	"maps"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/edgebench/edgebench/probe/machine"
)

// Which of a server's sockets lead to an upstream: the side it connected
// from, to a listener of this machine; never the clients it accepted,
// its own socketpairs, or a connection leaving the machine.
func TestUpstreamPeers(t *testing.T) {
	ap := netip.MustParseAddrPort
	own := map[uint64]bool{10: true, 11: true, 12: true, 13: true, 14: true, 15: true, 16: true, 17: true, 18: true}
	us := []unixSock{
		{ino: 10, peer: 100}, // nginx -> php-fpm's accepted socket
		{ino: 100, peer: 10, named: true, name: "/run/fpm.sock"},     //
		{ino: 105, named: true, name: "/run/fpm.sock", listen: true}, // php-fpm's listener
		{ino: 106, named: true, name: "/run/other.sock", listen: true},
		{ino: 107, named: true, name: "/run/fpm.sock2", listen: true},
		{ino: 11, peer: 101},               // a socketpair, master to worker
		{ino: 101, peer: 11},               //
		{ino: 12, peer: 102, named: true},  // nginx listening on a unix path, a client accepted
		{ino: 102, peer: 12},               //
		{ino: 103, peer: 104, named: true}, // two other processes
		{ino: 104, peer: 103},
	}
	tcp := []tcpSock{
		{src: ap("0.0.0.0:80"), state: tcpListen, ino: 13},                                    // nginx listens on :80
		{src: ap("127.0.0.1:9000"), state: tcpListen, ino: 200},                               // a backend listens on :9000
		{src: ap("127.0.0.1:80"), dst: ap("127.0.0.1:40000"), state: tcpEstablished, ino: 14}, // a client nginx accepted
		{src: ap("127.0.0.1:40000"), dst: ap("127.0.0.1:80"), state: tcpEstablished, ino: 201},
		{src: ap("127.0.0.1:40001"), dst: ap("127.0.0.1:9000"), state: tcpEstablished, ino: 15}, // nginx -> the backend
		{src: ap("127.0.0.1:9000"), dst: ap("127.0.0.1:40001"), state: tcpEstablished, ino: 202},
		{src: ap("192.168.1.5:40002"), dst: ap("192.168.1.9:9000"), state: tcpEstablished, ino: 16}, // to another machine
		{src: ap("127.0.0.1:40003"), dst: ap("127.0.0.1:7000"), state: tcpEstablished, ino: 17},     // to a port nobody listens on
		{src: ap("127.0.0.1:7000"), dst: ap("127.0.0.1:40003"), state: tcpEstablished, ino: 203},
		{src: ap("[::1]:40004"), dst: ap("[::1]:9000"), state: tcpEstablished, ino: 18}, // IPv6 to the backend
		{src: ap("[::1]:9000"), dst: ap("[::1]:40004"), state: tcpEstablished, ino: 204},
		// A client nginx accepted that connected from a port it listens
		// on (bound before connecting): nginx's side is on its own port.
		{src: ap("127.0.0.1:9100"), state: tcpListen, ino: 205},
		{src: ap("127.0.0.1:80"), dst: ap("127.0.0.1:9100"), state: tcpEstablished, ino: 19},
		{src: ap("127.0.0.1:9100"), dst: ap("127.0.0.1:80"), state: tcpEstablished, ino: 206},
	}
	// To another machine, on a port a process of this one listens on
	// any address: not that process.
	tcp = append(tcp,
		tcpSock{src: ap("0.0.0.0:9200"), state: tcpListen, ino: 208},
		tcpSock{src: ap("192.168.1.5:40005"), dst: ap("192.168.1.9:9200"), state: tcpEstablished, ino: 20},
		// To a backend on any address, the peer still in its accept
		// queue (no inode yet): the listener.
		tcpSock{src: ap("0.0.0.0:9300"), state: tcpListen, ino: 209},
		tcpSock{src: ap("127.0.0.1:9301"), state: tcpListen, ino: 210},
		tcpSock{src: ap("127.0.0.2:9000"), state: tcpListen, ino: 211}, // the port, another address
		tcpSock{src: ap("127.0.0.1:40006"), dst: ap("127.0.0.1:9300"), state: tcpEstablished, ino: 21},
		tcpSock{src: ap("127.0.0.1:9300"), dst: ap("127.0.0.1:40006"), state: tcpEstablished, ino: 0},
	)
	own[19], own[20], own[21] = true, true, true
	got := slices.Sorted(maps.Keys(upstreamPeers(own, tcp, us)))
	// 105 and 200: the listeners a look finds the upstream by, when the
	// connection it saw is closed by the time descriptors are read.
	if want := []uint64{100, 105, 200, 202, 204, 209}; !slices.Equal(got, want) {
		t.Errorf("peers %v, want %v", got, want)
	}
}

// A process's standard input, output and error are left out of its
// sockets: a service's are connected to journald's stdout socket, which
// would make journald the upstream of every server systemd started.
func TestPidSocketsLeavesStdioOut(t *testing.T) {
	dir := t.TempDir()
	for fd, target := range map[string]string{"0": "socket:[5]", "1": "socket:[6]", "2": "socket:[7]", "3": "socket:[8]", "4": "pipe:[9]", "10": "socket:[11]", "12": "/var/log/x"} {
		if err := os.Symlink(target, filepath.Join(dir, fd)); err != nil {
			t.Fatal(err)
		}
	}
	var got []uint64
	pidSockets(dir, 0, func(ino uint64) { got = append(got, ino) })
	slices.Sort(got)
	if want := []uint64{8, 11}; !slices.Equal(got, want) {
		t.Errorf("sockets %v, want %v", got, want)
	}
}

// A row's role and an upstream's server reach the window's summary, also
// for a row found after the window began.
func TestSummaryKeepsRoles(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	cpu := func(v float64) *float64 { return &v }
	g := newAggregator(&machine.Sample{Time: t0})
	g.add(&machine.Sample{Time: t0.Add(time.Second), Seconds: 1, Procs: []machine.Proc{
		{Name: "nginx", PID: 812, Role: machine.RoleServer, Count: 2, CPU: cpu(40)}}})
	g.add(&machine.Sample{Time: t0.Add(2 * time.Second), Seconds: 1, Procs: []machine.Proc{
		{Name: "nginx", PID: 812, Role: machine.RoleServer, Count: 2, CPU: cpu(38)},
		{Name: "php-fpm8.2", PID: 790, Role: machine.RoleUpstream, Of: "nginx", Count: 5, CPU: cpu(131)}}})
	s := g.summary()
	if len(s.Procs) != 2 {
		t.Fatalf("rows %+v", s.Procs)
	}
	if p := s.Procs[0]; p.Role != machine.RoleServer || p.Of != "" || p.CPU.Mean != 39 {
		t.Errorf("server row %+v", p)
	}
	if p := s.Procs[1]; p.Role != machine.RoleUpstream || p.Of != "nginx" || p.CPU.Mean != 131 || p.Label() != "php-fpm8.2 [790] (upstream of nginx)" {
		t.Errorf("upstream row %+v %q", p, p.Label())
	}
}

// A process with many descriptors (nginx under ab -c5000) is read a slice
// of upstreamFDs at a time, the highest descriptors first (the upstream
// connections a server opens after its clients'), the next slice at the
// next look, round again after the last: every socket is seen within a
// few looks, and no look costs more than upstreamFDs readlinks.
func TestPidSocketsInSlices(t *testing.T) {
	dir := t.TempDir()
	const n = 1200
	for fd := 3; fd < 3+n; fd++ {
		if err := os.Symlink(fmt.Sprintf("socket:[%d]", 100000+fd), filepath.Join(dir, strconv.Itoa(fd))); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[uint64]int{}
	for pass := range 3 {
		var got []uint64
		pidSockets(dir, pass, func(ino uint64) { got = append(got, ino) })
		if len(got) != upstreamFDs {
			t.Fatalf("look %d read %d sockets, want %d", pass, len(got), upstreamFDs)
		}
		if pass == 0 && (slices.Max(got) != 100000+n+2 || slices.Min(got) != 100000+n+3-upstreamFDs) {
			t.Errorf("the first look read %d..%d, want the highest %d descriptors", slices.Min(got)-100000, slices.Max(got)-100000, upstreamFDs)
		}
		for _, ino := range got {
			seen[ino]++
		}
	}
	if len(seen) != n {
		t.Errorf("3 looks saw %d of %d sockets", len(seen), n)
	}
}
