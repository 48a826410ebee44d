package probe

import (
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/edgebench/edgebench/probe/machine"
	"golang.org/x/sys/unix"
)

// A server is often not one program: nginx hands a PHP page to php-fpm
// over a unix socket, a reverse proxy hands requests to a local backend
// over loopback TCP. The probe finds those upstreams from the server's own
// connected sockets while it samples (the connections exist only while
// requests flow), and watches each as a row of its own, of role upstream:
//
//   - a unix stream socket of the server that is unnamed (the side that
//     connected) whose peer is named (accepted from a listener's path);
//   - a TCP socket of the server whose local port is not one it listens
//     on (it connected), whose peer is on this machine and whose peer's
//     port is one a process listens on;
//
// and the process holding the peer, walked up to its parent while that
// runs the same program (php-fpm's master), is the upstream, watched as a
// tree. Standard input, output and error are left out (a service's are
// connected to journald), as are this process and the rows already
// watched: no process counts twice.

// upstreamEarly is how many of a probe's first samples look for a row's
// upstreams at every sample until one is found (the run's first seconds:
// an upstream's connections exist only while a request is in it, and a
// look sees the instant it is made); the processes' CPU ticks are kept at
// those samples, so that the slice an upstream is found in has its CPU.
// After that, and once one is found, they are looked for again at every
// rescan (rescanEvery).
const upstreamEarly = 10

// upstreamDue reports whether ws looks for its upstreams at this sample.
func (ws *watchState) upstreamDue(n int) bool {
	if !ws.w.Upstreams {
		return false
	}
	if ws.upFound == 0 && n <= upstreamEarly {
		return true
	}
	return n-ws.upTried >= rescanEvery
}

// upstreamPending reports whether some row still looks for its upstreams
// at the next sample, early: the processes' CPU counters are then kept at
// this sample (allTicks), so that an upstream found at the next one has
// that slice's CPU.
func (p *Probe) upstreamPending() bool {
	if p.r.root != "/" || p.nsample >= upstreamEarly {
		return false
	}
	for _, ws := range p.watches {
		if ws.w.Upstreams && ws.upFound == 0 {
			return true
		}
	}
	return false
}

// upstreams looks for the upstreams of the rows that are due, and for
// each new one adds a watch and its row to s. Its processes' counters are
// seeded from the previous sample's allTicks (from; nil: none), so that
// the slice it is found in has its CPU. Only on the live machine: the
// peers are asked of the kernel.
func (p *Probe) upstreams(s *machine.Sample, dt float64, merge bool, maxCPU float64, a *arena, from map[int]uint64) {
	if p.r.root != "/" {
		return
	}
	var due []*watchState
	for _, ws := range p.watches {
		if ws.upstreamDue(p.nsample) {
			ws.upTried = p.nsample
			ws.upPasses++
			due = append(due, ws)
		}
	}
	if len(due) == 0 {
		return
	}
	self := os.Getpid()
	pt := &procTable{r: p.r, m: map[int]procInfo{}}
	mine := map[int]bool{}
	for pid, i := self, 0; pid > 0 && i < maxDepth && !mine[pid]; pid, i = pt.get(pid).ppid, i+1 {
		mine[pid] = true
	}
	watched := func(pid int) bool {
		for _, ws := range p.watches {
			if _, ok := ws.pids[pid]; ok {
				return true
			}
		}
		return false
	}
	var listening []tcpSock
	var us []unixSock
	tables := false
	for _, ws := range due {
		own := map[uint64]bool{}
		pass := ws.upPasses - 1
		for pid := range ws.pids {
			pidSockets(p.r.path(pidRel(pid, "fd")), pass, func(ino uint64) { own[ino] = true })
		}
		if len(own) == 0 {
			continue
		}
		if !tables {
			tables = true
			// Either table may be missing (no sock_diag under qemu-user,
			// a kernel without unix_diag): the other still serves.
			listening, _ = tcpSockets(1<<tcpListen, nil)
			us, _ = unixStreams()
		}
		// Only the connections to a port this server does not listen on
		// but another process does: the load's own connections (to the
		// server's port, thousands of them) are not asked for.
		tcp := listening
		if ports := otherPorts(listening, own); len(ports) > 0 && len(ports) <= maxFilterPorts {
			est, _ := tcpSockets(1<<tcpEstablished, ports)
			tcp = append(slices.Clip(listening), est...)
		} else if len(ports) > maxFilterPorts {
			est, _ := tcpSockets(1<<tcpEstablished, nil)
			tcp = append(slices.Clip(listening), est...)
		}
		peers := upstreamPeers(own, tcp, us)
		if len(peers) == 0 {
			continue
		}
		held := socketHolders(p.r.root, peers, pass, func(pid int) bool { return pid == self || ws.pids[pid] != nil })
		var tops []int
		for _, pid := range held {
			if watched(pid) {
				continue
			}
			top := pid
			for range maxDepth {
				pp := pt.get(top).ppid
				if pp <= 1 || mine[pp] || !pt.sameProgram(pp, top) {
					break
				}
				top = pp
			}
			if top == 1 || mine[top] || watched(top) {
				continue
			}
			dup := false
			for _, t := range tops {
				dup = dup || t == top
			}
			if !dup {
				tops = append(tops, top)
			}
		}
		for _, top := range tops {
			nw := newWatchState(Watch{PID: top, Tree: true, Role: machine.RoleUpstream, Of: ws.name, Upstreams: true})
			nw.scan(p)
			nw.seed(from, merge)
			p.watches = append(p.watches, nw)
			s.Procs = append(s.Procs, nw.sample(p, dt, merge, maxCPU, a))
			ws.upFound++
		}
	}
}

