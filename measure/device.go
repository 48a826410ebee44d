package measure

import (
	"net"
	"net/netip"
	"runtime"

	"github.com/edgebench/edgebench/probe"
	"github.com/edgebench/edgebench/wire"
)

// DeviceInfo is the system info of the birth message, and the boot id,
// read below root; on the live machine (root "/") with its addresses.
func DeviceInfo(root, version string, labels map[string]string) (*wire.DeviceInfo, string) {
	di := &wire.DeviceInfo{AgentVersion: version, GoArch: runtime.GOARCH, Labels: labels}
	if root == "/" || root == "" {
		di.Addrs = Addrs()
	}
	info, err := probe.SystemInfo(root)
	if err != nil || info == nil {
		return di, ""
	}
	di.Hostname, di.Board, di.CPUModel, di.Cores = info.Hostname, info.Board, info.CPUModel, info.Cores
	di.MemKB = int64(info.MemoryBytes / 1024)
	di.OS, di.Kernel, di.Arch, di.Governor = info.OS, info.Kernel, info.Arch, info.Governor
	di.MaxFreqMHz = info.MaxFreqMHz
	return di, info.BootID
}

// FingerprintOf is the part of a result's fingerprint the device's info
// gives: agent version, kernel, OS, board, CPU, memory, governor.
func FingerprintOf(i *wire.DeviceInfo) wire.Fingerprint {
	if i == nil {
		return wire.Fingerprint{}
	}
	return wire.Fingerprint{AgentVersion: i.AgentVersion, Kernel: i.Kernel, OS: i.OS, Arch: i.Arch, Board: i.Board,
		CPUModel: i.CPUModel, Cores: i.Cores, MemKB: i.MemKB, Governor: i.Governor, MaxFreqMHz: i.MaxFreqMHz}
}

// maxAddrs bounds the addresses a birth carries (the wire's limit).
const maxAddrs = 16

// Addrs are this machine's IP addresses a loader on another machine can
// reach it by: those of its interfaces, without loopback, link-local,
// multicast or unspecified ones, at most maxAddrs.
func Addrs() []string {
	ias, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	var out []string
	seen := map[netip.Addr]bool{}
	for _, ia := range ias {
		n, ok := ia.(*net.IPNet)
		if !ok {
			continue
		}
		a, ok := netip.AddrFromSlice(n.IP)
		if !ok {
			continue
		}
		a = a.Unmap()
		if a.IsLoopback() || a.IsLinkLocalUnicast() || a.IsMulticast() || a.IsUnspecified() || seen[a] {
			continue
		}
		seen[a] = true
		out = append(out, a.String())
		if len(out) == maxAddrs {
			break
		}
	}
	return out
}
