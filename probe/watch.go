package probe

import (
	"os"
	"slices"
	"strconv"

	"github.com/edgebench/edgebench/probe/machine"
)

// Watch names a process to report: by Name every process of that command
// name is summed (all nginx workers), by PID just that one, by PID with Tree
// that process and its descendants (one nginx instance: its master and
// workers). Set Name or PID.
type Watch struct {
	Name string `json:"name,omitempty"`
	PID  int    `json:"pid,omitempty"`
	Tree bool   `json:"tree,omitempty"`
	// Role is what the processes are to a load test (machine.RoleServer,
	// RoleUpstream, RoleGenerator), carried to their row; "": watched
	// for themselves.
	Role string `json:"role,omitempty"`
	// Of is an upstream's server, the name of the process that hands it
	// work.
	Of string `json:"of,omitempty"`
	// Upstreams asks the probe to find, while it samples, the processes
	// these hand their work to over connected sockets (see upstreams)
	// and to watch each as a row of its own, of role upstream.
	Upstreams bool `json:"upstreams,omitempty"`
}

// String is the PID (a tree's root) or the name.
func (w Watch) String() string {
	if w.PID > 0 {
		return strconv.Itoa(w.PID)
	}
	return w.Name
}

// ParseWatch turns "1234" into a PID watch and anything else into a name.
func ParseWatch(s string) Watch {
	if pid, err := strconv.Atoi(s); err == nil && pid > 0 {
		return Watch{PID: pid}
	}
	return Watch{Name: s}
}

// DefaultWatches is what a run watches when it is not told:
// RunWatches without a --watch.
func DefaultWatches(root string, port int) []Watch { return RunWatches(root, port, nil) }

// RunWatches is what a load test against TCP port (0: unknown) watches:
//   - the server listening on the port, as a tree (see serverWatches), of
//     role server, whose upstreams the probe looks for while it samples
//     (Watch.Upstreams);
//   - the processes user names (--watch), of role server too: the user
//     says they serve the test (php-fpm behind nginx). A name that is the
//     listening server's replaces its tree, and looks for its upstreams;
//   - this process by its PID, of role generator, whatever user says.
//
// No process counts twice: a user's PID of one of the server's processes,
// or a name of this program (an agent beside the run), is shown with no
// role, and this process's PID is its own row's.
//
// On a fixture root (not "/") there is no own process.
func RunWatches(root string, port int, user []Watch) []Watch {
	self := 0
	if cleanRoot(root) == "/" {
		self = os.Getpid()
	}
	return runWatches(root, port, user, self)
}

func runWatches(root string, port int, user []Watch, self int) []Watch {
	pt := &procTable{r: newFileReader(cleanRoot(root)), m: map[int]procInfo{}}
	var servers []Watch
	if port > 0 {
		servers = serverWatches(root, port, self)
	}
	named := func(u Watch, pid int) bool {
		comm := pt.get(pid).comm
		return u.Name != "" && comm != "" && (&watchState{w: u}).matches([]byte(comm))
	}
	var ws []Watch
	var kept []int // the tops of the servers no user's name replaces
	for _, s := range servers {
		if !slices.ContainsFunc(user, func(u Watch) bool { return named(u, s.PID) }) {
			s.Role, s.Upstreams = machine.RoleServer, true
			ws = append(ws, s)
			kept = append(kept, s.PID)
		}
	}
	for _, u := range user {
		u.Role = machine.RoleServer
		u.Upstreams = slices.ContainsFunc(servers, func(s Watch) bool { return named(u, s.PID) })
		switch {
		case self > 0 && u.PID == self:
			continue
		case self > 0 && named(u, self),
			u.PID > 0 && slices.ContainsFunc(kept, func(top int) bool { return u.PID == top || pt.descends(u.PID, top) }):
			u.Role, u.Upstreams = "", false
		}
		ws = append(ws, u)
	}
	if self > 0 {
		ws = append(ws, Watch{PID: self, Role: machine.RoleGenerator})
	}
	return ws
}

