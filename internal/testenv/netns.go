package testenv

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// This file is a second machine for the tests of two-machine runs: a
// network namespace joined to the test's own by a veth pair, with the
// 10.x addresses the test gives it, an optional egress limit (tc tbf:
// this kernel has no netem) and the processes the test starts in it.
// Traffic only ever goes to those addresses.

// netnsPrefix starts the names of the namespaces and links the tests
// create: ebt<pid in base 36>, so that what a killed test process left
// can be told from what a live one holds.
const netnsPrefix = "ebt"

// netnsCmdTimeout bounds every ip and tc command.
const netnsCmdTimeout = 10 * time.Second

// netnsSeq numbers the namespaces of this test process.
var netnsSeq struct {
	sync.Mutex
	n int
}

// Netns is a network namespace a test created, joined to the host's by a
// veth pair: HostIf with HostAddr on the host's side, NsIf with Addr
// inside, and loopback up inside. It is removed when the test ends, with
// the processes still running in it, whether the test passed or not.
type Netns struct {
	Name     string     // for ip netns exec
	HostIf   string     // the veth end in the test's namespace
	NsIf     string     // the end inside
	HostAddr netip.Addr // the test's side, on HostIf
	Addr     netip.Addr // the namespace's, on NsIf
}

// NetnsConfig is the namespace NewNetns creates: the addresses of the two
// ends (10.x, in one /24 or smaller, that the test assigns: FreeSubnet
// finds one no route of this machine uses) and, optionally, a limit on
// what leaves the namespace.
type NetnsConfig struct {
	HostAddr, Addr netip.Prefix
	// EgressRate, when set, is a tc rate ("100mbit") that limits what
	// the namespace sends, by a token bucket on NsIf (Limit).
	EgressRate string
}

// NewNetns creates a network namespace as c says, removed when the test
// ends. Without root, ip or tc, or where namespaces cannot be created (a
// container without CAP_SYS_ADMIN), the test is skipped with a loud
// message, and fails in CI. The addresses must be 10.x ones in the same
// prefix: the tests never reach any other.
func NewNetns(t testing.TB, c NetnsConfig) *Netns {
	t.Helper()
	if os.Geteuid() != 0 {
		Missing(t, "network namespaces need root", "run the tests as root")
	}
	Tool(t, "ip")
	Tool(t, "tc")
	if !c.HostAddr.Addr().Is4() || c.HostAddr.Addr().As4()[0] != 10 || c.Addr.Addr().As4()[0] != 10 ||
		c.HostAddr.Masked() != c.Addr.Masked() || c.HostAddr.Addr() == c.Addr.Addr() || c.HostAddr.Bits() < 16 {
		t.Fatalf("netns: addresses %v and %v: want two 10.x addresses of one prefix of /16 or smaller", c.HostAddr, c.Addr)
	}
	removeStaleNetns(t)
	netnsSeq.Lock()
	netnsSeq.n++
	seq := netnsSeq.n
	netnsSeq.Unlock()
	id := netnsPrefix + strconv.FormatInt(int64(os.Getpid()), 36)
	n := &Netns{Name: fmt.Sprintf("%s-%d", id, seq), HostIf: fmt.Sprintf("%sh%d", id, seq), NsIf: fmt.Sprintf("%sn%d", id, seq),
		HostAddr: c.HostAddr.Addr(), Addr: c.Addr.Addr()}
	t.Cleanup(func() { n.remove(t) })
	steps := [][]string{
		{"ip", "netns", "add", n.Name},
		{"ip", "link", "add", n.HostIf, "type", "veth", "peer", "name", n.NsIf},
		{"ip", "link", "set", n.NsIf, "netns", n.Name},
		{"ip", "addr", "add", c.HostAddr.String(), "dev", n.HostIf},
		{"ip", "link", "set", n.HostIf, "up"},
		{"ip", "-n", n.Name, "addr", "add", c.Addr.String(), "dev", n.NsIf},
		{"ip", "-n", n.Name, "link", "set", n.NsIf, "up"},
		{"ip", "-n", n.Name, "link", "set", "lo", "up"},
	}
	for i, s := range steps {
		if out, err := netnsRun(s...); err != nil {
			if i == 0 {
				Missing(t, fmt.Sprintf("network namespaces: %s: %v: %s", strings.Join(s, " "), err, out), "run the tests as root on a host that allows ip netns")
			}
			t.Fatalf("netns: %s: %v: %s", strings.Join(s, " "), err, out)
		}
	}
	if c.EgressRate != "" {
		n.Limit(t, c.EgressRate)
	}
	return n
}

