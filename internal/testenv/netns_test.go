package testenv

import (
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestNetns: a namespace with nginx in it, reached from the test's side
// through its veth, its egress limited to 100 Mb/s by tc tbf; everything
// it held is gone once its test ended, and what a killed test process
// left is removed by the next.
func TestNetns(t *testing.T) {
	var name, hostIf string
	t.Run("inside", func(t *testing.T) {
		host, ns := FreeSubnet(t)
		n := NewNetns(t, NetnsConfig{HostAddr: host, Addr: ns, EgressRate: "100mbit"})
		name, hostIf = n.Name, n.HostIf
		srv := NginxWith(t, NginxConfig{Netns: n, Files: map[string]int{"big": 8 << 20}})
		if want := ns.Addr().String() + ":8080"; srv.Addr != want {
			t.Fatalf("nginx on %s, want %s", srv.Addr, want)
		}
		// The master is in the namespace, and the namespace's /sys is its own.
		if pids := n.PIDs(); !containsInt(pids, srv.Master) {
			t.Errorf("nginx master %d not among the namespace's processes %v", srv.Master, pids)
		}
		out, err := n.Command("cat", "/sys/class/net/"+n.NsIf+"/speed").CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) == "" {
			t.Errorf("the namespace's sysfs: %v %q", err, out)
		}
		// 8 MiB at 100 Mb/s take 0.67 s at least; unlimited a veth
		// carries them in a few milliseconds.
		start := time.Now()
		resp, err := (&http.Client{Timeout: 20 * time.Second}).Get("http://" + srv.Addr + "/big")
		if err != nil {
			t.Fatal(err)
		}
		n8, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		d := time.Since(start)
		if err != nil || n8 != 8<<20 {
			t.Fatalf("read %d bytes: %v", n8, err)
		}
		mbps := float64(n8) * 8 / d.Seconds() / 1e6
		t.Logf("8 MiB in %v: %.1f Mb/s", d, mbps)
		if mbps > 110 {
			t.Errorf("%.1f Mb/s through a 100 Mb/s limit", mbps)
		}
	})
	if out, _ := exec.Command("ip", "netns", "list").Output(); name != "" && strings.Contains(string(out), name) {
		t.Errorf("namespace %s still there after its test:\n%s", name, out)
	}
	if name != "" && exec.Command("ip", "link", "show", hostIf).Run() == nil {
		t.Errorf("link %s still there after its test", hostIf)
	}

	// What a test process killed by a timeout left: a namespace and a
	// link named for a PID that is gone.
	dead := 4194303 // above any PID this kernel hands out by default
	if b, err := exec.Command("cat", "/proc/sys/kernel/pid_max").Output(); err == nil {
		if m, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && m < dead {
			dead = m + 1
		}
	}
	id := netnsPrefix + strconv.FormatInt(int64(dead), 36)
	if out, err := exec.Command("ip", "netns", "add", id+"-1").CombinedOutput(); err != nil {
		t.Skipf("ip netns add: %v %s", err, out)
	}
	if out, err := exec.Command("ip", "link", "add", id+"h1", "type", "veth", "peer", "name", id+"n1").CombinedOutput(); err != nil {
		t.Fatalf("ip link add: %v %s", err, out)
	}
	removeStaleNetns(t)
	out, _ := exec.Command("ip", "netns", "list").Output()
	if strings.Contains(string(out), id) {
		t.Errorf("stale namespace %s-1 left:\n%s", id, out)
	}
	if exec.Command("ip", "link", "show", id+"h1").Run() == nil {
		t.Errorf("stale link %sh1 left", id)
		exec.Command("ip", "link", "del", id+"h1").Run()
	}
	if staleName(fmt.Sprintf("%s%sh1", netnsPrefix, strconv.FormatInt(int64(1), 36))) {
		t.Error("PID 1's name taken for stale")
	}
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
