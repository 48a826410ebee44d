package probe

import (
	"os"
	"slices"
)

// maxDepth bounds every walk up the process tree.
const maxDepth = 64

// serverWatches returns a watch for each server listening on TCP port below
// root. A server is the process holding the listening socket, walked up to
// its parent while the parent runs the same program (nginx's workers hold
// the socket, and so does their master), watched as a tree: that process and
// all its descendants, found again at every rescan (workers restarted by a
// reload count, another nginx instance on the machine does not).
//
// self (0 for none) is the process the run lives in: it is never part of a
// server. A holder that is self is left out; a server that is an ancestor
// of self (a shell's parent listening on the port) is watched by its PID
// alone, as is PID 1, whose descendants are the whole machine. When a
// holder descends from another (systemd passed the socket to the service it
// started), the descendant is the server.
func serverWatches(root string, port, self int) []Watch {
	holders, err := ListenerPIDs(root, port)
	if err != nil {
		return nil
	}
	pt := &procTable{r: newFileReader(cleanRoot(root)), m: map[int]procInfo{}}
	mine := map[int]bool{}
	for pid, i := self, 0; pid > 0 && i < maxDepth && !mine[pid]; pid, i = pt.get(pid).ppid, i+1 {
		mine[pid] = true
	}
	var tops []int
	for _, h := range holders {
		if h == self {
			continue
		}
		top := h
		for range maxDepth {
			pp := pt.get(top).ppid
			if pp <= 1 || mine[pp] || mine[top] || !pt.sameProgram(pp, top) {
				break
			}
			top = pp
		}
		if !slices.Contains(tops, top) {
			tops = append(tops, top)
		}
	}
	var ws []Watch
	for _, t := range tops {
		under := false
		for _, u := range tops {
			under = under || (u != t && pt.descends(u, t))
		}
		if !under {
			ws = append(ws, Watch{PID: t, Tree: t != 1 && !mine[t]})
		}
	}
	return ws
}

// procInfo is what serverWatches reads of a process.
type procInfo struct {
	ppid      int
	comm, exe string // exe is "" when the link is not readable (another user's process)
}

// procTable reads processes' parents and programs once each.
type procTable struct {
	r *fileReader
	m map[int]procInfo
}

func (pt *procTable) get(pid int) procInfo {
	if in, ok := pt.m[pid]; ok {
		return in
	}
	var in procInfo
	if b, err := pt.r.read(pidRel(pid, "stat"), false); err == nil {
		if ps, err := parsePidStat(b); err == nil {
			in.ppid, in.comm = ps.ppid, string(ps.comm)
			in.exe, _ = os.Readlink(pt.r.path(pidRel(pid, "exe")))
		}
	}
	pt.m[pid] = in
	return in
}

// sameProgram compares two processes' executables, or their command names
// when an executable link cannot be read.
func (pt *procTable) sameProgram(a, b int) bool {
	x, y := pt.get(a), pt.get(b)
	if x.exe != "" && y.exe != "" {
		return x.exe == y.exe
	}
	return x.comm != "" && x.comm == y.comm
}

// descends reports whether pid is a descendant of anc.
func (pt *procTable) descends(pid, anc int) bool {
	for range maxDepth {
		pid = pt.get(pid).ppid
		if pid == anc {
			return true
		}
		if pid <= 0 {
			return false
		}
	}
	return false
}

// readPPID returns the parent of pid.
func readPPID(r *fileReader, pid int) (int, bool) {
	b, err := r.read(pidRel(pid, "stat"), false)
	if err != nil {
		return 0, false
	}
	ps, err := parsePidStat(b)
	return ps.ppid, err == nil
}