// Limit limits what the namespace sends to rate ("100mbit") with a token
// bucket filter on NsIf (tc tbf; a queue of 50 ms at that rate, then
// drops), replacing any limit before.
func (n *Netns) Limit(t testing.TB, rate string) {
	t.Helper()
	if out, err := netnsRun("ip", "netns", "exec", n.Name, "tc", "qdisc", "replace", "dev", n.NsIf, "root",
		"tbf", "rate", rate, "burst", "64kb", "latency", "50ms"); err != nil {
		t.Fatalf("netns %s: tc tbf rate %s: %v: %s", n.Name, rate, err, out)
	}
}

// Command is a command that runs name inside the namespace (ip netns exec
// execs it: its process is the command's), with a view of /sys that is the
// namespace's.
func (n *Netns) Command(name string, args ...string) *exec.Cmd {
	return exec.Command("ip", append([]string{"netns", "exec", n.Name, name}, args...)...)
}

// PIDs lists the processes running in the namespace.
func (n *Netns) PIDs() []int {
	out, _ := netnsRun("ip", "netns", "pids", n.Name)
	var pids []int
	for _, f := range strings.Fields(out) {
		if p, err := strconv.Atoi(f); err == nil && p > 0 {
			pids = append(pids, p)
		}
	}
	return pids
}

// remove kills what still runs in the namespace and deletes it, and the
// veth pair with it.
func (n *Netns) remove(t testing.TB) {
	killNetns(n.Name)
	if out, err := netnsRun("ip", "netns", "del", n.Name); err != nil {
		t.Errorf("netns: ip netns del %s: %v: %s", n.Name, err, out)
	}
	netnsRun("ip", "link", "del", n.HostIf) // gone with its peer already, unless that never moved in
}

// killNetns kills the processes of namespace name and waits a little for
// them to go.
func killNetns(name string) {
	out, _ := netnsRun("ip", "netns", "pids", name)
	for _, f := range strings.Fields(out) {
		if p, err := strconv.Atoi(f); err == nil && p > 1 {
			syscall.Kill(p, syscall.SIGKILL)
		}
	}
	for range 50 {
		if out, _ := netnsRun("ip", "netns", "pids", name); strings.TrimSpace(out) == "" {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// removeStaleNetns removes the namespaces and links that test processes
// which are gone left behind (killed by a timeout before their cleanup).
func removeStaleNetns(t testing.TB) {
	out, _ := netnsRun("ip", "netns", "list")
	for line := range strings.Lines(out) {
		name, _, _ := strings.Cut(strings.TrimSpace(line), " ")
		if staleName(name) {
			t.Logf("netns: removing %s, left by a test process that is gone", name)
			killNetns(name)
			netnsRun("ip", "netns", "del", name)
		}
	}
	out, _ = netnsRun("ip", "-o", "link", "show")
	for line := range strings.Lines(out) {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimSuffix(f[1], ":"), "@")
		if staleName(name) {
			netnsRun("ip", "link", "del", name)
		}
	}
}

// staleName reports whether name is one of ours whose test process is
// gone.
func staleName(name string) bool {
	rest, ok := strings.CutPrefix(name, netnsPrefix)
	if !ok {
		return false
	}
	end := strings.IndexAny(rest, "-hn")
	if end <= 0 {
		return false
	}
	pid, err := strconv.ParseInt(rest[:end], 36, 32)
	if err != nil || pid <= 0 {
		return false
	}
	return syscall.Kill(int(pid), 0) == syscall.ESRCH
}

// netnsRun runs an ip or tc command, bounded by netnsCmdTimeout, and
// returns its output.
func netnsRun(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), netnsCmdTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, args[0], args[1:]...).CombinedOutput()
	return string(out), err
}

// FreeSubnet returns the two addresses of a /24 in 10.200.0.0/13 that
// no address or route of this machine uses: .1 for the test's side and .2
// for a namespace's.
func FreeSubnet(t testing.TB) (host, ns netip.Prefix) {
	t.Helper()
	out, err := netnsRun("ip", "-4", "route", "show", "table", "all")
	if err != nil {
		Missing(t, "ip route: "+err.Error(), "apt-get install iproute2")
	}
	addrs, _ := netnsRun("ip", "-4", "-o", "addr", "show")
	for range 100 {
		b, c := 200+rand.IntN(8), rand.IntN(256)
		net := fmt.Sprintf("10.%d.%d.", b, c)
		if !strings.Contains(out, net) && !strings.Contains(addrs, net) {
			return netip.MustParsePrefix(net + "1/24"), netip.MustParsePrefix(net + "2/24")
		}
	}
	t.Fatal("netns: no free /24 in 10.200.0.0/13")
	return
}
