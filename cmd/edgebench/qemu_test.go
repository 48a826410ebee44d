package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgebench/edgebench/internal/testenv"
)

// TestArmBuildsRunUnderQemu cross-builds the device binary for the boards
// it ships to and runs each under qemu-user: its version, and a one-second
// load test against the built-in target on loopback.
func TestArmBuildsRunUnderQemu(t *testing.T) {
	if testing.Short() {
		t.Skip("cross builds: not in -short")
	}
	base := startTarget(t)
	for _, tc := range []struct{ name, goarch, goarm, qemu string }{
		{"armv6", "arm", "6", "qemu-arm-static"},
		{"armv7", "arm", "7", "qemu-arm-static"},
		{"arm64", "arm64", "", "qemu-aarch64-static"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			qemu := lookTool(t, tc.qemu)
			bin := filepath.Join(t.TempDir(), "edgebench-"+tc.name)
			build := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w -X main.version=qemu-test", "-o", bin, ".")
			build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+tc.goarch, "GOARM="+tc.goarm)
			if out, err := build.CombinedOutput(); err != nil {
				t.Fatalf("build: %v\n%s", err, out)
			}
			out := emulate(t, qemu, bin, "version")
			if strings.TrimSpace(out) != "edgebench qemu-test" {
				t.Errorf("version: %q", out)
			}
			out = emulate(t, qemu, bin, "run", "-q", "-c", "2", "-d", "1s", "--format", "json", base+"/bytes/100")
			var doc struct {
				Completed, OK int64
				Errors        map[string]int64
			}
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatalf("run output: %v\n%s", err, out)
			}
			if doc.Completed == 0 || doc.OK != doc.Completed {
				t.Errorf("under qemu: completed %d ok %d errors %v", doc.Completed, doc.OK, doc.Errors)
			}
		})
	}
}

func emulate(t *testing.T, qemu, bin string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, qemu, append([]string{bin}, args...)...)
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("%s %v: %v\n%s%s", filepath.Base(bin), args, err, out, stderr)
	}
	return string(out)
}

// lookTool finds a system tool, skipping loudly when it is absent, or
// failing when CI=true (CI must install it).
func lookTool(t *testing.T, name string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	testenv.Missing(t, name+" is not installed", "apt-get install qemu-user-static")
	return ""
}
