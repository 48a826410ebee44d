package probe

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"

	"github.com/shirou/gopsutil/v4/common"
	"github.com/shirou/gopsutil/v4/cpu"
)

// Info is the device's system information, read once: what the agent
// publishes in its birth message and what a result's fingerprint carries.
// Fields the machine does not have are empty.
type Info struct {
	Board       string `json:"board,omitempty"` // proc/device-tree/model
	CPUModel    string `json:"cpu_model,omitempty"`
	Cores       int    `json:"cores"`
	MemoryBytes uint64 `json:"memory_bytes"`
	OS          string `json:"os,omitempty"`     // os-release PRETTY_NAME
	Kernel      string `json:"kernel,omitempty"` // proc/sys/kernel/osrelease
	Arch        string `json:"arch,omitempty"`   // uname machine (live machine only)
	GoArch      string `json:"goarch"`           // the binary's GOARCH
	Hostname    string `json:"hostname,omitempty"`
	BootID      string `json:"boot_id,omitempty"`
	Governor    string `json:"cpu_governor,omitempty"`
	MaxFreqMHz  int    `json:"cpu_max_mhz,omitempty"`
}

// SystemInfo reads the system information below root ("" or "/" for the
// live machine). The CPU model comes from gopsutil's cpuinfo parser (it maps
// ARM part numbers to names such as Cortex-A72), pointed at root.
func SystemInfo(root string) (*Info, error) {
	root = cleanRoot(root)
	r := newFileReader(root)
	defer r.close()
	read := func(rel string) string {
		b, err := r.read(rel, false)
		if err != nil {
			return ""
		}
		return string(trimSpace(b))
	}
	in := &Info{GoArch: runtime.GOARCH}

	b, err := r.read(meminfoRel, false)
	if err != nil {
		return nil, err
	}
	m, err := parseMeminfo(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r.path(meminfoRel), err)
	}
	in.MemoryBytes = m.total

	if b, err := r.read(modelRel, false); err == nil {
		in.Board = parseModel(b)
	}
	in.Kernel = read("proc/sys/kernel/osrelease")
	in.Hostname = read("proc/sys/kernel/hostname")
	in.BootID = read("proc/sys/kernel/random/boot_id")
	in.Governor = read("sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
	if khz, ok := parseUint([]byte(read("sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq"))); ok {
		in.MaxFreqMHz = int(khz / 1000)
	}
	for _, rel := range []string{"etc/os-release", "usr/lib/os-release"} {
		if b, err := r.read(rel, false); err == nil {
			in.OS = parseOSRelease(b)
			break
		}
	}
	if root == "/" {
		var u syscall.Utsname
		if syscall.Uname(&u) == nil {
			in.Arch = utsString(u.Machine[:])
		}
	}

	ctx := context.WithValue(context.Background(), common.EnvKey, common.EnvMap{
		common.HostProcEnvKey: filepath.Join(root, "proc"),
		common.HostSysEnvKey:  filepath.Join(root, "sys"),
	})
	cpus, err := cpu.InfoWithContext(ctx)
	if err != nil && !errors.Is(err, os.ErrNotExist) && len(cpus) == 0 {
		return in, fmt.Errorf("cpu info: %w", err)
	}
	in.Cores = len(cpus)
	for _, c := range cpus {
		if c.ModelName != "" && c.ModelName != "Undefined" {
			in.CPUModel = c.ModelName
			break
		}
	}
	if in.Cores == 0 && root == "/" {
		in.Cores = runtime.NumCPU()
	}
	return in, nil
}

// parseOSRelease returns PRETTY_NAME (or NAME) from an os-release file.
func parseOSRelease(b []byte) string {
	var name string
	for len(b) > 0 {
		var line []byte
		line, b = nextLine(b)
		k, v, ok := strings.Cut(string(line), "=")
		if !ok {
			continue
		}
		v = strings.Trim(strings.TrimSpace(v), `"'`)
		switch k {
		case "PRETTY_NAME":
			return v
		case "NAME":
			name = v
		}
	}
	return name
}

// utsString converts a NUL-terminated utsname field (int8 or uint8 by
// architecture).
func utsString[T int8 | uint8](f []T) string {
	b := make([]byte, 0, len(f))
	for _, c := range f {
		if c == 0 {
			break
		}
		b = append(b, byte(c))
	}
	return string(b)
}