// ServerWatches is what listens on TCP port below root, as a tree (see
// serverWatches), of role server, with the upstreams it hands its work to
// (Watch.Upstreams): the server of a watch on a load's target, which may
// be the current process (the built-in target it serves).
func ServerWatches(root string, port int) []Watch {
	ws := serverWatches(root, port, 0)
	for i := range ws {
		ws[i].Role, ws[i].Upstreams = machine.RoleServer, true
	}
	return ws
}

// rescanEvery is how many samples pass between two scans of /proc for new
// processes of a watched name or tree; between scans the known PIDs are re-read
// through their open files, so the 1-second loop does not walk /proc.
const rescanEvery = 10

// commLen is the kernel's TASK_COMM_LEN - 1: longer names are truncated.
const commLen = 15

type watchState struct {
	w        Watch
	name     string
	pids     map[int]*pidState
	lastScan int
	scanned  bool
	scans    int
	// cpus is the last sample's allowed cores and their list, reused
	// while the set does not change.
	cpus     cpuSet
	cpusList []int
	// rejected holds the PIDs whose comm did not match (or, for a tree,
	// whose parent was not in it), and the scan that read it: they are read
	// again only every recheckEvery scans (a process may exec into the
	// watched name), new PIDs at every scan.
	rejected map[int]int
	// With Watch.Upstreams: the upstream rows found from this one, the
	// sample that last looked for them (upstreamDue), and how many looks
	// there were.
	upFound, upTried, upPasses int
}

// recheckEvery is how many scans pass before a process whose name did not
// match is read again.
const recheckEvery = 6

type pidState struct {
	statRel, ioRel string
	// The counters at the last sample and at the one before it, which a
	// merged sample measures from.
	last, older pidCounters
	// cpus are the cores the process may run on, read once (cpusRead)
	// when it is first sampled; cpusOK false: unknown.
	cpus             cpuSet
	cpusRead, cpusOK bool
}

// pidCounters is what a process's rates are derived from.
type pidCounters struct {
	ticks           uint64
	io              pidIO
	hasTicks, hasIO bool
}

func newWatchState(w Watch) *watchState {
	ws := &watchState{w: w, name: w.Name, pids: map[int]*pidState{}}
	if w.PID > 0 {
		ws.pids[w.PID] = newPidState(w.PID)
	}
	return ws
}

func newPidState(pid int) *pidState {
	return &pidState{statRel: pidRel(pid, "stat"), ioRel: pidRel(pid, "io")}
}

// release closes the watched processes' files and forgets their counters.
func (ws *watchState) release(r *fileReader) {
	for pid, st := range ws.pids {
		r.forget(st.statRel)
		r.forget(st.ioRel)
		if pid == ws.w.PID {
			*st = *newPidState(pid)
		} else {
			delete(ws.pids, pid)
		}
	}
	ws.scanned = false
	ws.rejected = nil
}

// closeFiles closes the watched processes' files, keeping their counters.
func (ws *watchState) closeFiles(r *fileReader) {
	for _, st := range ws.pids {
		r.forget(st.statRel)
		r.forget(st.ioRel)
	}
}

// matches compares a comm to the watched name, allowing for truncation.
func (ws *watchState) matches(comm []byte) bool {
	n := ws.w.Name
	if len(n) > commLen {
		n = n[:commLen]
	}
	return string(comm) == n
}

// scan adds the processes not yet known: of the watched name, or children
// of the tree's processes.
func (ws *watchState) scan(p *Probe) {
	ws.scanned = true
	ws.lastScan = p.nsample
	ws.scans++
	pids, err := listPIDs(p.r.root)
	if err != nil {
		return
	}
	rejected := make(map[int]int, len(ws.rejected))
	var orphans [][2]int // tree: PID and parent of the processes not yet placed
	for _, pid := range pids {
		if _, ok := ws.pids[pid]; ok {
			continue
		}
		if at, ok := ws.rejected[pid]; ok && ws.scans-at < recheckEvery {
			rejected[pid] = at
			continue
		}
		if ws.w.Tree {
			if ppid, ok := readPPID(p.r, pid); ok {
				orphans = append(orphans, [2]int{pid, ppid})
			} else {
				rejected[pid] = ws.scans
			}
			continue
		}
		b, err := p.r.read(pidRel(pid, "comm"), false)
		if err != nil || !ws.matches(trimSpace(b)) {
			rejected[pid] = ws.scans
			continue
		}
		ws.pids[pid] = newPidState(pid)
	}
	// A child may be listed before its parent joins the tree (PIDs wrap):
	// repeat until no process joins.
	for joined := true; joined; {
		joined = false
		for i, o := range orphans {
			if _, ok := ws.pids[o[1]]; ok && o[0] != 0 {
				ws.pids[o[0]] = newPidState(o[0])
				orphans[i][0], joined = 0, true
			}
		}
	}
	for _, o := range orphans {
		if o[0] != 0 {
			rejected[o[0]] = ws.scans
		}
	}
	ws.rejected = rejected
}

