package probe

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
)

// ErrNoListener says that no process listening on the port could be found
// (none listens, or its /proc/PID/fd is not readable by this user).
var ErrNoListener = errors.New("no listening process found")

const tcpListen = 0x0A

// parseNetTCP parses /proc/net/tcp or /proc/net/tcp6 and calls fn with the
// local port and socket inode of every listening socket.
func parseNetTCP(b []byte, fn func(port int, inode uint64)) error {
	var f [12][]byte
	_, b = nextLine(b) // header
	for len(b) > 0 {
		var line []byte
		line, b = nextLine(b)
		fs := splitFields(line, f[:0])
		if len(fs) == 0 {
			continue
		}
		if len(fs) < 10 {
			return fmt.Errorf("net/tcp: %d fields in %q", len(fs), line)
		}
		colon := bytes.LastIndexByte(fs[1], ':')
		if colon < 0 {
			return fmt.Errorf("net/tcp: bad local address %q", fs[1])
		}
		port, err := strconv.ParseUint(string(fs[1][colon+1:]), 16, 16)
		if err != nil {
			return fmt.Errorf("net/tcp: bad port in %q", fs[1])
		}
		st, err := strconv.ParseUint(string(fs[3]), 16, 8)
		if err != nil {
			return fmt.Errorf("net/tcp: bad state %q", fs[3])
		}
		inode, ok := parseUint(fs[9])
		if !ok {
			return fmt.Errorf("net/tcp: bad inode %q", fs[9])
		}
		if st == tcpListen && inode != 0 {
			fn(int(port), inode)
		}
	}
	return nil
}

// ListenerPID returns the process listening on TCP port (IPv4 or IPv6) below
// root ("" or "/" for the live machine): the listening sockets' inodes
// matched to the proc/PID/fd links. When several
// processes share the socket (nginx's master and workers) it returns the
// lowest PID.
func ListenerPID(root string, port int) (int, error) {
	pids, err := ListenerPIDs(root, port)
	if err != nil {
		return 0, err
	}
	return pids[0], nil
}

// ListenerPIDs is ListenerPID returning every process that holds a listening
// socket on port, in ascending order. On the live machine the sockets are
// asked of the kernel (listenInodes); below another root, or where the
// kernel cannot say, they are read from proc/net/tcp and tcp6.
func ListenerPIDs(root string, port int) ([]int, error) {
	root = cleanRoot(root)
	var inodes map[uint64]bool
	var err error
	if root == "/" {
		inodes, err = listenInodes(port)
	}
	if inodes == nil || err != nil {
		if inodes, err = procListenInodes(root, port); err != nil {
			return nil, err
		}
	}
	if len(inodes) == 0 {
		return nil, fmt.Errorf("port %d: %w", port, ErrNoListener)
	}
	pids, err := listPIDs(root)
	if err != nil {
		return nil, err
	}
	var out []int
	buf := make([]byte, 64)
	for _, pid := range pids {
		dir := filepath.Join(root, "proc", strconv.Itoa(pid), "fd")
		if pidHoldsSocket(dir, inodes, buf) {
			out = append(out, pid)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("port %d: %w", port, ErrNoListener)
	}
	sort.Ints(out)
	return out, nil
}

// procListenInodes reads the inodes of the listening sockets on port from
// proc/net/tcp and tcp6 below root.
func procListenInodes(root string, port int) (map[uint64]bool, error) {
	inodes := map[uint64]bool{}
	var found bool
	for _, name := range []string{"proc/net/tcp", "proc/net/tcp6"} {
		b, err := os.ReadFile(filepath.Join(root, name))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", filepath.Join(root, name), err)
		}
		found = true
		if err := parseNetTCP(b, func(p int, inode uint64) {
			if p == port {
				inodes[inode] = true
			}
		}); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(root, name), err)
		}
	}
	if !found {
		return nil, fmt.Errorf("read %s: %w", filepath.Join(root, "proc/net/tcp"), os.ErrNotExist)
	}
	return inodes, nil
}

// pidHoldsSocket reports whether a link in the fd directory points to one of
// the socket inodes ("socket:[21345]"). Unreadable directories (other users'
// processes) count as no.
func pidHoldsSocket(dir string, inodes map[uint64]bool, buf []byte) bool {
	d, err := os.Open(dir)
	if err != nil {
		return false
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return false
	}
	for _, n := range names {
		l, err := os.Readlink(filepath.Join(dir, n))
		if err != nil || len(l) < 10 || l[:8] != "socket:[" || l[len(l)-1] != ']' {
			continue
		}
		ino, ok := parseUint(append(buf[:0], l[8:len(l)-1]...))
		if ok && inodes[ino] {
			return true
		}
	}
	return false
}

// listPIDs returns the numeric entries of root/proc, ascending.
func listPIDs(root string) ([]int, error) {
	d, err := os.Open(filepath.Join(root, "proc"))
	if err != nil {
		return nil, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", filepath.Join(root, "proc"), err)
	}
	pids := make([]int, 0, len(names))
	for _, n := range names {
		if n == "" || n[0] < '0' || n[0] > '9' {
			continue
		}
		if pid, err := strconv.Atoi(n); err == nil && pid > 0 {
			pids = append(pids, pid)
		}
	}
	sort.Ints(pids)
	return pids, nil
}

// cleanRoot turns "" into "/".
func cleanRoot(root string) string {
	if root == "" {
		return "/"
	}
	return root
}
