package probe

import (
	"runtime"
	"testing"
)

func TestSystemInfoFixtures(t *testing.T) {
	pi, err := SystemInfo("testdata/pi4/t0")
	if err != nil {
		t.Fatal(err)
	}
	want := Info{Board: "Raspberry Pi 4 Model B Rev 1.4", CPUModel: "Cortex-A72", Cores: 4, MemoryBytes: 3884356 * 1024,
		OS: "Debian GNU/Linux 12 (bookworm)", Kernel: "6.6.31+rpt-rpi-v8", GoArch: runtime.GOARCH, Hostname: "pi4-lab-01",
		BootID: "3b1f5c2e-8a0d-4f6b-9c1e-2d7a4b5c6e8f", Governor: "ondemand", MaxFreqMHz: 1500}
	if *pi != want {
		t.Errorf("pi4 info\n got %+v\nwant %+v", *pi, want)
	}
	am, err := SystemInfo("testdata/amd64/t0")
	if err != nil {
		t.Fatal(err)
	}
	if am.Board != "" || am.CPUModel != "Intel(R) Core(TM) i5-8500T CPU @ 2.10GHz" || am.Cores != 4 || am.Governor != "powersave" || am.Arch != "" {
		t.Errorf("amd64 info %+v", *am)
	}
	if _, err := SystemInfo(t.TempDir()); err == nil {
		t.Error("no error for an empty root")
	}
}

func TestSystemInfoLive(t *testing.T) {
	in, err := SystemInfo("/")
	if err != nil {
		t.Fatal(err)
	}
	if in.Cores < 1 || in.MemoryBytes == 0 || in.Kernel == "" || in.Arch == "" || len(in.BootID) != 36 {
		t.Errorf("live info %+v", *in)
	}
}