// seed sets the CPU counters its processes are measured from to those of
// ticks (a previous sample's allTicks): to last, or with merge to older,
// which a merged sample measures from.
func (ws *watchState) seed(ticks map[int]uint64, merge bool) {
	for pid, st := range ws.pids {
		t, ok := ticks[pid]
		if !ok {
			continue
		}
		c := pidCounters{ticks: t, hasTicks: true}
		if merge {
			st.older = c
		} else {
			st.last = c
		}
	}
}

// allTicks reads every process's CPU ticks (user and system) below the
// probe's root.
func (p *Probe) allTicks() map[int]uint64 {
	pids, err := listPIDs(p.r.root)
	if err != nil {
		return nil
	}
	out := make(map[int]uint64, len(pids))
	for _, pid := range pids {
		b, err := p.r.read(pidRel(pid, "stat"), false)
		if err != nil {
			continue
		}
		if ps, err := parsePidStat(b); err == nil {
			out[pid] = ps.ticks
		}
	}
	return out
}

// maxFilterPorts bounds the ports a sock_diag filter names (its size
// grows with them); past it every established socket is asked for.
const maxFilterPorts = 256

// otherPorts returns the ports that processes of this machine listen on
// and own (one server's sockets) does not, ascending.
func otherPorts(listening []tcpSock, own map[uint64]bool) []uint16 {
	mine := map[uint16]bool{}
	for _, t := range listening {
		if own[t.ino] {
			mine[t.src.Port()] = true
		}
	}
	var out []uint16
	for _, t := range listening {
		if p := t.src.Port(); !mine[p] && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// upstreamPeers returns the inodes of the sockets that lead from the
// sockets own (one server's) to an upstream: of own's unnamed unix stream
// sockets whose peer is named, the peer and the listener of the peer's
// name; of own's TCP connections it opened (from a port it does not
// listen on) to a port a process of this machine listens on, the peer and
// that listener. The listener is what finds the upstream: its processes
// hold it for as long as they serve, while a peer lives for one request
// and may be closed, or not yet accepted, by the time the processes'
// descriptors are read (under load, a look that took the peers alone
// found none).
func upstreamPeers(own map[uint64]bool, tcp []tcpSock, us []unixSock) map[uint64]bool {
	peers := map[uint64]bool{}
	byIno := make(map[uint64]unixSock, len(us))
	listeners := map[string][]uint64{}
	for _, u := range us {
		byIno[u.ino] = u
		if u.listen && u.named {
			listeners[u.name] = append(listeners[u.name], u.ino)
		}
	}
	for _, u := range us {
		if !own[u.ino] || u.named || u.listen || u.peer == 0 {
			continue
		}
		if p, ok := byIno[u.peer]; ok && p.named && !p.listen {
			peers[u.peer] = true
			for _, l := range listeners[p.name] {
				if !own[l] {
					peers[l] = true
				}
			}
		}
	}
	ownPorts := map[uint16]bool{}
	listening := map[uint16]bool{}
	var lst []tcpSock
	byEnds := map[[2]netip.AddrPort]uint64{}
	for _, t := range tcp {
		switch t.state {
		case tcpListen:
			lst = append(lst, t)
			listening[t.src.Port()] = true
			if own[t.ino] {
				ownPorts[t.src.Port()] = true
			}
		case tcpEstablished:
			byEnds[[2]netip.AddrPort{t.src, t.dst}] = t.ino
		}
	}
	for _, t := range tcp {
		if t.state != tcpEstablished || !own[t.ino] || ownPorts[t.src.Port()] || !listening[t.dst.Port()] {
			continue
		}
		// The peer on this machine (its inode 0 while it waits in the
		// accept queue): then the listener it came from is the upstream's.
		ino, ok := byEnds[[2]netip.AddrPort{t.dst, t.src}]
		if !ok || own[ino] {
			continue
		}
		if ino != 0 {
			peers[ino] = true
		}
		for _, l := range lst {
			if l.ino != 0 && !own[l.ino] && l.src.Port() == t.dst.Port() &&
				(l.src.Addr() == t.dst.Addr() || l.src.Addr().IsUnspecified()) {
				peers[l.ino] = true
			}
		}
	}
	return peers
}

// upstreamFDs bounds the descriptors of one process that one look reads:
// the kernel takes microseconds for each (a lookup in /proc/PID/fd and a
// readlink, 6 us on a busy x86 box), and nginx under `ab -c5000` holds
// 5000 of them. A process with more is read in slices, the highest
// descriptors first (a server opens its upstream connections after its
// clients': they get the highest numbers), the next slice at the next
// look.
const upstreamFDs = 512

// pidSockets calls fn with the inode of every socket in the fd directory
// dir but standard input, output and error; of a process with more than
// upstreamFDs descriptors, those of slice pass (0, 1, ... wrapping round)
// only.
func pidSockets(dir string, pass int, fn func(ino uint64)) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return
	}
	if len(names) > upstreamFDs {
		fds := make([]int, 0, len(names))
		for _, n := range names {
			if fd, err := strconv.Atoi(n); err == nil {
				fds = append(fds, fd)
			}
		}
		slices.SortFunc(fds, func(a, b int) int { return b - a })
		names = names[:0]
		for i := range upstreamFDs {
			names = append(names, strconv.Itoa(fds[(pass*upstreamFDs+i)%len(fds)]))
		}
	}
	dfd := int(d.Fd())
	var buf [64]byte
	for _, n := range names {
		if n == "0" || n == "1" || n == "2" {
			continue
		}
		k, err := unix.Readlinkat(dfd, n, buf[:])
		if err != nil || k < 10 || string(buf[:8]) != "socket:[" || buf[k-1] != ']' {
			continue
		}
		if ino, ok := parseUint(buf[8 : k-1]); ok {
			fn(ino)
		}
	}
}

// socketHolders returns the processes below root holding one of the
// socket inodes, ascending, skipping those skip says; of a process with
// more than upstreamFDs descriptors, those of slice pass.
func socketHolders(root string, inodes map[uint64]bool, pass int, skip func(pid int) bool) []int {
	pids, err := listPIDs(root)
	if err != nil {
		return nil
	}
	var out []int
	for _, pid := range pids {
		if skip(pid) {
			continue
		}
		found := false
		pidSockets(filepath.Join(root, "proc", strconv.Itoa(pid), "fd"), pass, func(ino uint64) {
			found = found || inodes[ino]
		})
		if found {
			out = append(out, pid)
		}
	}
	return out
}