// cpuList is s as a list, the same slice as the last sample's while the
// set does not change.
func (ws *watchState) cpuList(s *cpuSet) []int {
	if s.empty() {
		return nil
	}
	if ws.cpusList == nil || ws.cpus != *s {
		ws.cpus, ws.cpusList = *s, s.list()
	}
	return ws.cpusList
}

// sample reads the watched processes and sums them: rates over dt seconds
// since the last sample, or since the one before it with merge; the CPU sum
// is at most maxCPU %.
func (ws *watchState) sample(p *Probe, dt float64, merge bool, maxCPU float64, a *arena) machine.Proc {
	if (ws.w.PID == 0 || ws.w.Tree) && (!ws.scanned || p.nsample-ws.lastScan >= rescanEvery) {
		ws.scan(p)
	}
	out := machine.Proc{Name: ws.name, PID: ws.w.PID, Role: ws.w.Role, Of: ws.w.Of}
	var ticks, rss, rd, wr uint64
	var haveCPU, haveIO bool
	// The cores of the processes that ran over the slice, and of all of
	// them; unknown when one process's are.
	var ran, all cpuSet
	ranOK, allOK, anyRan := true, true, false
	// Map order does not matter: everything is summed.
	for pid, st := range ws.pids {
		b, err := p.r.read(st.statRel, true)
		var ps pidStat
		if err == nil {
			ps, err = parsePidStat(b)
		}
		if err != nil {
			p.r.forget(st.statRel)
			p.r.forget(st.ioRel)
			if pid == ws.w.PID {
				*st = *newPidState(pid) // gone: reported with Count 0
			} else {
				delete(ws.pids, pid)
			}
			continue
		}
		if ws.name == "" && pid == ws.w.PID {
			ws.name = string(ps.comm)
			out.Name = ws.name
		}
		out.Count++
		rss += ps.rssPages * p.pageSize
		from := &st.last
		if merge {
			from = &st.older
		}
		now := pidCounters{ticks: ps.ticks, hasTicks: true}
		if !st.cpusRead {
			st.cpus, st.cpusOK = p.readCPUs(pid)
			st.cpusRead = true
		}
		allOK = allOK && st.cpusOK
		all.or(&st.cpus)
		if from.hasTicks && now.ticks >= from.ticks && dt > 0 {
			ticks += now.ticks - from.ticks
			haveCPU = true
			if now.ticks > from.ticks {
				anyRan = true
				ranOK = ranOK && st.cpusOK
				ran.or(&st.cpus)
			}
		}
		b, err = p.r.read(st.ioRel, true)
		if err == nil {
			now.io, err = parsePidIO(b)
			now.hasIO = err == nil
		}
		if now.hasIO && from.hasIO && now.io.read >= from.io.read && now.io.write >= from.io.write && dt > 0 {
			rd += now.io.read - from.io.read
			wr += now.io.write - from.io.write
			haveIO = true
		}
		if !merge {
			st.older = st.last
		}
		st.last = now
	}
	if out.Count > 0 {
		out.RSS = a.u(rss)
		switch {
		case anyRan && ranOK:
			out.CPUs = ws.cpuList(&ran)
		case !anyRan && allOK:
			out.CPUs = ws.cpuList(&all)
		}
	}
	if haveCPU {
		out.CPU = a.f(min(float64(ticks)/userHZ/dt*100, maxCPU))
	}
	if haveIO {
		out.ReadBps = a.f(float64(rd) / dt)
		out.WriteBps = a.f(float64(wr) / dt)
	}
	return out
}
